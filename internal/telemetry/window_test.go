package telemetry

import (
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestWithin(t *testing.T) {
	start := time.Date(2026, 11, 28, 8, 0, 0, 0, time.UTC)
	at := func(ms int) time.Time { return start.Add(time.Duration(ms) * time.Millisecond) }
	// A sweep step's recording: 2 s of layout and start gate with the disk
	// nearly idle, then 2 s of all clients at once with it saturated, then
	// a tail while the last client finishes.
	tel := func() *result.Telemetry {
		return &result.Telemetry{Device: "vda", Interval: 500 * time.Millisecond,
			Summary: map[string]result.Summary{result.SeriesDiskUtil: {Min: 2, Mean: 40, Max: 98, Samples: 10}},
			Series: &result.TelemetrySeries{OffsetsMS: []int64{500, 1000, 1500, 2000, 2500, 3000, 3500, 4000, 4500, 5000},
				Values: map[string][]float64{
					result.SeriesDiskUtil: {2, 3, 2, 4, 96, 97, 98, 95, 30, 20},
					result.SeriesCPUBusy:  {10, 12, 11, 10, 40, 42, 41, 40, 15, 12},
				}},
			Nodes: []*result.Telemetry{{Host: "server", Series: &result.TelemetrySeries{OffsetsMS: []int64{1000, 3000},
				Values: map[string][]float64{result.SeriesNetLinkUtil: {1, 90}}}}},
		}
	}
	for _, tt := range []struct {
		name     string
		from, to time.Time
		util     result.Summary
		cpuMean  float64
		nodeLink float64 // the other node's link mean; -1: no summary
		same     bool
	}{
		{"the all-running window", at(2000), at(4000), result.Summary{Min: 95, Mean: 96.5, Max: 98, Samples: 4}, 40.75, 90, false},
		{"a sample partly outside is left out", at(1900), at(4100), result.Summary{Min: 95, Mean: 96.5, Max: 98, Samples: 4}, 40.75, 90, false},
		{"a window shorter than a sample reads the one it overlaps", at(2100), at(2400), result.Summary{Min: 96, Mean: 96, Max: 96, Samples: 1}, 40, 90, false},
		{"a window after the recording: the whole recording", at(6000), at(7000), result.Summary{Min: 2, Mean: 40, Max: 98, Samples: 10}, 0, 0, true},
		{"no window known", time.Time{}, time.Time{}, result.Summary{Min: 2, Mean: 40, Max: 98, Samples: 10}, 0, 0, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := tel()
			got := Within(in, start, tt.from, tt.to)
			if tt.same {
				if got != in {
					t.Fatalf("want the recording itself")
				}
				return
			}
			if s, _ := got.Stat(result.SeriesDiskUtil); s != tt.util {
				t.Errorf("disk util %+v, want %+v", s, tt.util)
			}
			if s, _ := got.Stat(result.SeriesCPUBusy); s.Mean != tt.cpuMean {
				t.Errorf("cpu mean %v, want %v", s.Mean, tt.cpuMean)
			}
			s, ok := got.Nodes[0].Stat(result.SeriesNetLinkUtil)
			if (tt.nodeLink < 0) == ok || (ok && s.Mean != tt.nodeLink) {
				t.Errorf("the other node's link: %+v %v, want mean %v", s, ok, tt.nodeLink)
			}
			if in.Summary[result.SeriesDiskUtil].Samples != 10 || got.Series != in.Series {
				t.Error("the recording itself was changed, or its series dropped")
			}
			// What bound it, read over the window: the disk.
			if a := Attribute(nil, got); tt.util.Mean >= DeviceUtilLimit && a.LimitedBy != LimitedByDevice {
				t.Errorf("attributed to %q (%s), want the device", a.LimitedBy, a.Evidence)
			}
		})
	}
}
