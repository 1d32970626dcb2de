// Command classes times what "storbench classes" reads from the store: the
// medians of every class's isolated-round results (storbench.MeasuredClasses,
// which reads compact Figures), beside a scan of the full stored results
// (what classes read before it used Figures), over generated fio-shaped
// results with latency percentiles in a real SQLite database.
//
// Usage: go run ./bench/classes [-results 100000] [-repeat 3]
package main

import (
	"context"
	"flag"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

var (
	classes     = []string{"local-path", "longhorn", "nfs-client", "rook-ceph-block", "topolvm"}
	workloads   = []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32", "rand-read-4k-qd1", "etcd-fdatasync"}
	percentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}
)

func main() {
	total := flag.Int("results", 100000, "results to generate")
	repeat := flag.Int("repeat", 3, "timed repetitions")
	flag.Parse()
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "storbench-classes-bench-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "results.db"))
	if err != nil {
		log.Fatal(err)
	}
	defer st.Close()
	if err := generate(ctx, st, *total); err != nil {
		log.Fatal(err)
	}
	var infos []result.StorageClass
	for _, c := range classes {
		infos = append(infos, result.StorageClass{Name: c})
	}
	for i := 1; i <= *repeat; i++ {
		measure(fmt.Sprintf("classes (Figures) run %d", i), func() error {
			_, err := storbench.MeasuredClasses(ctx, st, infos)
			return err
		})
		measure(fmt.Sprintf("full results scan run %d", i), func() error {
			_, err := st.Results(ctx, store.ResultFilter{Status: result.StatusComplete})
			return err
		})
	}
}

// measure prints the wall time and the bytes allocated by f.
func measure(name string, f func() error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	start := time.Now()
	if err := f(); err != nil {
		log.Fatal(err)
	}
	wall := time.Since(start)
	runtime.ReadMemStats(&after)
	fmt.Printf("%-28s %6.2f s wall, %7.1f MiB allocated\n", name, wall.Seconds(), float64(after.TotalAlloc-before.TotalAlloc)/(1<<20))
}

// generate stores total isolated and parallel results across the classes,
// each with completion and total latency percentiles as fio reports them.
func generate(ctx context.Context, st store.Store, total int) error {
	start := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	run := &result.Run{ID: result.NewRunID(start, 1), Suite: "standard", Source: "storbench", Status: result.StatusComplete,
		Started: start, Finished: start.Add(time.Hour)}
	w, err := st.BeginImport(ctx, run, nil)
	if err != nil {
		return err
	}
	defer w.Abort()
	for i := 0; i < total; i++ {
		class := classes[i%len(classes)]
		labels := map[string]string{}
		result.LabelStorageClass.Set(labels, class)
		round := result.RoundIsolated
		if i%3 == 2 {
			round = result.RoundParallel
		}
		iops := 1000 + float64(i%997)
		lat := latency(time.Duration(1e9 / iops))
		r := &result.Result{RunID: run.ID, Target: fmt.Sprintf("k8s:%s@node-%d", class, i%4), Round: round, Repetition: 1 + i/1000,
			Workload: workloads[i%len(workloads)], Labels: labels, Status: result.StatusComplete, Started: start, Finished: start.Add(30 * time.Second),
			Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: int64(iops * 30), Runtime: 30 * time.Second, Completion: lat, Total: lat}}
		if err := w.AddResult(ctx, r); err != nil {
			return err
		}
	}
	return w.Commit(ctx)
}

func latency(mean time.Duration) result.Latency {
	l := result.Latency{Samples: 30000, Mean: mean, StdDev: mean / 3, Min: mean / 5, Max: mean * 40}
	for _, p := range percentiles {
		l.Percentiles = append(l.Percentiles, result.Percentile{P: p, Value: time.Duration(float64(mean) * (0.4 + p/50))})
	}
	return l
}
