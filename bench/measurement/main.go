// Command measurement measures issue 13's two figures.
//
// time-to-answer: for each workload of a suite (standard by default) on one
// directory, fixed-length runs (ramp + runtime, 60 s by default) and
// --until-stable runs (fio steady-state detection, storbench's defaults)
// alternate in one interleaved series, every run a fresh storbench run
// through the library (storbench.Run). Both estimate the workload's IOPS.
// From each method's per-run wall time T and coefficient of variation CV it derives
// the runs needed for a 95% confidence interval of ±P% (the smallest n >= 2
// with t(n-1)·CV/√n <= P) and so the total time to an answer at equal
// precision; it prints the ratio until-stable / fixed and whether the two
// estimates agree (their difference against their combined uncertainty).
// Every run is logged on stderr; "summary -log FILE" recomputes the table
// from such a log.
//
// cliff: sequential writes to a loop device throttled by a cgroup write
// limit lowered part-way (internal/cliff/throttle); for each it prints where
// the cliff was made (bytes on the device when the limit changed), where
// the detector found it, and the error.
//
// Usage (root, from the repository root):
//
//	go run ./bench/measurement time-to-answer -dir /path/on/disk [-rounds 3] [-fixed 60s] [-workloads a,b]
//	go run ./bench/measurement summary -log tta.err [-precision 5]
//	go run ./bench/measurement cliff [-runs 4] [-record internal/cliff/testdata]
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cliff"
	"github.com/storbench/storbench/internal/cliff/throttle"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: measurement time-to-answer|cliff [flags]")
		os.Exit(2)
	}
	var err error
	switch os.Args[1] {
	case "time-to-answer":
		err = timeToAnswer(os.Args[2:])
	case "summary":
		err = summaryFromLog(os.Args[2:])
	case "cliff":
		err = cliffError(os.Args[2:])
	default:
		err = fmt.Errorf("unknown mode %q", os.Args[1])
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type sample struct {
	iops float64
	wall time.Duration
	// stable is the steady-state outcome of an until-stable run.
	stable *result.SteadyState
}

func timeToAnswer(args []string) error {
	fs := flag.NewFlagSet("time-to-answer", flag.ExitOnError)
	dir := fs.String("dir", "", "directory on the disk to measure")
	suiteName := fs.String("suite", "standard", "suite")
	only := fs.String("workloads", "", "only these workloads (comma-separated)")
	rounds := fs.Int("rounds", 3, "runs of each method per workload")
	fixed := fs.Duration("fixed", 60*time.Second, "runtime of the fixed runs (the suite's ramp is kept)")
	precision := fs.Float64("precision", 5, "the ±percent both methods must reach")
	stableMax := fs.Duration("stable-max", time.Duration(spec.DefaultSteadyState.MaxRuntime), "--until-stable maximum runtime")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" {
		return fmt.Errorf("-dir is required")
	}
	suite, err := spec.Resolve(*suiteName)
	if err != nil {
		return err
	}
	if *only != "" {
		if err := suite.Select(strings.Split(*only, ",")); err != nil {
			return err
		}
	}
	work, err := os.MkdirTemp("", "storbench-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	st, err := store.Open(context.Background(), filepath.Join(work, "bench.db"))
	if err != nil {
		return err
	}
	defer st.Close()
	one := func(w spec.Workload, stable bool) (sample, error) {
		req := storbench.DefaultRunRequest()
		req.SuiteSpec = &spec.Suite{Name: suite.Name, Workloads: []spec.Workload{w}}
		req.Targets, req.Telemetry = []string{*dir}, false
		if stable {
			req.Measure.UntilStable, req.Measure.StableMax = true, stableMax
		} else {
			req.SuiteSpec.Workloads[0].Runtime = spec.Duration(*fixed)
		}
		start := time.Now()
		run, err := storbench.Run(context.Background(), st, req, nil)
		wall := time.Since(start)
		if err != nil {
			return sample{}, err
		}
		rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
		if err != nil || len(rs) != 1 {
			return sample{}, fmt.Errorf("%d results: %v", len(rs), err)
		}
		v, _ := rs[0].Metric(result.MetricIOPS)
		return sample{iops: v, wall: wall, stable: rs[0].SteadyState}, nil
	}
	fixedS := map[string][]sample{}
	stableS := map[string][]sample{}
	for r := 0; r < *rounds; r++ {
		for _, w := range suite.Workloads {
			// Alternate which method goes first, so drift favours neither.
			order := []bool{false, true}
			if r%2 == 1 {
				order = []bool{true, false}
			}
			for _, stable := range order {
				s, err := one(w, stable)
				if err != nil {
					return fmt.Errorf("%s (stable=%v): %w", w.Name, stable, err)
				}
				if stable {
					stableS[w.Name] = append(stableS[w.Name], s)
				} else {
					fixedS[w.Name] = append(fixedS[w.Name], s)
				}
				fmt.Fprintf(os.Stderr, "round %d %-20s %-12s %10.0f IOPS %6.1fs%s\n", r+1, w.Name, method(stable), s.iops, s.wall.Seconds(), stableNote(s))
			}
		}
	}
	fmt.Printf("time to an answer, suite %s on %s, %d interleaved rounds, fixed runs %s, until-stable defaults (%s)\n\n",
		suite.Name, *dir, *rounds, *fixed, spec.DefaultSteadyState.Criterion())
	var names []string
	for _, w := range suite.Workloads {
		names = append(names, w.Name)
	}
	printSummary(names, fixedS, stableS, *precision)
	return nil
}

// printSummary prints, per workload, each method's estimate, spread, run
// time and time to ±precision%, and the totals' ratio.
func printSummary(names []string, fixedS, stableS map[string][]sample, precision float64) {
	fmt.Printf("%-20s %10s %6s %6s %7s %10s %6s %6s %7s %6s %6s %-6s %s\n", "workload", "fixed IOPS", "CV%", "run s", "need s",
		"stable", "CV%", "run s", "need s", "diff%", "unc%", "agree", "steady")
	var totalFixed, totalStable float64
	for _, name := range names {
		f, s := fixedS[name], stableS[name]
		sf, ss := analysis.Summarize(iopsOf(f)), analysis.Summarize(iopsOf(s))
		nf, ns := needed(sf, precision), needed(ss, precision)
		tf, ts := meanWall(f), meanWall(s)
		totalFixed += nf * tf
		totalStable += ns * ts
		diff := math.Abs(ss.Mean-sf.Mean) / sf.Mean * 100
		unc := math.Hypot(half(sf), half(ss)) / sf.Mean * 100
		reached := 0
		for _, x := range s {
			if x.stable != nil && x.stable.Reached {
				reached++
			}
		}
		fmt.Printf("%-20s %10.0f %6.1f %6.1f %7.0f %10.0f %6.1f %6.1f %7.0f %6.1f %6.1f %-6v %d/%d\n", name, sf.Mean, sf.CVPercent, tf, nf*tf,
			ss.Mean, ss.CVPercent, ts, ns*ts, diff, unc, diff <= unc, reached, len(s))
	}
	fmt.Printf("\ntotal time to ±%.0f%% (95%% confidence) for every workload: fixed %.0f s, until-stable %.0f s, ratio %.2f (target <= 0.33)\n",
		precision, totalFixed, totalStable, totalStable/totalFixed)
}

// summaryFromLog rebuilds the samples from a time-to-answer log (stderr)
// and prints the summary again, e.g. with another precision.
func summaryFromLog(args []string) error {
	fs := flag.NewFlagSet("summary", flag.ExitOnError)
	log := fs.String("log", "", "stderr of a time-to-answer run")
	precision := fs.Float64("precision", 5, "the ±percent both methods must reach")
	if err := fs.Parse(args); err != nil {
		return err
	}
	data, err := os.ReadFile(*log)
	if err != nil {
		return err
	}
	fixedS, stableS := map[string][]sample{}, map[string][]sample{}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) < 7 || f[0] != "round" || f[5] != "IOPS" {
			continue
		}
		iops, err1 := strconv.ParseFloat(f[4], 64)
		wall, err2 := time.ParseDuration(f[6])
		if err1 != nil || err2 != nil {
			return fmt.Errorf("log line %q", line)
		}
		x := sample{iops: iops, wall: wall}
		if f[3] == "until-stable" {
			x.stable = &result.SteadyState{Reached: len(f) > 8 && f[7] == "steady"}
			stableS[f[2]] = append(stableS[f[2]], x)
		} else {
			fixedS[f[2]] = append(fixedS[f[2]], x)
		}
		if !slices.Contains(names, f[2]) {
			names = append(names, f[2])
		}
	}
	printSummary(names, fixedS, stableS, *precision)
	return nil
}

func method(stable bool) string {
	if stable {
		return "until-stable"
	}
	return "fixed"
}

func stableNote(s sample) string {
	if s.stable == nil {
		return ""
	}
	if s.stable.Reached {
		return fmt.Sprintf("  steady after %s", s.stable.After.Round(time.Second))
	}
	return "  NOT steady"
}

func iopsOf(s []sample) []float64 {
	out := make([]float64, len(s))
	for i, x := range s {
		out[i] = x.iops
	}
	return out
}

func meanWall(s []sample) float64 {
	var t float64
	for _, x := range s {
		t += x.wall.Seconds()
	}
	return t / float64(len(s))
}

// needed is the runs for a 95% interval of ±p% given the observed CV:
// the smallest n >= 2 with t(n-1)·CV/√n <= p.
func needed(s analysis.Stats, p float64) float64 {
	if s.N < 2 {
		return math.NaN()
	}
	return float64(analysis.RunsFor(s.CVPercent/100, p/100, 100000))
}

func half(s analysis.Stats) float64 {
	if s.CI95 == nil {
		return 0
	}
	return s.CI95.High - s.Mean
}

// cliffError makes throttled writes with the cliff at known places.
func cliffError(args []string) error {
	fs := flag.NewFlagSet("cliff", flag.ExitOnError)
	runs := fs.Int("runs", 4, "throttled writes (cycling through the built-in shapes)")
	record := fs.String("record", "", "keep each bandwidth log in this directory")
	if err := fs.Parse(args); err != nil {
		return err
	}
	shapes := []struct {
		before, after int64
		switchAfter   time.Duration
	}{
		{40 << 20, 8 << 20, 5 * time.Second},
		{60 << 20, 15 << 20, 3 * time.Second},
		{30 << 20, 10 << 20, 8 * time.Second},
		{50 << 20, 5 << 20, 10 * time.Second},
	}
	fmt.Printf("%-4s %-22s %8s %14s %14s %8s %12s %12s\n", "run", "limit (MiB/s)", "switch", "made at B", "found at B", "error%", "before MB/s", "after MB/s")
	var worst float64
	for i := 0; i < *runs; i++ {
		sh := shapes[i%len(shapes)]
		dir, err := os.MkdirTemp("", "storbench-cliff-")
		if err != nil {
			return err
		}
		dev, detach, err := loopDevice(dir, 1<<30)
		if err != nil {
			return err
		}
		w := throttle.Write{Device: dev, Size: 1 << 30, Runtime: sh.switchAfter + 10*time.Second, Before: sh.before, After: sh.after,
			SwitchAfter: sh.switchAfter, Dir: dir, LogAverage: 500 * time.Millisecond}
		out, err := throttle.Run(context.Background(), w)
		derr := detach()
		if err != nil {
			return err
		}
		if derr != nil {
			return derr
		}
		a := cliff.Find(cliff.FromLog(out.Samples), cliff.Options{})
		if a.Cliff == nil {
			fmt.Printf("%-4d %-22s %8s %14d %14s\n", i+1, fmt.Sprintf("%d -> %d", sh.before>>20, sh.after>>20), sh.switchAfter, out.SwitchBytes, "none")
			worst = math.Inf(1)
			continue
		}
		e := math.Abs(float64(a.Cliff.AtBytes-out.SwitchBytes)) / float64(out.SwitchBytes) * 100
		worst = math.Max(worst, e)
		fmt.Printf("%-4d %-22s %8s %14d %14d %8.2f %12.1f %12.1f\n", i+1, fmt.Sprintf("%d -> %d", sh.before>>20, sh.after>>20), sh.switchAfter,
			out.SwitchBytes, a.Cliff.AtBytes, e, a.Cliff.BeforeBytesPerSec/1e6, a.Cliff.AfterBytesPerSec/1e6)
		if *record != "" {
			data, err := os.ReadFile(filepath.Join(dir, "throttled_bw.1.log"))
			if err != nil {
				return err
			}
			name := fmt.Sprintf("throttled-%d-%d-at-%d.log", sh.before, sh.after, out.SwitchBytes)
			if err := os.WriteFile(filepath.Join(*record, name), data, 0o644); err != nil {
				return err
			}
		}
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	fmt.Printf("\nworst error: %.2f%% of the position (limit 10%%)\n", worst)
	return nil
}

func loopDevice(dir string, size int64) (string, func() error, error) {
	img := filepath.Join(dir, "disk.img")
	f, err := os.Create(img)
	if err != nil {
		return "", nil, err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		return "", nil, err
	}
	if err := f.Close(); err != nil {
		return "", nil, err
	}
	out, err := exec.Command("losetup", "--find", "--show", img).CombinedOutput()
	if err != nil {
		return "", nil, fmt.Errorf("losetup: %v %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	return dev, func() error {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			return fmt.Errorf("losetup --detach %s: %v %s", dev, err, out)
		}
		return nil
	}, nil
}
