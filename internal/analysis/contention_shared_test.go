package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestContentionSharedOf(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	osds := func(commit [3]float64, rtt [3]float64) *result.Telemetry {
		tm := &result.Telemetry{}
		for i := range 3 {
			tm.OSDs = append(tm.OSDs, result.OSDFigures{ID: i, Host: "node-" + string(rune('1'+i)), Up: true,
				Commit: []time.Duration{ms(commit[i]), ms(commit[i])}, RTT: ms(rtt[i])})
		}
		return tm
	}
	quiet := osds([3]float64{5, 6, 7}, [3]float64{0.2, 0.2, 0.3})
	bricks := func(w, rtt float64) *result.Telemetry {
		return &result.Telemetry{Bricks: []result.BrickFigures{
			{Host: "10.0.0.2", Brick: "/b", Connected: true, Writes: 10, WriteLatency: ms(w), RTT: ms(rtt)},
			{Host: "10.0.0.3", Brick: "/b", Connected: true, Writes: 10, WriteLatency: ms(1), RTT: ms(0.2)}}}
	}
	cpu := func(busy float64, tm *result.Telemetry) *result.Telemetry {
		c := *tm
		c.Summary = map[string]result.Summary{result.SeriesCPUBusy: {Mean: busy, Max: busy, Samples: 5}}
		return &c
	}
	waits := func(tm *result.Telemetry, w ...float64) *result.Telemetry {
		c := *tm
		c.OSDs = append([]result.OSDFigures(nil), tm.OSDs...)
		for i := range c.OSDs {
			c.OSDs[i].DeviceWait = ms(w[i])
		}
		return &c
	}
	full := osds([3]float64{5, 6, 7}, [3]float64{0.2, 0.2, 0.3})
	full.LinkBytesPerSec, full.Totals = 12.5e6, result.TelemetryTotals{Elapsed: 10 * time.Second, NetTxBytes: 118e6}
	tests := []struct {
		name          string
		alone, loaded *result.Telemetry
		ok            bool
		kind          string
		words         []string
	}{
		{"the OSDs' disks", quiet, osds([3]float64{90, 120, 7}, [3]float64{0.3, 0.2, 0.3}), true, SharedDisks,
			[]string{"osd.0 on node-1's commit latency rose from 5 ms to 90 ms", "osd.1 on node-2's commit latency rose from 6 ms to 120 ms", "round trips to them stayed in line"}},
		{"a link to the OSDs", quiet, osds([3]float64{6, 7, 8}, [3]float64{0.2, 9.5, 0.3}), true, SharedLink,
			[]string{"a connection to osd.1 on node-2 took 9.5 ms against 0.2 ms alone", "disk latencies stayed in line"}},
		{"this host's link counters", quiet, full, true, SharedLink, []string{"this host's link carried 11.8 of 12.5 MB/s"}},
		{"both", quiet, osds([3]float64{90, 6, 7}, [3]float64{0.2, 9.5, 0.3}), true, SharedDisks + " and " + SharedLink,
			[]string{"they contend for the servers' disks and a link", "commit latency rose", "took 9.5 ms"}},
		{"this host's CPU", cpu(58, quiet), cpu(99.4, osds([3]float64{9, 2, 9}, [3]float64{0.1, 0.3, 0.3})), true, SharedCPU,
			[]string{"they contend for a CPU: this host's CPU ran 99% busy against 58% alone"}},
		{"a CPU busy alone already", cpu(92, quiet), cpu(99.4, osds([3]float64{9, 2, 9}, [3]float64{0.1, 0.3, 0.3})), true, "", nil},
		{"the OSDs' device waits (BlueStore's counters, not osd perf's lagging commit)", waits(quiet, 0.9, 1.1, 0.8),
			waits(osds([3]float64{40, 39, 133}, [3]float64{0.2, 0.3, 0.2}), 120, 140, 0.9), true, SharedDisks,
			[]string{"osd.0 on node-1 waited 120.0 ms for its device per transaction against 0.9 ms alone", "osd.1 on node-2 waited 140.0 ms"}},
		{"nothing rose", quiet, osds([3]float64{9, 10, 11}, [3]float64{0.3, 0.4, 0.5}), true, "", []string{"neither"}},
		{"a brick's disk", bricks(1.5, 0.2), bricks(40, 0.3), true, SharedDisks, []string{"brick 10.0.0.2:/b answered writes in 40.0 ms against 1.5 ms alone"}},
		{"a brick alone without writes is not compared", bricks(0, 0.2), bricks(40, 0.3), true, "", nil},
		{"no storage figures", &result.Telemetry{}, &result.Telemetry{}, false, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, ok := ContentionSharedOf(tt.alone, tt.loaded)
			if ok != tt.ok || c.Kind != tt.kind {
				t.Fatalf("got %+v, %v; want kind %q, %v", c, ok, tt.kind, tt.ok)
			}
			for _, w := range tt.words {
				if !strings.Contains(c.Summary, w) {
					t.Errorf("summary %q lacks %q", c.Summary, w)
				}
			}
		})
	}
}
