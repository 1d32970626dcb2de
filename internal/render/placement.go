package render

import (
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
)

// The general verdict says where each group fits; shown as one table of
// subjects by use rather than a paragraph per pair. Other verdicts keep
// their list of checks.

// useHeads are the placement table's short column heads.
var useHeads = map[string]string{analysis.UseReadHeavy: "READ-HEAVY", analysis.UseDatabases: "DATABASES",
	analysis.UseCICaches: "CI CACHES", analysis.UseLogs: "LOGS", analysis.UseEtcd: "ETCD"}

func useHead(name string) string {
	if h, ok := useHeads[name]; ok {
		return h
	}
	return strings.ToUpper(name)
}

// verdictBlocks are the verdicts for a terminal or Markdown: the general
// verdict as its placement table with the thresholds once, every other
// verdict as a list item with its checks.
func verdictBlocks(vs []*analysis.Verdict) []block {
	var out []block
	var pending []*analysis.Verdict
	flush := func() {
		if len(pending) > 0 {
			out = append(out, verdictList(pending))
			pending = nil
		}
	}
	for _, v := range vs {
		p, ok := analysis.PlacementOf(v)
		if !ok {
			pending = append(pending, v)
			continue
		}
		flush()
		out = append(out, list{items: []listItem{{text: fmt.Sprintf("%s: %s. Where each fits, by use (good, acceptable, avoid; - not measured):",
			v.For, strings.ToUpper(string(v.Status))), tone: tone(v.Status)}}})
		out = append(out, placementTable(p))
		out = append(out, placementNotes(p, v))
	}
	flush()
	return out
}

func placementTable(p *analysis.Placement) table {
	t := table{head: []string{"STORAGE"}, right: []bool{false}}
	for _, u := range p.Uses {
		t.head = append(t.head, useHead(u.Name))
		t.right = append(t.right, false)
	}
	for si, s := range p.Subjects {
		row, tones := []string{s}, []string{""}
		for _, u := range p.Uses {
			c := u.Cells[si]
			text := c.Rating
			if text == "" {
				text = "-"
			}
			row, tones = append(row, text), append(tones, tone(c.Status))
		}
		t.rows = append(t.rows, row)
		t.tones = append(t.tones, tones)
	}
	return t
}

// placementNotes states each use's thresholds once, their source once
// when shared, the other checks and the advice.
func placementNotes(p *analysis.Placement, v *analysis.Verdict) list {
	var l list
	sources := map[string]bool{}
	for _, u := range p.Uses {
		sources[u.Source] = true
	}
	for _, u := range p.Uses {
		s := u.Name + ": " + u.Threshold + "."
		if len(sources) > 1 {
			s += " Source: " + u.Source + "."
		}
		l.items = append(l.items, listItem{text: s})
	}
	if len(sources) == 1 && len(p.Uses) > 0 {
		l.items = append(l.items, listItem{text: "Source: " + p.Uses[0].Source + "."})
	}
	for _, ch := range p.Other {
		l.items = append(l.items, listItem{text: checkText(ch), tone: tone(ch.Status)})
	}
	for _, a := range v.Advice {
		l.items = append(l.items, listItem{text: a})
	}
	return l
}

// checkText is one check in a line.
func checkText(ch analysis.Check) string {
	s := fmt.Sprintf("%s: %s %s [%s]", ch.Subject, ch.Name, ch.Display, strings.ToUpper(string(ch.Status)))
	if ch.Detail != "" {
		s += " " + ch.Detail + "."
	}
	return s + " Threshold: " + ch.Threshold + ". Source: " + ch.Source + "."
}

// htmlPlacement writes the general verdict's card: the table with a badge
// per cell (the figures behind it on hover and in the details below), the
// thresholds once, then the other checks.
func htmlPlacement(b *strings.Builder, v *analysis.Verdict, p *analysis.Placement) {
	fmt.Fprintf(b, `<div class="verdict %s"><h3><span class="badge">%s</span> %s: where each fits</h3>`+"\n", v.Status, strings.ToUpper(string(v.Status)), esc(v.For))
	b.WriteString(`<div class="scroll"><table class="placement">` + "\n<thead><tr><th></th>")
	for _, u := range p.Uses {
		fmt.Fprintf(b, `<th>%s</th>`, esc(u.Name))
	}
	b.WriteString("</tr></thead>\n<tbody>\n")
	for si, s := range p.Subjects {
		fmt.Fprintf(b, "<tr><th>%s</th>", esc(s))
		for _, u := range p.Uses {
			c := u.Cells[si]
			if c.Rating == "" {
				b.WriteString(`<td class="small" title="not measured">-</td>`)
				continue
			}
			fmt.Fprintf(b, `<td title="%s"><span class="badge %s">%s</span></td>`, esc(c.Detail), c.Status, esc(c.Rating))
		}
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table></div>\n")
	notes := placementNotes(p, v)
	b.WriteString(`<ul class="small">` + "\n")
	for _, it := range notes.items {
		fmt.Fprintf(b, `<li class="%s">%s</li>`+"\n", it.tone, esc(it.text))
	}
	b.WriteString("</ul>\n<details><summary>The figures behind each rating</summary>\n<ul class=\"small\">\n")
	for si, s := range p.Subjects {
		for _, u := range p.Uses {
			if c := u.Cells[si]; c.Rating != "" {
				fmt.Fprintf(b, "<li><b>%s</b>, %s: %s. %s</li>\n", esc(s), esc(u.Name), esc(c.Rating), esc(c.Detail))
			}
		}
	}
	b.WriteString("</ul>\n</details>\n</div>\n")
}
