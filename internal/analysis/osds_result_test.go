package analysis

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// TestOSDVerdicts reads the OSDs an RBD target's telemetry stored: a
// throttled disk (bench and commit latency far off), an OSD that was down,
// a host whose sampled link ran full while its disk kept up, and nothing
// named when the OSDs agree or the result failed.
func TestOSDVerdicts(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	healthy := []result.OSDFigures{
		{ID: 0, Host: "node-1", Device: "vdb", Up: true, BenchBytesPerSec: 610e6, Commit: ms(8, 9)},
		{ID: 1, Host: "node-2", Device: "vdb", Up: true, BenchBytesPerSec: 860e6, Commit: ms(8, 8)},
		{ID: 2, Host: "node-3", Device: "vdb", Up: true, BenchBytesPerSec: 700e6, Commit: ms(9, 9)},
	}
	with := func(i int, f func(*result.OSDFigures)) []result.OSDFigures {
		out := append([]result.OSDFigures(nil), healthy...)
		f(&out[i])
		return out
	}
	res := func(osds []result.OSDFigures, nodes ...*result.Telemetry) result.Result {
		return result.Result{Target: "rbd:rbd", Workload: "seq-write", Round: result.RoundIsolated, Status: result.StatusComplete,
			Telemetry: &result.Telemetry{OSDs: osds, Nodes: nodes}}
	}
	busyNode := func(host string, mbps float64) *result.Telemetry {
		return &result.Telemetry{Host: host, LinkBytesPerSec: 12.5e6,
			Totals: result.TelemetryTotals{Elapsed: 10 * time.Second, NetRxBytes: int64(mbps * 1e6 * 10)}}
	}
	tests := []struct {
		name  string
		r     result.Result
		want  []string // "osd cause" per verdict
		words string
	}{
		{"healthy", res(healthy), nil, ""},
		{"slow disk", res(with(2, func(o *result.OSDFigures) { o.BenchBytesPerSec, o.Commit = 21e6, ms(858, 840) })),
			[]string{"2 disk"}, "osd.2 on node-3 (vdb): 21 MB/s against 610-860 MB/s"},
		{"down", res(with(1, func(o *result.OSDFigures) { o.Up, o.BenchBytesPerSec, o.Commit = false, 0, nil })),
			[]string{"1 down"}, "osd.1 on node-2 (vdb) was down during seq-write"},
		{"slow link", res(healthy, busyNode("node-1", 3), busyNode("node-2", 3), busyNode("node-3", 11.8)),
			[]string{"2 link"}, "its link carried 11.8 MB/s of 12.5 MB/s"},
		{"slow link by round trip", res(func() []result.OSDFigures {
			o := append([]result.OSDFigures(nil), healthy...)
			o[0].RTT, o[1].RTT, o[2].RTT = 200*time.Microsecond, 300*time.Microsecond, 6*time.Millisecond
			return o
		}()), []string{"2 link"}, "a connection to it took 6.0 ms against 0.2-0.3 ms for the others during seq-write: its link is full"},
		{"a bench off by four, commit in line", res(with(1, func(o *result.OSDFigures) { o.BenchBytesPerSec, o.Commit = 257e6, ms(39, 39, 39) })), nil, ""},
		{"a bench off by four, commit far up", res(with(1, func(o *result.OSDFigures) { o.BenchBytesPerSec, o.Commit = 200e6, ms(40, 41, 40) })),
			[]string{"1 disk"}, "200 MB/s against 610-700 MB/s"},
		{"round trips in line", res(func() []result.OSDFigures {
			o := append([]result.OSDFigures(nil), healthy...)
			o[0].RTT, o[1].RTT, o[2].RTT = 200*time.Microsecond, 300*time.Microsecond, 900*time.Microsecond
			return o
		}()), nil, ""},
		{"failed result", func() result.Result {
			r := res(with(2, func(o *result.OSDFigures) { o.BenchBytesPerSec = 1e6 }))
			r.Status = result.StatusFailed
			return r
		}(), nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := OSDVerdicts([]result.Result{tt.r})
			var got []string
			for _, v := range vs {
				got = append(got, strings.Join([]string{strconv.Itoa(v.OSD), v.Cause}, " "))
				if v.Target != "rbd:rbd" || v.Workload != "seq-write" {
					t.Errorf("verdict on %s %s", v.Target, v.Workload)
				}
			}
			if strings.Join(got, ",") != strings.Join(tt.want, ",") {
				t.Fatalf("verdicts %v, want %v: %+v", got, tt.want, vs)
			}
			if tt.words != "" && !strings.Contains(vs[0].Summary, tt.words) {
				t.Errorf("summary %q, want %q in it", vs[0].Summary, tt.words)
			}
		})
	}
}
