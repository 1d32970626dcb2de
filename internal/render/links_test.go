package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
)

func TestExplained(t *testing.T) {
	l := &analysis.Link{From: "n1", To: "n3", SendBytesPerSec: 117e6, IdleP50: 50 * time.Microsecond, BusyP50: 1100 * time.Microsecond}
	links := []analysis.LinkMatrix{{Network: "host", Nodes: []string{"n1", "n3"}, Cells: [][]*analysis.Link{{nil, l}, {nil, nil}}}}
	bs := []analysis.Breakdown{{Target: "k8s:netfs@n1", Workload: "seq-write", Round: "isolated", Direction: "write",
		Summary: "seq-write 110 MB/s: local disk 300 MB/s; link n1 -> n3 117 MB/s; ceiling 117 MB/s; limited by network, 94% of the ceiling",
		Steps: []analysis.BreakdownStep{{Name: analysis.PartLocalDisk, LeftBPS: 300e6}, {Name: analysis.PartLink, LeftBPS: 117e6, LostBPS: 183e6},
			{Name: analysis.PartRest, LeftBPS: 110e6, LostBPS: 7e6}}}}
	var out bytes.Buffer
	if err := Explained(&out, links, bs); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{"117 MB/s, 50 µs -> 1.1 ms", "limited by network, 94%", "local disk", "183 MB/s less", "7 MB/s to the storage engine"} {
		if !strings.Contains(text, want) {
			t.Errorf("show's text lacks %q:\n%s", want, text)
		}
	}
	d := &doc{}
	explainSection(d, links, bs)
	html := writeHTMLBody(d)
	if strings.Count(html, "<svg") != 1 || !strings.Contains(html, "Links between nodes") {
		t.Errorf("HTML: want one chart per breakdown and the matrix:\n%s", html)
	}
}
