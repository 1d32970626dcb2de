package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/analysis"
)

// OSDVerdicts writes which Ceph OSD held each result's pool back, and
// why: its disk, its host's link, or that it was down.
func OSDVerdicts(w io.Writer, vs []analysis.ResultOSDVerdict) error {
	items := make([]string, len(vs))
	for i, v := range vs {
		items[i] = verdictLine(v.Target, v.Workload, v.Round, v.Summary)
	}
	return verdictSection(w, "Which OSD held the pool back",
		"Each OSD of the pool against the others: its own disk (ceph tell osd.N bench, before the run), its commit latency while the workload ran (ceph osd perf), its host's link where that node was sampled.", items)
}

// BrickVerdicts writes which GlusterFS brick held each result back, and
// why: lost by the client, or far slower than the others.
func BrickVerdicts(w io.Writer, vs []analysis.BrickVerdict) error {
	items := make([]string, len(vs))
	for i, v := range vs {
		items[i] = verdictLine(v.Target, v.Workload, v.Round, v.Summary)
	}
	return verdictSection(w, "Which brick held the volume back",
		"Each brick of the GlusterFS volume against the others, as its FUSE client saw them during the workload: how long it waited for each brick's writes or reads, and whether it kept the brick.", items)
}

func verdictLine(target, workload, round, summary string) string {
	return fmt.Sprintf("%s %s (%s round): %s", target, workload, round, summary)
}

// verdictSection is a heading, what it compares, and one line per
// verdict; nothing at all without verdicts.
func verdictSection(w io.Writer, title, intro string, items []string) error {
	if len(items) == 0 {
		return nil
	}
	d := &doc{}
	d.h2(title)
	d.p("%s", intro)
	var l list
	for _, it := range items {
		l.items = append(l.items, listItem{text: it, tone: "bad"})
	}
	d.add(l)
	fmt.Fprintln(w)
	return writeText(w, d, false)
}
