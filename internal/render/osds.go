package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/analysis"
)

// OSDVerdicts writes which Ceph OSD held each result's pool back, and
// why: its disk, its host's link, or that it was down.
func OSDVerdicts(w io.Writer, vs []analysis.ResultOSDVerdict) error {
	if len(vs) == 0 {
		return nil
	}
	d := &doc{}
	d.h2("Which OSD held the pool back")
	d.p("Each OSD of the pool against the others: its own disk (ceph tell osd.N bench, before the run), its commit latency while the workload ran (ceph osd perf), its host's link where that node was sampled.")
	var l list
	for _, v := range vs {
		l.items = append(l.items, listItem{text: fmt.Sprintf("%s %s (%s round): %s", v.Target, v.Workload, v.Round, v.Summary), tone: "bad"})
	}
	d.add(l)
	fmt.Fprintln(w)
	return writeText(w, d, false)
}
