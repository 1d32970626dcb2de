// Command trend measures storbench's trend detection (internal/trend):
//
//   - the false-alarm rate on histories of pure noise (default 10% CV, 50
//     runs, 2,000 seeds): how often a regression or a warning is raised
//     where nothing changed;
//   - the smallest step found at that noise: steps of 5% to 50% placed
//     -after runs before the end, each over the same seeds; a step is found
//     when the verdict is a regression, and placed when the run named as
//     the start of the change is within 2 runs of the true one;
//   - the time to judge a database of -results results (one run per
//     night, -series target × workload series per run, latency
//     percentiles kept) built with the store API in a real SQLite file:
//     storbench.Trend over all of it.
//
// Usage: go run ./bench/trend [-seeds 2000] [-cv 0.10] [-runs 50] [-after 10] [-results 100000]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
	"github.com/storbench/storbench/internal/trend/trendtest"
)

func main() {
	seeds := flag.Int("seeds", 2000, "generated histories per case")
	cv := flag.Float64("cv", 0.10, "noise: relative standard deviation of each run")
	runs := flag.Int("runs", 50, "runs per history")
	after := flag.Int("after", 10, "runs after the step (the step is at run -runs minus -after)")
	results := flag.Int("results", 100000, "results in the database to judge (0 skips it)")
	series := flag.Int("series", 100, "target × workload series per run in that database")
	flag.Parse()

	fmt.Printf("False alarms on pure noise (%.0f%% CV, %d seeds each):\n", *cv*100, *seeds)
	for _, n := range []int{10, 20, *runs, 200} {
		c := tally(trendtest.History{Runs: n, CV: *cv}, *seeds, -1)
		fmt.Printf("  %3d runs: regressions %5.2f%%, warnings %5.2f%%, any alarm %5.2f%%\n", n,
			pct(c.regression, *seeds), pct(c.warning, *seeds), pct(c.regression+c.warning, *seeds))
	}

	at := *runs - *after
	fmt.Printf("\nSteps down at %.0f%% CV, %d runs, step at run %d (%d runs after it), %d seeds each:\n", *cv*100, *runs, at, *after, *seeds)
	fmt.Println("  step  regression  placed ±2  warning")
	smallest := math.NaN()
	for step := 0.05; step <= 0.501; step += 0.05 {
		c := tally(trendtest.History{Runs: *runs, CV: *cv, Step: -step, StepAt: at}, *seeds, at)
		found := pct(c.regression, *seeds)
		fmt.Printf("  %3.0f%%  %9.1f%%  %8.1f%%  %6.1f%%\n", step*100, found, pct(c.placed, *seeds), pct(c.warning, *seeds))
		if math.IsNaN(smallest) && found >= 90 {
			smallest = step
		}
	}
	if math.IsNaN(smallest) {
		fmt.Println("  no step up to 50% was found in 90% of histories")
	} else {
		fmt.Printf("  smallest step found in at least 90%% of histories: %.0f%%\n", smallest*100)
	}
	fmt.Printf("\nSlow drifts down over all %d runs at %.0f%% CV, %d seeds each:\n", *runs, *cv*100, *seeds)
	for _, d := range []float64{0.1, 0.2, 0.3, 0.4} {
		c := tally(trendtest.History{Runs: *runs, CV: *cv, Drift: -d}, *seeds, -1)
		fmt.Printf("  %3.0f%%: regression %5.1f%% (as a drift %5.1f%%), warning %5.1f%%\n", d*100,
			pct(c.regression, *seeds), pct(c.drift, *seeds), pct(c.warning, *seeds))
	}

	if *results > 0 {
		if err := judgeDatabase(*results, *series); err != nil {
			log.Fatal(err)
		}
	}
}

type counts struct{ regression, warning, placed, drift int }

// tally judges seeds 0..n-1 of h; placed counts regressions whose change
// starts within 2 runs of stepAt.
func tally(h trendtest.History, n, stepAt int) counts {
	var c counts
	for seed := range uint64(n) {
		s := h.Series(seed)
		j := trend.Assess(s, trend.Options{})
		switch j.Verdict {
		case trend.Regression:
			c.regression++
			if j.Change == trend.Drift {
				c.drift++
			}
			if stepAt >= 0 && j.Since != nil {
				for i, p := range s.Points {
					if p.RunID == j.Since.RunID && i >= stepAt-2 && i <= stepAt+2 {
						c.placed++
					}
				}
			}
		case trend.Warning:
			c.warning++
		}
	}
	return c
}

func pct(k, n int) float64 { return 100 * float64(k) / float64(n) }

// judgeDatabase builds a database of total results (one run per night,
// perRun series each, a tenth of the targets dropping 40% for the last
// tenth of the nights) and times storbench.Trend over all of it.
func judgeDatabase(total, perRun int) error {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "storbench-trend-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "results.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	nights := (total + perRun - 1) / perRun
	built := time.Now()
	if err := generate(ctx, st, nights, perRun, total); err != nil {
		return err
	}
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	fmt.Printf("\nJudging a database of %d results (%d runs × %d series, %.0f MiB, built in %.1f s):\n",
		total, nights, perRun, float64(fi.Size())/(1<<20), time.Since(built).Seconds())
	for i := 1; i <= 3; i++ {
		var rep *storbench.TrendReport
		wall, alloc, err := measure(func() (err error) {
			rep, err = storbench.Trend(ctx, st, storbench.TrendRequest{})
			return err
		})
		if err != nil {
			return err
		}
		fmt.Printf("  run %d: %.2f s wall, %.0f MiB allocated; %d series: %d regressions, %d warnings, %d ok\n", i, wall.Seconds(),
			float64(alloc)/(1<<20), len(rep.Series), rep.Count(trend.Regression), rep.Count(trend.Warning), rep.Count(trend.OK))
	}
	wall, _, err := measure(func() error {
		_, err := st.History(ctx, store.HistoryFilter{Status: result.StatusComplete})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("  of which reading the history (store.History): %.2f s\n", wall.Seconds())
	wall, _, err = measure(func() error {
		_, err := st.Figures(ctx, store.ResultFilter{Status: result.StatusComplete})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("  (store.Figures of the same results, unordered: %.2f s)\n", wall.Seconds())
	// One series, as a dashboard page asks for it.
	var one *storbench.TrendReport
	wall, _, err = measure(func() (err error) {
		one, err = storbench.Trend(ctx, st, storbench.TrendRequest{Target: "node-00:/dev/sda", Workload: workloads[0]})
		return err
	})
	if err != nil {
		return err
	}
	fmt.Printf("  one series (--target node-00:/dev/sda --workload %s, %d runs): %.3f s\n", workloads[0], one.Series[0].Runs, wall.Seconds())
	return nil
}

func measure(f func() error) (time.Duration, uint64, error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	err := f()
	wall := time.Since(start)
	runtime.ReadMemStats(&after)
	return wall, after.TotalAlloc - before.TotalAlloc, err
}

var workloads = []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32", "rand-read-4k-qd1"}

// generate stores the nights as runs of one import transaction (the
// store's AddRun), each result with 13 latency percentiles as fio gives.
func generate(ctx context.Context, st store.Store, nights, perRun, total int) error {
	start := time.Date(2023, 1, 1, 3, 0, 0, 0, time.UTC)
	targets := (perRun + len(workloads) - 1) / len(workloads)
	histories := make([]trend.Series, perRun)
	for i := range histories {
		h := trendtest.History{Runs: nights, Level: 1000 + 100*float64(i), CV: 0.05}
		if (i/len(workloads))%10 == 0 {
			h.Step, h.StepAt = -0.4, nights-nights/10
		}
		histories[i] = h.Series(uint64(i))
	}
	var w *store.ImportWriter
	stored := 0
	for night := range nights {
		at := start.AddDate(0, 0, night)
		run := &result.Run{ID: result.NewRunID(at, uint16(night)), Suite: "standard", Source: "storbench", Status: result.StatusComplete,
			Started: at, Finished: at.Add(time.Hour)}
		if w == nil {
			var err error
			if w, err = st.BeginImport(ctx, run, nil); err != nil {
				return err
			}
			defer w.Abort()
		} else if err := w.AddRun(ctx, run); err != nil {
			return err
		}
		for i := 0; i < perRun && stored < total; i++ {
			iops := histories[i].Points[night].Value
			lat := latency(time.Duration(1e9 / iops))
			r := &result.Result{RunID: run.ID, Target: fmt.Sprintf("node-%02d:/dev/sd%c", i/len(workloads)%targets, 'a'+rune(i%3)),
				Round: result.RoundIsolated, Repetition: 1, Workload: workloads[i%len(workloads)], Status: result.StatusComplete,
				Started: at.Add(time.Duration(i) * time.Minute), Finished: at.Add(time.Duration(i+1) * time.Minute),
				Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: int64(iops * 60), Runtime: time.Minute, Completion: lat, Total: lat}}
			if err := w.AddResult(ctx, r); err != nil {
				return err
			}
			stored++
		}
	}
	return w.Commit(ctx)
}

var percentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

func latency(mean time.Duration) result.Latency {
	l := result.Latency{Samples: 30000, Mean: mean, StdDev: mean / 3, Min: mean / 5, Max: mean * 40}
	for _, p := range percentiles {
		l.Percentiles = append(l.Percentiles, result.Percentile{P: p, Value: time.Duration(float64(mean) * (0.4 + p/50))})
	}
	return l
}
