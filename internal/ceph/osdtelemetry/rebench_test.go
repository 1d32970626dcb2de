package osdtelemetry

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
)

// benches answers `ceph tell osd.N bench` with real Ceph's output
// (testdata): each OSD's answers in turn, counting the calls.
type benches struct {
	mu      sync.Mutex
	answers map[string][]string // osd.N -> files
	calls   map[string]int
}

func (b *benches) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	b.mu.Lock()
	defer b.mu.Unlock()
	osd := ""
	for _, a := range args {
		if strings.HasPrefix(a, "osd.") {
			osd = a
		}
	}
	n := b.calls[osd]
	b.calls[osd]++
	files := b.answers[osd]
	return execx.Local{}.Command(ctx, "cat", filepath.Join("testdata", files[min(n, len(files)-1)]))
}

// TestRebenchSlow: an OSD whose first bench is under a third of the
// others' is benched again and keeps the better figure (a busy host's
// noise goes); one slow both times stays slow; the others are benched
// once.
func TestRebenchSlow(t *testing.T) {
	const fast, slow = "osd-bench-fast.json", "osd-bench-slow.json"
	b := &benches{calls: map[string]int{}, answers: map[string][]string{
		"osd.0": {fast}, "osd.1": {slow, fast}, "osd.2": {slow, slow},
	}}
	cl := ceph.Client{Cmder: b}
	var figs []result.OSDFigures
	for id := range 3 {
		f := result.OSDFigures{ID: id, Up: true}
		f.BenchBytesPerSec, f.BenchError = bench(context.Background(), cl, id)
		if f.BenchError != "" {
			t.Fatal(f.BenchError)
		}
		figs = append(figs, f)
	}
	rebenchSlow(context.Background(), cl, figs)
	if figs[1].BenchBytesPerSec < 3e8 || figs[2].BenchBytesPerSec > 3e7 || figs[0].BenchBytesPerSec < 3e8 {
		t.Errorf("benches %.0f, %.0f, %.0f MB/s: want osd.1 fast on its second bench, osd.2 slow", figs[0].BenchBytesPerSec/1e6, figs[1].BenchBytesPerSec/1e6, figs[2].BenchBytesPerSec/1e6)
	}
	if b.calls["osd.0"] != 1 || b.calls["osd.1"] != 2 || b.calls["osd.2"] != 2 {
		t.Errorf("bench calls %v: want osd.0 once, osd.1 and osd.2 twice", b.calls)
	}
}

// TestMarkDown: an OSD Ceph's map lists as down when a workload ends ran
// it down, whatever the sampler saw when it was made; the others keep
// their state.
func TestMarkDown(t *testing.T) {
	figs := []result.OSDFigures{{ID: 0, Up: true}, {ID: 1, Up: true}, {ID: 2, Up: false}}
	markDown(figs, []ceph.OSD{{ID: 0, Up: true}, {ID: 1, Up: false}, {ID: 2, Up: true}, {ID: 9, Up: false}})
	if !figs[0].Up || figs[1].Up || figs[2].Up {
		t.Errorf("figures %+v: want osd.0 up, osd.1 and osd.2 down", figs)
	}
}
