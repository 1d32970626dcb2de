package render

import (
	_ "embed"
	"fmt"
	"html"
	"html/template"
	"io"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

//go:embed report.html.tmpl
var pageTemplate string

var page = template.Must(template.New("report").Parse(pageTemplate))

// ReportHTML writes the report as one self-contained HTML page: inline
// CSS, inline SVG charts, no script and nothing fetched, so it opens
// offline and on a phone.
func ReportHTML(w io.Writer, r *Report) error {
	body := writeHTMLBody(r.doc())
	return page.Execute(w, struct {
		Title string
		Body  template.HTML
	}{r.title(), template.HTML(body)})
}

func writeHTMLBody(d *doc) string {
	var b strings.Builder
	open := false
	closeSection := func() {
		if open {
			b.WriteString("</section>\n")
			open = false
		}
	}
	for _, blk := range d.blocks {
		switch x := blk.(type) {
		case heading:
			if x.level == 1 {
				fmt.Fprintf(&b, "<h1>%s</h1>\n", esc(x.text))
				continue
			}
			closeSection()
			fmt.Fprintf(&b, "<section>\n<h2>%s</h2>\n", esc(x.text))
			open = true
		case para:
			fmt.Fprintf(&b, "<p>%s</p>\n", esc(x.text))
		case list:
			htmlList(&b, x)
		case verdicts:
			htmlVerdicts(&b, x.list)
		case matrix:
			x.html(&b)
		case nodeCharts:
			x.html(&b)
		case sweepCharts:
			x.html(&b)
		case environments:
			htmlEnvironments(&b, x.list)
		case table:
			htmlTable(&b, x)
		case bars:
			fmt.Fprintf(&b, "<figure>\n%s\n<figcaption>%s</figcaption>\n</figure>\n", barChartSVG(x.title, x.items), esc(x.title))
		case latencyCharts:
			closeSection()
			htmlLatency(&b, x.charts)
		}
	}
	closeSection()
	return b.String()
}

func esc(s string) string { return html.EscapeString(s) }

func htmlList(b *strings.Builder, l list) {
	b.WriteString("<ul>\n")
	for _, it := range l.items {
		fmt.Fprintf(b, `<li class="%s">%s`, it.tone, esc(it.text))
		if len(it.sub) > 0 {
			b.WriteString("<ul>")
			for _, s := range it.sub {
				fmt.Fprintf(b, "<li>%s</li>", esc(s))
			}
			b.WriteString("</ul>")
		}
		b.WriteString("</li>\n")
	}
	b.WriteString("</ul>\n")
}

func htmlTable(b *strings.Builder, t table) {
	b.WriteString(`<div class="scroll"><table>` + "\n<thead><tr>")
	for i, h := range t.head {
		fmt.Fprintf(b, `<th class="%s">%s</th>`, align(t, i), esc(h))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for ri, row := range t.rows {
		b.WriteString("<tr>")
		for i, c := range row {
			cls := align(t, i)
			if ri < len(t.tones) && i < len(t.tones[ri]) && t.tones[ri][i] != "" {
				cls += " " + t.tones[ri][i]
			}
			fmt.Fprintf(b, `<td class="%s">%s</td>`, strings.TrimSpace(cls), esc(c))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
}

func align(t table, i int) string {
	if i < len(t.right) && t.right[i] {
		return "num"
	}
	return ""
}

func htmlVerdicts(b *strings.Builder, vs []*analysis.Verdict) {
	for _, v := range vs {
		if p, ok := analysis.PlacementOf(v); ok {
			htmlPlacement(b, v, p) // placement.go
			continue
		}
		fmt.Fprintf(b, `<div class="verdict %s"><h3><span class="badge">%s</span> %s</h3>`+"\n", v.Status, strings.ToUpper(string(v.Status)), esc(v.For))
		fmt.Fprintf(b, "<p>%s</p>\n", esc(v.Summary))
		b.WriteString(`<ul class="checks">` + "\n")
		for _, ch := range v.Checks {
			fmt.Fprintf(b, `<li class="check"><span class="badge %s">%s</span> <b>%s</b>: %s <strong>%s</strong>`,
				ch.Status, strings.ToUpper(string(ch.Status)), esc(ch.Subject), esc(ch.Name), esc(ch.Display))
			if ch.Detail != "" {
				fmt.Fprintf(b, ` <span class="detail">%s</span>`, esc(ch.Detail))
			}
			fmt.Fprintf(b, `<div class="small">Threshold: %s. Source: %s.</div></li>`+"\n", esc(ch.Threshold), esc(ch.Source))
		}
		b.WriteString("</ul>\n")
		if len(v.Advice) > 0 {
			htmlList(b, list{items: toItems(v.Advice)})
		}
		b.WriteString("</div>\n")
	}
}

func toItems(ss []string) []listItem {
	var out []listItem
	for _, s := range ss {
		out = append(out, listItem{text: s})
	}
	return out
}

var percentileLabels = map[string]string{
	result.MetricLatP50: "p50", result.MetricLatP90: "p90", result.MetricLatP99: "p99", result.MetricLatP999: "p99.9",
}

// htmlLatency draws, per round and workload, each group's latency by
// percentile.
func htmlLatency(b *strings.Builder, lc []analysis.LatencyChart) {
	if len(lc) == 0 {
		return
	}
	b.WriteString("<section>\n<h2>Latency percentiles</h2>\n")
	for _, ch := range lc {
		var axis []string
		for _, m := range ch.Metrics {
			axis = append(axis, percentileLabels[m])
		}
		var ss []series
		for _, ls := range ch.Series {
			s := series{name: ls.Name}
			for _, cell := range ls.Points {
				s.points = append(s.points, point{p: percentileLabels[cell.Metric], value: cell.Mean})
			}
			ss = append(ss, s)
		}
		title := fmt.Sprintf("%s · %s: completion latency by percentile (log scale, lower is better)", ch.Workload, ch.Round)
		fmt.Fprintf(b, "<figure>\n%s\n<figcaption>%s</figcaption>\n<ul class=\"legend\">", percentileChartSVG(title, axis, ss), esc(title))
		for i, s := range ss {
			fmt.Fprintf(b, `<li><span class="swatch" style="background:%s"></span>%s</li>`, palette[i%len(palette)], esc(s.name))
		}
		b.WriteString("</ul>\n</figure>\n")
	}
	b.WriteString("</section>\n")
}

func htmlEnvironments(b *strings.Builder, envs []analysis.Environment) {
	for _, e := range envs {
		fmt.Fprintf(b, `<div class="env"><h3>%s</h3>`, esc(e.Target))
		if e.Group != e.Target {
			fmt.Fprintf(b, `<p class="small">group %s</p>`, esc(e.Group))
		}
		fmt.Fprintf(b, `<dl><dt>runs</dt><dd>%s</dd>`, esc(strings.Join(e.Runs, ", ")))
		keys := make([]string, 0, len(e.Labels))
		for k := range e.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(b, `<dt>%s</dt><dd>%s</dd>`, esc(k), esc(e.Labels[k]))
		}
		b.WriteString("</dl></div>\n")
	}
}
