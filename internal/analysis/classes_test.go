package analysis

import (
	"math"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func classFigures(run, class, round, workload string, iops, bw, p99 float64) result.Figures {
	f := result.Figures{RunID: run, Round: round, Workload: workload, Labels: map[string]string{},
		Values: make([]float64, len(result.Metrics))}
	if class != "" {
		result.LabelStorageClass.Set(f.Labels, class)
	}
	for i := range f.Values {
		f.Values[i] = math.NaN()
	}
	for m, v := range map[string]float64{result.MetricIOPS: iops, result.MetricBW: bw, result.MetricLatP99: p99} {
		if v > 0 {
			f.Values[result.MetricIndex(m)] = v
		}
	}
	return f
}

func TestClassFigures(t *testing.T) {
	iso := result.RoundIsolated
	got := ClassFigures([]result.Figures{
		classFigures("r1", "fast", iso, "rand-read", 1000, 4e6, 2e6),
		classFigures("r3", "fast", iso, "rand-read", 3000, 12e6, 1e6),
		classFigures("r2", "fast", iso, "rand-read", 2000, 8e6, 0), // no p99
		classFigures("r2", "fast", iso, "rand-read", 4000, 16e6, 4e6),
		classFigures("r2", "fast", iso, "fsync", 0, 0, 5e5),
		classFigures("r9", "fast", result.RoundParallel, "rand-read", 10, 1, 1), // other rounds do not describe the class alone
		classFigures("r9", "", iso, "rand-read", 10, 1, 1),                      // no class
		classFigures("r1", "slow", iso, "rand-read", 100, 4e5, 9e6),
	})
	want := map[string][]ClassFigure{
		"fast": {
			{Workload: "fsync", Results: 1, LatencyP99: 500 * time.Microsecond, LastRun: "r2"},
			{Workload: "rand-read", Results: 4, IOPS: 2500, BytesPerSec: 10e6, LatencyP99: 2 * time.Millisecond, LastRun: "r3"},
		},
		"slow": {{Workload: "rand-read", Results: 1, IOPS: 100, BytesPerSec: 4e5, LatencyP99: 9 * time.Millisecond, LastRun: "r1"}},
	}
	if len(got) != len(want) {
		t.Fatalf("classes %v", got)
	}
	for class, figs := range want {
		if len(got[class]) != len(figs) {
			t.Fatalf("%s: %+v", class, got[class])
		}
		for i := range figs {
			if got[class][i] != figs[i] {
				t.Errorf("%s[%d] = %+v, want %+v", class, i, got[class][i], figs[i])
			}
		}
	}
}
