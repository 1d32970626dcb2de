package render

import (
	"bytes"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
)

// TestOSDVerdicts: the section names the result and the verdict; nothing
// at all when no OSD was named.
func TestOSDVerdicts(t *testing.T) {
	var none bytes.Buffer
	if err := OSDVerdicts(&none, nil); err != nil || none.Len() != 0 {
		t.Fatalf("no verdicts wrote %q, %v", none.String(), err)
	}
	var b bytes.Buffer
	v := analysis.ResultOSDVerdict{Target: "rbd:rbd", Workload: "seq-write", Round: "isolated",
		OSDVerdict: analysis.OSDVerdict{OSD: 2, Host: "node-3", Cause: analysis.OSDCauseDisk, Summary: "osd.2 on node-3 (vdb): 21 MB/s against 610-860 MB/s"}}
	if err := OSDVerdicts(&b, []analysis.ResultOSDVerdict{v}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Which OSD held the pool back", "rbd:rbd seq-write (isolated round): osd.2 on node-3 (vdb): 21 MB/s"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}

// TestBrickVerdicts: the section names the result and the brick.
func TestBrickVerdicts(t *testing.T) {
	var none bytes.Buffer
	if err := BrickVerdicts(&none, nil); err != nil || none.Len() != 0 {
		t.Fatalf("no verdicts wrote %q, %v", none.String(), err)
	}
	var b bytes.Buffer
	v := analysis.BrickVerdict{Target: "/mnt/gv", Workload: "seq-write", Round: "isolated", Host: "10.0.0.3", Cause: analysis.BrickCauseDown,
		Summary: "brick 10.0.0.3:/b was lost by the client during seq-write"}
	if err := BrickVerdicts(&b, []analysis.BrickVerdict{v}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Which brick held the volume back", "/mnt/gv seq-write (isolated round): brick 10.0.0.3:/b was lost"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
}
