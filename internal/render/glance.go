package render

import (
	"fmt"
	"html/template"
	"math"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
)

// The blocks here read a report at a glance: the matrix of every
// workload's main figure, the charts per Kubernetes node, and the general
// verdict as one table of subjects by use.

// matrix is the at-a-glance table: an HTML table with the rounds side by
// side under each name, and a plain table (a ROUND column) elsewhere.
type matrix struct {
	m *analysis.Matrix
}

// nodeCharts are the per-node figures: grouped bars in HTML, a table per
// chart elsewhere.
type nodeCharts struct{ charts []analysis.NodeChart }

func (matrix) isBlock()     {}
func (nodeCharts) isBlock() {}

// glanceSection adds the matrix with its heading.
func glanceSection(d *doc, v *analysis.View) {
	if v.Matrix == nil {
		return
	}
	d.h2("At a glance")
	what := "Each workload's main figure"
	if v.Comparison.Baseline != "" {
		what += ", with its share of the baseline " + v.Comparison.Baseline
	}
	d.p("%s. %s marks the best; ! an unstable figure; ? an outlier among its peers (see Outliers). The detail per workload follows.", what, Star)
	d.add(matrix{v.Matrix})
}

// nodeSection adds the per-node charts with their heading.
func nodeSection(d *doc, v *analysis.View) {
	if len(v.Nodes) == 0 {
		return
	}
	d.h2("Per node")
	d.p("Each workload's main figure on every node, per storage class: the slow node stands out. ? marks an outlier.")
	d.add(nodeCharts{v.Nodes})
}

// matrixValue is a cell's figure with its marks: "45k ★ 100%".
func matrixValue(metric string, c analysis.MatrixCell, withShare bool) string {
	if !c.Measured {
		return "-"
	}
	s := bareValue(metric, c.Value)
	if c.Best {
		s += " " + Star
	}
	if c.Unstable {
		s += "!"
	}
	if c.Outlier {
		s += "?"
	}
	if withShare {
		switch {
		case c.Efficiency != nil:
			s += " " + percent(c.Efficiency.Percent)
		case c.IsBaseline:
			s += " base"
		}
	}
	return s
}

func cellTone(c analysis.MatrixCell) string {
	switch {
	case c.Outlier:
		return "bad"
	case c.Best:
		return "best"
	case c.Unstable:
		return "warn"
	}
	return ""
}

// table is the matrix for a terminal or Markdown: a row per workload and
// round, a column per name.
func (b matrix) table() table {
	m := b.m
	t := table{head: []string{"WORKLOAD"}}
	rounds := len(m.Rounds) > 1
	if rounds {
		t.head = append(t.head, "ROUND")
	}
	t.head = append(t.head, "UNIT")
	t.head = append(t.head, m.Names...)
	for i := range t.head {
		t.right = append(t.right, i >= len(t.head)-len(m.Names))
	}
	for _, r := range m.Rows {
		for _, round := range m.Rounds {
			row := []string{r.Workload}
			tones := []string{""}
			if rounds {
				row, tones = append(row, round), append(tones, "")
			}
			row, tones = append(row, MetricLabel(r.Metric)), append(tones, "")
			for _, name := range m.Names {
				c := r.Cell(name, round)
				row = append(row, matrixValue(r.Metric, c, true))
				tones = append(tones, cellTone(c))
			}
			t.rows = append(t.rows, row)
			t.tones = append(t.tones, tones)
		}
	}
	return t
}

// html writes the matrix with each name's rounds side by side.
func (b matrix) html(sb *strings.Builder) {
	m := b.m
	rounds := len(m.Rounds) > 1
	sb.WriteString(`<div class="scroll"><table class="matrix">` + "\n<thead><tr>")
	span := ""
	if rounds {
		span = ` rowspan="2"`
	}
	fmt.Fprintf(sb, `<th%s>Workload</th><th%s>Unit</th>`, span, span)
	for _, n := range m.Names {
		if rounds {
			fmt.Fprintf(sb, `<th class="name" colspan="%d">%s</th>`, len(m.Rounds), esc(n))
		} else {
			fmt.Fprintf(sb, `<th class="num">%s</th>`, esc(n))
		}
	}
	sb.WriteString("</tr>\n")
	if rounds {
		sb.WriteString("<tr>")
		for range m.Names {
			for _, r := range m.Rounds {
				fmt.Fprintf(sb, `<th class="num round">%s</th>`, esc(r))
			}
		}
		sb.WriteString("</tr>\n")
	}
	sb.WriteString("</thead>\n<tbody>\n")
	for _, r := range m.Rows {
		fmt.Fprintf(sb, "<tr><th>%s</th><td class=\"small\">%s</td>", esc(r.Workload), esc(MetricLabel(r.Metric)))
		for _, name := range m.Names {
			for _, round := range m.Rounds {
				c := r.Cell(name, round)
				cls := strings.TrimSpace("num " + cellTone(c))
				fmt.Fprintf(sb, `<td class="%s" title="%s">%s`, cls, esc(name+" · "+round+": "+cellTitle(r.Metric, c)), esc(matrixValue(r.Metric, c, false)))
				switch {
				case c.Efficiency != nil:
					fmt.Fprintf(sb, `<span class="share">%s</span>`, esc(percent(c.Efficiency.Percent)))
				case c.IsBaseline && c.Measured:
					sb.WriteString(`<span class="share">base</span>`)
				}
				sb.WriteString("</td>")
			}
		}
		sb.WriteString("</tr>\n")
	}
	sb.WriteString("</tbody></table></div>\n")
}

// cellTitle says a cell in words, for the tooltip.
func cellTitle(metric string, c analysis.MatrixCell) string {
	if !c.Measured {
		return "not measured"
	}
	s := FormatValue(metric, c.Value)
	if c.Best {
		s += ", the best"
	}
	if c.Efficiency != nil {
		s += fmt.Sprintf(", %s of %s", percent(c.Efficiency.Percent), c.Efficiency.Baseline)
	}
	if c.Unstable {
		s += ", unstable"
	}
	if c.Outlier {
		s += ", outlier"
	}
	return s
}

// tables are the per-node charts for a terminal or Markdown: a title and
// a table of nodes by series per chart.
func (b nodeCharts) blocks() []block {
	var out []block
	for _, ch := range b.charts {
		out = append(out, para{fmt.Sprintf("%s · %s, %s, %s:", ch.Workload, ch.Round, MetricLabel(ch.Metric), direction(ch.Metric))})
		t := table{head: []string{"NODE"}, right: []bool{false}}
		for _, s := range ch.Series {
			t.head = append(t.head, s.Name)
			t.right = append(t.right, true)
		}
		for i, n := range ch.Nodes {
			row := []string{n}
			tones := []string{""}
			for _, s := range ch.Series {
				text, tn := "-", ""
				if s.Measured[i] {
					text = FormatValue(ch.Metric, s.Values[i])
					if s.Outlier[i] {
						text += "?"
						tn = "bad"
					}
				}
				row, tones = append(row, text), append(tones, tn)
			}
			t.rows = append(t.rows, row)
			t.tones = append(t.tones, tones)
		}
		out = append(out, t)
	}
	return out
}

// html draws each chart as grouped bars: a row per node, a bar per series.
func (b nodeCharts) html(sb *strings.Builder) {
	for _, ch := range b.charts {
		title := fmt.Sprintf("%s · %s: %s per node, %s", ch.Workload, ch.Round, MetricLabel(ch.Metric), direction(ch.Metric))
		fmt.Fprintf(sb, "<figure>\n%s\n<figcaption>%s</figcaption>\n", nodeBarsSVG(title, ch), esc(title))
		if len(ch.Series) > 1 {
			sb.WriteString(`<ul class="legend">`)
			for i, s := range ch.Series {
				fmt.Fprintf(sb, `<li><span class="swatch" style="background:%s"></span>%s</li>`, palette[i%len(palette)], esc(s.Name))
			}
			sb.WriteString("</ul>\n")
		}
		sb.WriteString("</figure>\n")
	}
}

// nodeBarsSVG draws a node's label, then one bar per series measured on
// it, all on one scale.
func nodeBarsSVG(title string, ch analysis.NodeChart) template.HTML {
	const nodeLabelH, seriesBarH, seriesGap, nodeGap = 16.0, 11.0, 3.0, 10.0
	maxV := 0.0
	rows := 0
	for i := range ch.Nodes {
		for _, s := range ch.Series {
			if s.Measured[i] {
				maxV = math.Max(maxV, s.Values[i])
				rows++
			}
		}
	}
	height := float64(len(ch.Nodes))*(nodeLabelH+nodeGap) + float64(rows)*(seriesBarH+seriesGap) + 4
	var sb strings.Builder
	fmt.Fprintf(&sb, `<svg class="chart" data-chart="nodes" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s" preserveAspectRatio="xMinYMin meet">`,
		svgWidth, height, esc(title))
	fmt.Fprintf(&sb, `<title>%s</title>`, esc(title))
	y := 2.0
	for i, n := range ch.Nodes {
		fmt.Fprintf(&sb, `<text class="label" x="0" y="%.1f">%s</text>`, y+12, esc(shorten(n, 56)))
		y += nodeLabelH
		for si, s := range ch.Series {
			if !s.Measured[i] {
				continue
			}
			w := 0.0
			if maxV > 0 {
				w = math.Max(s.Values[i]/maxV*(svgWidth-valueSpace), 1)
			}
			value := FormatValue(ch.Metric, s.Values[i])
			if s.Outlier[i] {
				value += " (outlier)"
			}
			fmt.Fprintf(&sb, `<g><title>%s on %s: %s</title>`, esc(s.Name), esc(n), esc(value))
			fmt.Fprintf(&sb, `<rect x="0" y="%.1f" width="%.1f" height="%.0f" rx="2" fill="%s"></rect>`, y, w, seriesBarH, palette[si%len(palette)])
			fmt.Fprintf(&sb, `<text class="value" x="%.1f" y="%.1f">%s</text></g>`, w+5, y+9.5, esc(value))
			y += seriesBarH + seriesGap
		}
		y += nodeGap
	}
	sb.WriteString(`</svg>`)
	return template.HTML(sb.String())
}
