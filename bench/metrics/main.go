// Command metrics times GET /metrics (metrics.Handler over a real SQLite
// database, through a real HTTP server on 127.0.0.1) on a database of
// generated history: a suite run again and again on the same targets, as
// a CronJob or a systemd timer does. It prints the scrape time's median,
// p95 and maximum, the size of the response and the process's peak RSS.
//
//	go run ./bench/metrics -results 100000 -scrapes 200
//
// -db reuses (or keeps) a database: generated only when the file does not
// exist.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

// classes are the storage under the targets: how many bytes per second
// and I/Os per second each sustains.
var classes = []struct {
	name      string
	bps, iops float64
}{{"nvme", 2e9, 400000}, {"sata", 500e6, 80000}, {"usb-ssd", 300e6, 20000}, {"sd", 40e6, 1500}, {"longhorn", 250e6, 30000}}

// tail shapes a latency distribution from its mean: percentile -> factor.
var tail = []result.Percentile{{P: 50, Value: 8}, {P: 90, Value: 15}, {P: 99, Value: 30}, {P: 99.9, Value: 60}, {P: 99.99, Value: 120}}

// figures are what a class gives a workload, with up to 10% noise: a
// device bound by bandwidth or by I/Os, whichever comes first.
func figures(rng *rand.Rand, w spec.Workload, bps, iops float64) *result.Direction {
	bs := float64(max(w.BlockSize, 512))
	depth := 1.0
	if w.IODepth != nil {
		depth = float64(*w.IODepth)
	}
	x := min(iops, bps/bs) * (0.9 + rng.Float64()*0.1)
	mean := time.Duration(depth / x * 1e9)
	lat := result.Latency{Samples: int64(x * 30), Mean: mean}
	for _, p := range tail {
		lat.Percentiles = append(lat.Percentiles, result.Percentile{P: p.P, Value: mean * p.Value / 10})
	}
	return &result.Direction{IOPS: x, BytesPerSec: x * bs, TotalIOs: int64(x * 30), Runtime: 30 * time.Second, Completion: lat}
}

// generate stores runs of every workload on the same targets, two rounds
// and reps repetitions each, until total results are stored.
func generate(ctx context.Context, path string, total, targets, reps int) error {
	st, err := store.Open(ctx, path)
	if err != nil {
		return err
	}
	defer st.Close()
	suite, err := spec.Builtin("standard")
	if err != nil {
		return err
	}
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := []string{result.RoundIsolated, result.RoundParallel}
	perRun := targets * len(rounds) * len(suite.Workloads) * reps
	base := time.Date(2025, 1, 1, 3, 0, 0, 0, time.UTC)
	for r, n := 0, 0; n < total; r, n = r+1, n+perRun {
		start := base.Add(time.Duration(r) * 6 * time.Hour)
		run := &result.Run{ID: result.NewRunID(start, uint16(rng.UintN(1<<16))), Suite: suite.Name, Source: "storbench",
			Status: result.StatusComplete, Started: start, Finished: start.Add(50 * time.Minute)}
		imp := &store.Import{Run: run}
		for t := range targets {
			class := classes[t%len(classes)]
			node := fmt.Sprintf("node-%d", t%4)
			labels := map[string]string{}
			result.LabelStorageClass.Set(labels, class.name)
			result.LabelNode.Set(labels, node)
			result.LabelHostname.Set(labels, node)
			for rep := 1; rep <= reps; rep++ {
				for _, round := range rounds {
					share := 1.0
					if round == result.RoundParallel {
						share = 0.6
					}
					for _, w := range suite.Workloads {
						res := result.Result{Target: class.name + "/" + node, Round: round, Repetition: rep, Workload: w.Name,
							Labels: labels, Status: result.StatusComplete, Started: start, Finished: start.Add(30 * time.Second)}
						d := figures(rng, w, class.bps*share, class.iops*share)
						if strings.Contains(w.RW, "write") {
							res.Write = d
						} else {
							res.Read = d
						}
						imp.Results = append(imp.Results, res)
					}
				}
			}
		}
		if err := st.ImportRun(ctx, imp); err != nil {
			return err
		}
	}
	return nil
}

func main() {
	db := flag.String("db", "", "database to use; generated when it does not exist (default: a temporary file)")
	total := flag.Int("results", 100000, "results to generate")
	targets := flag.Int("targets", 20, "targets measured by every run")
	reps := flag.Int("reps", 3, "repetitions of every workload per run")
	scrapes := flag.Int("scrapes", 200, "scrapes to time")
	flag.Parse()
	if err := run(*db, *total, *targets, *reps, *scrapes); err != nil {
		fmt.Fprintln(os.Stderr, "bench/metrics:", err)
		os.Exit(1)
	}
}

func run(db string, total, targets, reps, scrapes int) error {
	ctx := context.Background()
	if db == "" {
		dir, err := os.MkdirTemp("", "storbench-bench-metrics")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		db = filepath.Join(dir, "bench.db")
	}
	if _, err := os.Stat(db); os.IsNotExist(err) {
		start := time.Now()
		if err := generate(ctx, db, total, targets, reps); err != nil {
			return fmt.Errorf("generating %s: %w", db, err)
		}
		fi, err := os.Stat(db)
		if err != nil {
			return err
		}
		fmt.Printf("generated %d results in %.1f s: %s, %.0f MB\n", total, time.Since(start).Seconds(), db, float64(fi.Size())/1e6)
	}
	st := store.NewLazy(db)
	defer st.Close()
	srv := httptest.NewServer(metrics.Handler(st, metrics.Options{}))
	defer srv.Close()

	var times []time.Duration
	var size int
	for i := 0; i <= scrapes; i++ {
		start := time.Now()
		resp, err := http.Get(srv.URL)
		if err != nil {
			return err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET /metrics: %s: %s", resp.Status, body)
		}
		if i == 0 {
			size = len(body) // the first opens the database
			continue
		}
		times = append(times, time.Since(start))
	}
	slices.Sort(times)
	at := func(p float64) time.Duration { return times[int(p*float64(len(times)-1)+0.5)] }
	fmt.Printf("GET /metrics x%d: median %.1f ms, p95 %.1f ms, max %.1f ms (target p95 <= 100 ms); %d bytes, %d series lines; peak RSS %s\n",
		len(times), ms(at(0.5)), ms(at(0.95)), ms(times[len(times)-1]), size, lines(srv.URL), peakRSS())
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / 1e6 }

// lines counts the sample lines of one scrape.
func lines(url string) int {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	n := 0
	for _, l := range strings.Split(string(b), "\n") {
		if l != "" && !strings.HasPrefix(l, "#") {
			n++
		}
	}
	return n
}

// peakRSS is this process's VmHWM.
func peakRSS() string {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return "unknown"
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}
