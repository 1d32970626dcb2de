// Command core measures storbench against bare fio (fidelity) and
// storbench's own memory (footprint), as issue "storbench core" asks:
//
//   - for each workload of the standard suite, storbench and the identical
//     bare fio command run alternately on the same directory, at least 3
//     pairs; it prints the median IOPS ratio storbench/fio and the wall-time
//     ratio;
//   - storbench's peak RSS (VmHWM of its own process, fio excluded) during
//     those runs.
//
// Usage: go run ./bench/core -storbench bin/storbench -dir /path/on/disk [-pairs 3]
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
)

func main() {
	bin := flag.String("storbench", "bin/storbench", "storbench binary")
	dir := flag.String("dir", "", "directory on the disk to measure")
	pairs := flag.Int("pairs", 3, "storbench/fio pairs per workload")
	suiteName := flag.String("suite", "standard", "suite")
	only := flag.String("workloads", "", "only these workloads (comma-separated)")
	flag.StringVar(&extraArgs, "storbench-args", "", "extra arguments for storbench run (space-separated), e.g. --telemetry=false")
	flag.Parse()
	if *dir == "" {
		fmt.Fprintln(os.Stderr, "-dir is required")
		os.Exit(2)
	}
	if err := run(*bin, *dir, *suiteName, *only, *pairs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type sample struct {
	iops float64
	wall time.Duration
	// fioOnly is bare fio's wall time without removing its test file.
	fioOnly time.Duration
}

var extraArgs string

func run(bin, dir, suiteName, only string, pairs int) error {
	s, err := spec.Builtin(suiteName)
	if err != nil {
		return err
	}
	if only != "" {
		if err := s.Select(strings.Split(only, ",")); err != nil {
			return err
		}
	}
	db := filepath.Join(dir, "bench.db")
	defer os.Remove(db)
	defer os.Remove(db + "-wal")
	defer os.Remove(db + "-shm")
	var peakRSS int64
	fmt.Printf("suite %s on %s, %d alternating pairs per workload\n\n", suiteName, dir, pairs)
	fmt.Printf("fio wall: bare fio plus removing its test file (storbench's wall includes its own cleanup);\n")
	fmt.Printf("wall x: storbench/that; vs fio only: storbench/bare fio without the removal.\n\n")
	fmt.Printf("%-20s %12s %12s %8s %10s %10s %8s %13s\n", "workload", "fio IOPS", "sb IOPS", "ratio", "fio wall", "sb wall", "wall x", "vs fio only")
	worstRatio, worstWall := 10.0, 0.0
	for _, w := range s.Workloads {
		var ratios, walls, rawWalls []float64
		var fioS, sbS []sample
		for i := 0; i < pairs; i++ {
			order := []bool{true, false}
			if i%2 == 1 {
				order = []bool{false, true}
			}
			var sb, bare sample
			for _, useSB := range order {
				if useSB {
					sm, rss, err := runStorbench(bin, db, dir, suiteName, w.Name)
					if err != nil {
						return err
					}
					sb = sm
					peakRSS = max(peakRSS, rss)
				} else {
					sm, err := runFio(dir, w)
					if err != nil {
						return err
					}
					bare = sm
				}
			}
			fioS, sbS = append(fioS, bare), append(sbS, sb)
			ratios = append(ratios, sb.iops/bare.iops)
			walls = append(walls, sb.wall.Seconds()/bare.wall.Seconds())
			rawWalls = append(rawWalls, sb.wall.Seconds()/bare.fioOnly.Seconds())
		}
		r, wx := median(ratios), median(walls)
		worstRatio, worstWall = min(worstRatio, r), max(worstWall, wx)
		fmt.Printf("%-20s %12.0f %12.0f %8.3f %10s %10s %8.3f %13.3f\n", w.Name, medianOf(fioS, func(s sample) float64 { return s.iops }),
			medianOf(sbS, func(s sample) float64 { return s.iops }), r,
			time.Duration(medianOf(fioS, func(s sample) float64 { return float64(s.wall) })).Round(time.Millisecond),
			time.Duration(medianOf(sbS, func(s sample) float64 { return float64(s.wall) })).Round(time.Millisecond), wx, median(rawWalls))
	}
	fmt.Printf("\nlowest median IOPS ratio storbench/fio: %.3f (target >= 0.97)\n", worstRatio)
	fmt.Printf("highest median wall-time ratio storbench/fio: %.3f (target <= 1.05)\n", worstWall)
	fmt.Printf("storbench peak RSS (VmHWM, fio excluded): %.1f MiB (target <= 50 MiB)\n", float64(peakRSS)/(1<<10))
	return nil
}

// runStorbench runs one workload through storbench and samples its VmHWM (KiB).
func runStorbench(bin, db, dir, suite, workload string) (sample, int64, error) {
	args := []string{"--db", db, "run", "--suite", suite, "--workloads", workload, "--target", dir, "--output", "json"}
	cmd := exec.Command(bin, append(args, strings.Fields(extraArgs)...)...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var hwm int64
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			wall := time.Since(start)
			if err != nil {
				return sample{}, 0, fmt.Errorf("storbench %s: %w", workload, err)
			}
			var got struct {
				Results []result.Result `json:"results"`
			}
			if err := json.Unmarshal(out.Bytes(), &got); err != nil || len(got.Results) != 1 {
				return sample{}, 0, fmt.Errorf("storbench output: %v", err)
			}
			iops, _ := got.Results[0].Metric(result.MetricIOPS)
			return sample{iops: iops, wall: wall}, hwm, nil
		case <-tick.C:
			hwm = max(hwm, vmHWM(cmd.Process.Pid))
		}
	}
}

// runFio runs the identical job with bare fio in a fresh directory.
func runFio(dir string, w spec.Workload) (sample, error) {
	work, err := os.MkdirTemp(dir, "bare-fio-")
	if err != nil {
		return sample{}, err
	}
	defer os.RemoveAll(work)
	args := append([]string{"--output-format=json"}, fio.FromWorkload(w, fio.File{Name: "storbench-test.dat"}, "").Args()...)
	cmd := exec.Command("fio", args...)
	cmd.Dir = work
	start := time.Now()
	out, err := cmd.Output()
	fioOnly := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("fio %s: %w", w.Name, err)
	}
	// storbench removes its test file before it exits; so does a person who
	// runs fio by hand. On a filesystem mounted with discard, the removal of
	// a 1 GiB file that took random writes costs seconds.
	if err := os.RemoveAll(work); err != nil {
		return sample{}, err
	}
	wall := time.Since(start)
	docs, _, _, err := fio.ParseOutputs(bytes.NewReader(out))
	if err != nil || len(docs) == 0 {
		return sample{}, fmt.Errorf("fio output: %v", err)
	}
	r := fio.ToResult(docs[len(docs)-1].AllJobs()[0])
	iops, _ := r.Metric(result.MetricIOPS)
	return sample{iops: iops, wall: wall, fioOnly: fioOnly}, nil
}

func vmHWM(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func medianOf(v []sample, f func(sample) float64) float64 {
	var xs []float64
	for _, s := range v {
		xs = append(xs, f(s))
	}
	return median(xs)
}
