package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// TestBrickVerdicts: the figures of this machine's replica-3 volume (a
// brick's disk throttled, a brick capped in CPU, a brick killed), a link
// that ran full on a sampled node, reads served by one brick, and nothing
// named when the bricks agree, the operations are too few or the result
// failed.
func TestBrickVerdicts(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * 1e6) }
	brick := func(host string, lat float64) result.BrickFigures {
		return result.BrickFigures{Host: host, Brick: "/b", Connected: true, Writes: 320, WriteLatency: ms(lat)}
	}
	write := &result.Direction{Bytes: 40 << 20, BytesPerSec: 10e6}
	res := func(bs ...result.BrickFigures) result.Result {
		return result.Result{Target: "/mnt/gv", Workload: "seq-write", Round: result.RoundIsolated, Status: result.StatusComplete,
			Write: write, Telemetry: &result.Telemetry{Bricks: bs}}
	}
	down := brick("10.0.0.3", 0)
	down.Connected, down.Writes = false, 0
	few := brick("10.0.0.3", 40)
	few.Writes = 3
	reads := func(bs ...result.BrickFigures) result.Result {
		r := res(bs...)
		r.Workload, r.Write, r.Read = "seq-read", nil, &result.Direction{Bytes: 40 << 20}
		return r
	}
	reader := func(host string, n int64, lat float64) result.BrickFigures {
		return result.BrickFigures{Host: host, Brick: "/b", Connected: true, Reads: n, ReadLatency: ms(lat)}
	}
	linked := res(brick("10.0.0.1", 1.9), brick("10.0.0.2", 1.8), brick("10.0.0.3", 15.6))
	linked.Telemetry.Nodes = []*result.Telemetry{{Host: "10.0.0.3", LinkBytesPerSec: 12.5e6,
		Totals: result.TelemetryTotals{Elapsed: 4 * time.Second, NetRxBytes: 47e6}}}
	withRTT := func(rtts ...float64) result.Result {
		r := res(brick("10.0.0.1", 1.9), brick("10.0.0.2", 1.8), brick("10.0.0.3", 15.6))
		for i, v := range rtts {
			r.Telemetry.Bricks[i].RTT = ms(v)
		}
		return r
	}
	failed := res(brick("10.0.0.1", 1.9), brick("10.0.0.2", 1.8), brick("10.0.0.3", 15.6))
	failed.Status = result.StatusFailed
	tests := []struct {
		name  string
		r     result.Result
		want  string // "host cause", comma-separated
		words string
	}{
		{"disk throttled", res(brick("10.0.0.1", 1.93), brick("10.0.0.2", 1.82), brick("10.0.0.3", 15.62)), "10.0.0.3 slow",
			"brick 10.0.0.3:/b answered writes in 15.6 ms on average against 1.8-1.9 ms for the others during seq-write; every replicated write waits for it"},
		{"cpu capped", res(brick("10.0.0.1", 1.4), brick("10.0.0.2", 2.05), brick("10.0.0.3", 17.8)), "10.0.0.3 slow", "17.8 ms"},
		{"killed", res(brick("10.0.0.1", 1.4), down, brick("10.0.0.2", 1.5)), "10.0.0.3 down", "was lost by the client during seq-write"},
		{"link full", linked, "10.0.0.3 link", "its node's link carried 11.8 MB/s of 12.5 MB/s"},
		{"link by round trip", withRTT(0.2, 0.3, 38), "10.0.0.3 link", "a connection to its server took 38.0 ms against 0.2-0.3 ms for the others' meanwhile: its link is full"},
		{"disk or cpu by round trip", withRTT(0.2, 0.3, 0.25), "10.0.0.3 disk or CPU", "not its link, so its disk or its CPU"},
		{"round trip unclear", withRTT(0.2, 0.3, 1.2), "10.0.0.3 slow", "its disk, CPU or link"},
		{"healthy", res(brick("10.0.0.1", 1.9), brick("10.0.0.2", 2.4), brick("10.0.0.3", 3.1)), "", ""},
		{"under the floor", res(brick("10.0.0.1", 0.5), brick("10.0.0.2", 0.6), brick("10.0.0.3", 4)), "", ""},
		{"too few writes", res(brick("10.0.0.1", 1.9), brick("10.0.0.2", 1.8), few), "", ""},
		{"reads from one brick", reads(reader("10.0.0.1", 0, 0), reader("10.0.0.2", 320, 40), reader("10.0.0.3", 0, 0)), "", ""},
		{"slow reader", reads(reader("10.0.0.1", 100, 2), reader("10.0.0.2", 320, 40), reader("10.0.0.3", 0, 0)), "10.0.0.2 slow", "the reads it serves wait for it"},
		{"failed result", failed, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs := BrickVerdicts([]result.Result{tt.r})
			var got []string
			for _, v := range vs {
				got = append(got, v.Host+" "+v.Cause)
			}
			if strings.Join(got, ",") != tt.want {
				t.Fatalf("verdicts %v, want %q: %+v", got, tt.want, vs)
			}
			if tt.words != "" && !strings.Contains(vs[0].Summary, tt.words) {
				t.Errorf("summary %q, want %q in it", vs[0].Summary, tt.words)
			}
		})
	}
}
