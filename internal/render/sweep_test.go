package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
)

// sweepFixture is the kbench curve: flat after four clients, a failed
// step at eight.
func sweepFixture() analysis.SweepView {
	ms := time.Millisecond
	steps := []analysis.SweepStep{
		{Clients: 1, IOPS: 10700, BytesPerSec: 43.8e6, P99: ms, ClientMinIOPS: 10700, ClientMaxIOPS: 10700},
		{Clients: 2, IOPS: 19000, BytesPerSec: 77.8e6, P99: 1200 * time.Microsecond, ClientMinIOPS: 9400, ClientMaxIOPS: 9600, StartSpread: 3 * ms},
		{Clients: 4, IOPS: 21300, BytesPerSec: 87.2e6, P99: 2 * ms, ClientMinIOPS: 5100, ClientMaxIOPS: 5500, StartSpread: 4 * ms, LimitedBy: "device"},
		{Clients: 8, Unusable: "failed: client 7: error 5 (Input/output error)"},
		{Clients: 16, IOPS: 21500, BytesPerSec: 88e6, P99: 6 * ms, ClientMinIOPS: 1200, ClientMaxIOPS: 1500, StartSpread: 9 * ms, LimitedBy: "device"},
	}
	return analysis.SweepView{RunID: "20261128-010000-0001", Target: "/mnt/ssd", Workload: "rand-read-4k-qd1", Steps: steps, Knee: analysis.FindKnee(steps)}
}

func TestSweepSection(t *testing.T) {
	var b bytes.Buffer
	if err := SweepSection(&b, []analysis.SweepView{sweepFixture()}); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep.txt", b.Bytes())
}

func TestSweepSVG(t *testing.T) {
	golden(t, "sweep.svg", []byte(SweepSVG(sweepFixture())))
	if got := SweepSVG(analysis.SweepView{}); got != "" {
		t.Errorf("an empty sweep draws %q", got)
	}
}

// TestSweepDoc is the sweeps' section of compare and report: a table and
// the knee in text and Markdown, the chart in HTML.
func TestSweepDoc(t *testing.T) {
	d := &doc{}
	sweepDocSection(d, []analysis.SweepView{sweepFixture()})
	var text, md bytes.Buffer
	if err := writeText(&text, d, false); err != nil {
		t.Fatal(err)
	}
	if err := writeMarkdown(&md, d); err != nil {
		t.Fatal(err)
	}
	golden(t, "sweep-doc.txt", text.Bytes())
	golden(t, "sweep-doc.md", md.Bytes())
	golden(t, "sweep-doc.html", []byte(writeHTMLBody(d)))
	none := &doc{}
	sweepDocSection(none, nil)
	if len(none.blocks) != 0 {
		t.Errorf("no sweeps still add %d blocks", len(none.blocks))
	}
}
