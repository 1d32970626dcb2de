package osdtelemetry

import (
	"testing"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/result"
)

// TestOSDFigures: each OSD keeps its bench and gets the commit latencies
// the workload's `ceph osd perf` samples hold for it, in order, less the
// leading ones that repeat the figure from before the workload (unless
// none differs); an OSD no sample names keeps none; the sampler's own list
// is not changed.
func TestOSDFigures(t *testing.T) {
	osds := []result.OSDFigures{{ID: 0, Host: "a", Up: true, BenchBytesPerSec: 5e8}, {ID: 2, Host: "c", Up: true}, {ID: 7, Host: "d"}}
	ms := time.Millisecond
	samples := []ceph.PerfSample{
		{Latencies: []ceph.Latency{{OSD: 0, Commit: 8 * ms}, {OSD: 2, Commit: 800 * ms}}},
		{Latencies: []ceph.Latency{{OSD: 2, Commit: 850 * ms}, {OSD: 0, Commit: 9 * ms}}},
	}
	// before the workload osd.2 said 933 ms (the previous workload's, a
	// throttled disk): its first sample repeats it until Ceph refreshes.
	before := []ceph.Latency{{OSD: 0, Commit: 9 * ms}, {OSD: 2, Commit: 933 * ms}}
	samples = append([]ceph.PerfSample{{Latencies: []ceph.Latency{{OSD: 0, Commit: 9 * ms}, {OSD: 2, Commit: 933 * ms}}}}, samples...)
	got := osdFigures(osds, before, samples)
	want := map[int][]time.Duration{0: {8 * ms, 9 * ms}, 2: {800 * ms, 850 * ms}, 7: nil}
	for _, o := range got {
		if len(o.Commit) != len(want[o.ID]) {
			t.Fatalf("osd.%d: commit %v, want %v", o.ID, o.Commit, want[o.ID])
		}
		for i := range o.Commit {
			if o.Commit[i] != want[o.ID][i] {
				t.Errorf("osd.%d: commit %v, want %v", o.ID, o.Commit, want[o.ID])
			}
		}
	}
	if got[0].BenchBytesPerSec != 5e8 || got[2].Host != "d" {
		t.Errorf("facts lost: %+v", got)
	}
	if osds[0].Commit != nil {
		t.Errorf("the sampler's list changed: %+v", osds[0])
	}
	if again := osdFigures(osds, nil, nil); again[0].Commit != nil {
		t.Errorf("a workload without samples kept another's: %+v", again[0])
	}
	steady := []ceph.PerfSample{{Latencies: []ceph.Latency{{OSD: 2, Commit: 933 * ms}}}, {Latencies: []ceph.Latency{{OSD: 2, Commit: 933 * ms}}}}
	if s := osdFigures(osds, before, steady); len(s[1].Commit) != 2 {
		t.Errorf("an OSD whose figure never changed lost its samples: %+v", s[1])
	}
}
