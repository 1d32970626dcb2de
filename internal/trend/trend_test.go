package trend_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/trend"
	"github.com/storbench/storbench/internal/trend/trendtest"
)

// tally judges seeds 0..n-1 of h and counts verdicts and changes.
func tally(h trendtest.History, n int, check func(seed uint64, j trend.Assessment)) map[string]int {
	counts := map[string]int{}
	for seed := range uint64(n) {
		j := trend.Assess(h.Series(seed), trend.Options{})
		counts[string(j.Verdict)]++
		counts[string(j.Verdict)+"/"+string(j.Change)]++
		if check != nil {
			check(seed, j)
		}
	}
	return counts
}

func TestGeneratedHistories(t *testing.T) {
	cases := []struct {
		name    string
		history trendtest.History
		seeds   int
		// at least / at most this many assessments with the key.
		atLeast map[string]int
		atMost  map[string]int
		check   func(t *testing.T, seed uint64, j trend.Assessment)
	}{
		{
			name:    "step found at the right run",
			history: trendtest.History{Runs: 45, CV: 0.05, Step: -0.4, StepAt: 30},
			seeds:   200,
			atLeast: map[string]int{"regression/step": 200},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if j.Since == nil || j.Since.RunID != "run-030" {
					t.Errorf("seed %d: change found at %v, want run-030", seed, j.Since)
				}
				if j.BaselineRuns != 30 || j.ChangedRuns != 15 {
					t.Errorf("seed %d: baseline of %d runs, %d changed; want 30 and 15", seed, j.BaselineRuns, j.ChangedRuns)
				}
				if j.Delta > -0.35 || j.Delta < -0.45 {
					t.Errorf("seed %d: delta %.3f, want about -0.40", seed, j.Delta)
				}
			},
		},
		{
			name:    "step at 10% noise is placed within a run",
			history: trendtest.History{Runs: 50, CV: 0.10, Step: -0.4, StepAt: 40},
			seeds:   200,
			atLeast: map[string]int{"regression/step": 195},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if j.Verdict != trend.Regression {
					return
				}
				if at := j.Since.RunID; at < "run-038" || at > "run-042" {
					t.Errorf("seed %d: change found at %s, want run-040 ± 2", seed, at)
				}
			},
		},
		{
			// The "pure noise raises no alarm": 10% CV, 50 runs.
			// Measured over 10,000 seeds (bench/trend): 0.1% regressions,
			// 0.5% warnings.
			name:    "noise raises no alarm",
			history: trendtest.History{Runs: 50, CV: 0.10},
			seeds:   1000,
			atMost:  map[string]int{"regression": 4, "warning": 10},
		},
		{
			name:    "short noise raises no alarm",
			history: trendtest.History{Runs: 10, CV: 0.10},
			seeds:   1000,
			atMost:  map[string]int{"regression": 4, "warning": 10},
		},
		{
			name:    "long noise raises no alarm",
			history: trendtest.History{Runs: 200, CV: 0.10},
			seeds:   300,
			atMost:  map[string]int{"regression": 2, "warning": 5},
		},
		{
			name:    "slow drift found",
			history: trendtest.History{Runs: 50, CV: 0.05, Drift: -0.3},
			seeds:   200,
			atLeast: map[string]int{"regression": 200, "regression/drift": 180},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if j.Change == trend.Drift && (j.Delta > -0.2 || j.Delta < -0.4) {
					t.Errorf("seed %d: drift of %.3f, want about -0.30", seed, j.Delta)
				}
			},
		},
		{
			name:    "too few runs say so",
			history: trendtest.History{Runs: 5, CV: 0.10, Step: -0.5, StepAt: 4},
			seeds:   20,
			atLeast: map[string]int{"insufficient-history": 20},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if !strings.Contains(j.Message, "too little history") || j.BaselineRuns != 4 {
					t.Errorf("seed %d: %q, baseline runs %d", seed, j.Message, j.BaselineRuns)
				}
			},
		},
		{
			name:    "latency going up is a regression",
			history: trendtest.History{Runs: 40, CV: 0.05, Step: 0.5, StepAt: 30, Better: trend.LowerIsBetter},
			seeds:   100,
			atLeast: map[string]int{"regression/step": 100},
		},
		{
			name:    "latency going down is an improvement",
			history: trendtest.History{Runs: 40, CV: 0.05, Step: -0.4, StepAt: 35, Better: trend.LowerIsBetter},
			seeds:   100,
			atLeast: map[string]int{"ok": 100},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if !j.Improved || !strings.Contains(j.Message, "improve") {
					t.Errorf("seed %d: improved %v, %q", seed, j.Improved, j.Message)
				}
			},
		},
		{
			name:    "IOPS going up is an improvement",
			history: trendtest.History{Runs: 40, CV: 0.05, Step: 0.4, StepAt: 35},
			seeds:   100,
			atLeast: map[string]int{"ok/step": 100},
		},
		{
			name:    "IOPS drifting up is an improvement",
			history: trendtest.History{Runs: 50, CV: 0.05, Drift: 0.4},
			seeds:   100,
			atLeast: map[string]int{"ok": 100},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if !j.Improved {
					t.Errorf("seed %d: not improved: %s", seed, j.Message)
				}
			},
		},
		{
			name:    "a drop in the latest run only is a warning",
			history: trendtest.History{Runs: 30, CV: 0.05, Step: -0.5, StepAt: 29},
			seeds:   100,
			atLeast: map[string]int{"warning/latest": 100},
			check: func(t *testing.T, seed uint64, j trend.Assessment) {
				if j.ChangedRuns != 1 || !strings.Contains(j.Message, "only the latest run") {
					t.Errorf("seed %d: %d changed runs, %q", seed, j.ChangedRuns, j.Message)
				}
			},
		},
		{
			name:    "two runs at a new level are not yet confirmed",
			history: trendtest.History{Runs: 30, CV: 0.05, Step: -0.5, StepAt: 28},
			seeds:   100,
			atLeast: map[string]int{"warning/latest": 100},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			counts := tally(tc.history, tc.seeds, func(seed uint64, j trend.Assessment) {
				if tc.check != nil {
					tc.check(t, seed, j)
				}
			})
			for k, n := range tc.atLeast {
				if counts[k] < n {
					t.Errorf("%s: %d of %d, want at least %d (all: %v)", k, counts[k], tc.seeds, n, counts)
				}
			}
			for k, n := range tc.atMost {
				if counts[k] > n {
					t.Errorf("%s: %d of %d, want at most %d (all: %v)", k, counts[k], tc.seeds, n, counts)
				}
			}
		})
	}
}

// TestRecovered: a dip in the middle of the history that went back is not
// the current state.
func TestRecovered(t *testing.T) {
	for seed := range uint64(100) {
		s := trendtest.History{Runs: 50, CV: 0.05}.Series(seed)
		for i := 20; i < 26; i++ {
			s.Points[i].Value *= 0.5
		}
		if j := trend.Assess(s, trend.Options{}); j.Verdict != trend.OK {
			t.Errorf("seed %d: %s: %s", seed, j.Verdict, j.Message)
		}
	}
}

// TestImprovementThenDrop: after a disk got faster, it is judged against
// its new level, so falling back to the old level is a regression.
func TestImprovementThenDrop(t *testing.T) {
	for seed := range uint64(100) {
		s := trendtest.History{Runs: 60, CV: 0.05, Step: 0.5, StepAt: 20}.Series(seed)
		for i := 50; i < 60; i++ {
			s.Points[i].Value /= 1.5
		}
		j := trend.Assess(s, trend.Options{})
		if j.Verdict != trend.Regression || j.Since == nil || j.Since.RunID != "run-050" {
			t.Errorf("seed %d: %s at %v: %s", seed, j.Verdict, j.Since, j.Message)
			continue
		}
		if j.BaselineSince != s.Points[20].Time {
			t.Errorf("seed %d: baseline since %s, want the improvement at %s", seed, j.BaselineSince, s.Points[20].Time)
		}
	}
}

// TestIdenticalFigures: figures that never moved (as imports often are)
// do not turn a 0.5% wobble into an alarm: the noise has a floor.
func TestIdenticalFigures(t *testing.T) {
	s := trend.Series{Target: "t", Workload: "w", Metric: "iops"}
	for i := range 20 {
		s.Points = append(s.Points, trend.Point{Time: trendtest.DefaultStart.AddDate(0, 0, i), RunID: fmt.Sprint(i), Value: 1000})
	}
	s.Points[19].Value = 995
	j := trend.Assess(s, trend.Options{})
	if j.Verdict != trend.OK || j.Noise != trend.DefaultMinNoise {
		t.Errorf("%s, noise %v: %s", j.Verdict, j.Noise, j.Message)
	}
	s.Points[19].Value = 900
	if j := trend.Assess(s, trend.Options{}); j.Verdict != trend.Warning {
		t.Errorf("a 10%% drop: %s: %s", j.Verdict, j.Message)
	}
}

func TestMessages(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2026, 3, 2, 4, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	// Twelve runs within ±2.5% of 1000, then four at 590.
	base := []float64{1000, 1020, 980, 1010, 990, 1025, 975, 1000, 1015, 985, 1005, 995}
	series := func(after ...float64) trend.Series {
		s := trend.Series{Target: "nas-disk-2", Workload: "rand-write-4k-qd32", Metric: "iops", Round: "isolated"}
		for i, v := range append(append([]float64(nil), base...), after...) {
			s.Points = append(s.Points, trend.Point{Time: day(i), RunID: fmt.Sprintf("r%02d", i), Value: v})
		}
		return s
	}
	latency := series(1300, 1310, 1290, 1305)
	latency.Better, latency.Metric, latency.Round = trend.LowerIsBetter, "lat_p99", "parallel"
	for _, tc := range []struct {
		name   string
		series trend.Series
		want   trend.Verdict
		msg    string
	}{
		{"step", series(590, 600, 580, 595), trend.Regression,
			"rand-write-4k-qd32 on nas-disk-2: 41% below its baseline of 12 runs since 2026-03-02; 4 runs since 2026-03-14 (run r12); noise band ±6.2%"},
		{"latest", series(1002, 590), trend.Warning,
			"rand-write-4k-qd32 on nas-disk-2: 41% below its baseline of 13 runs since 2026-03-02; only the latest run (r13, 2026-03-15); noise band ±4.8%; not yet confirmed"},
		{"ok", series(1003), trend.OK,
			"rand-write-4k-qd32 on nas-disk-2: 0.3% above its baseline of 12 runs since 2026-03-02, within the noise band ±6.2%"},
		{"latency", latency, trend.Regression,
			"rand-write-4k-qd32 on nas-disk-2 (parallel round): p99 latency 30% above its baseline of 12 runs since 2026-03-02; 4 runs since 2026-03-14 (run r12); noise band ±6.2%"},
		{"few", trend.Series{Target: "sd", Workload: "seq-read", Points: series().Points[:3]}, trend.InsufficientHistory,
			"seq-read on sd: too little history to judge: 2 earlier run(s), at least 5 needed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := trend.Assess(tc.series, trend.Options{})
			if j.Verdict != tc.want || j.Message != tc.msg {
				t.Errorf("got %s: %q\nwant %s: %q", j.Verdict, j.Message, tc.want, tc.msg)
			}
		})
	}
}

func TestOptionsMinHistory(t *testing.T) {
	s := trendtest.History{Runs: 8, CV: 0.05}.Series(1)
	if j := trend.Assess(s, trend.Options{MinHistory: 10}); j.Verdict != trend.InsufficientHistory {
		t.Errorf("MinHistory 10 with 8 runs: %s", j.Verdict)
	}
	if j := trend.Assess(s, trend.Options{MinHistory: 3}); j.Verdict == trend.InsufficientHistory {
		t.Errorf("MinHistory 3 with 8 runs: %s", j.Verdict)
	}
}

func TestUnorderedAndUnusablePoints(t *testing.T) {
	s := trendtest.History{Runs: 40, CV: 0.05, Step: -0.4, StepAt: 30}.Series(3)
	want := trend.Assess(s, trend.Options{})
	// Reverse the order and add points without a usable value.
	for i, k := 0, len(s.Points)-1; i < k; i, k = i+1, k-1 {
		s.Points[i], s.Points[k] = s.Points[k], s.Points[i]
	}
	s.Points = append(s.Points, trend.Point{Time: trendtest.DefaultStart, RunID: "zero"}, trend.Point{Time: trendtest.DefaultStart.AddDate(1, 0, 0), RunID: "nan", Value: -1})
	got := trend.Assess(s, trend.Options{})
	if got.Message != want.Message || got.Runs != 40 {
		t.Errorf("got %d runs: %q\nwant %q", got.Runs, got.Message, want.Message)
	}
}

func TestSortWorstFirst(t *testing.T) {
	js := []trend.Assessment{
		{Target: "a", Verdict: trend.OK},
		{Target: "b", Verdict: trend.Regression, Delta: -0.2},
		{Target: "c", Verdict: trend.InsufficientHistory},
		{Target: "d", Verdict: trend.Regression, Delta: -0.5},
		{Target: "e", Verdict: trend.Warning, Delta: -0.3},
		{Target: "f", Verdict: trend.Regression, Delta: 0.6, Better: trend.LowerIsBetter},
	}
	trend.Sort(js)
	var got []string
	for _, j := range js {
		got = append(got, j.Target)
	}
	if strings.Join(got, "") != "fdbeca" {
		t.Errorf("order %v, want f d b e c a", got)
	}
}
