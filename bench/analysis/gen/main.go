// Command gen fills a storbench database with generated results for the
// compare/report benchmark: realistic fio-shaped results (IOPS, bandwidth,
// completion/total/submission latency with the 13 percentiles storbench
// keeps, sync latency where a workload syncs) across runs, targets,
// storage classes, rounds and repetitions. It prints the run IDs.
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

type workload struct {
	name    string
	write   bool
	block   float64 // bytes
	iops    float64 // nvme figure; other classes scale it down
	latency time.Duration
	sync    bool
}

var workloads = []workload{
	{"seq-read", false, 1 << 20, 2500, 3 * time.Millisecond, false},
	{"seq-write", true, 1 << 20, 1800, 4 * time.Millisecond, false},
	{"rand-read-4k-qd32", false, 4096, 300000, 100 * time.Microsecond, false},
	{"rand-write-4k-qd32", true, 4096, 200000, 150 * time.Microsecond, false},
	{"rand-read-4k-qd1", false, 4096, 12000, 80 * time.Microsecond, false},
	{"rand-write-4k-qd1", true, 4096, 40000, 25 * time.Microsecond, false},
	{"rand-rw-4k-50-4x32", true, 4096, 150000, 800 * time.Microsecond, false},
	{"etcd-fdatasync", true, 2300, 3000, 60 * time.Microsecond, true},
}

var classes = []struct {
	name  string
	scale float64
}{{"nvme", 1}, {"sata", 0.25}, {"usb-ssd", 0.08}, {"sd", 0.01}, {"longhorn", 0.15}}

var percentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

func latency(rng *rand.Rand, mean time.Duration, samples int64) result.Latency {
	l := result.Latency{Samples: samples, Mean: mean, StdDev: mean / 3, Min: mean / 5, Max: mean * 40}
	for _, p := range percentiles {
		// A long-tailed shape: the median under the mean, p99.99 far out.
		f := 0.4 + 0.6*p/50
		if p > 90 {
			f = 1.5 + (p-90)*0.9
		}
		if p > 99.5 {
			f *= 3
		}
		l.Percentiles = append(l.Percentiles, result.Percentile{P: p, Value: time.Duration(float64(mean) * f * (0.95 + rng.Float64()*0.1))})
	}
	return l
}

func main() {
	db := flag.String("db", "bench.db", "database to fill (created)")
	total := flag.Int("results", 100000, "number of results to generate")
	runs := flag.Int("runs", 10, "spread over this many runs")
	targets := flag.Int("targets", 10, "targets per run")
	flag.Parse()
	ctx := context.Background()
	st, err := store.Open(ctx, *db)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	rounds := []string{result.RoundIsolated, result.RoundParallel}
	perRun := *total / *runs
	base := time.Date(2026, 11, 1, 8, 0, 0, 0, time.UTC)
	var ids []string
	for r := 0; r < *runs; r++ {
		start := base.Add(time.Duration(r) * time.Hour)
		run := &result.Run{ID: result.NewRunID(start, uint16(rng.UintN(1<<16))), Suite: "standard", Source: "storbench",
			Status: result.StatusComplete, Started: start, Finished: start.Add(50 * time.Minute),
			Labels: map[string]string{"storbench_version": "bench", "cluster": "homelab"}}
		imp := &store.Import{Run: run}
		n := 0
		for rep := 1; n < perRun; rep++ {
			for _, round := range rounds {
				for t := 0; t < *targets && n < perRun; t++ {
					class := classes[t%len(classes)]
					target := fmt.Sprintf("pvc-%02d-%02d", r, t)
					labels := map[string]string{"storage": class.name, "node": fmt.Sprintf("node-%d", t%4), "hostname": fmt.Sprintf("node-%d", t%4),
						"kernel": "6.12.0-rpi", "arch": "arm64", "fio_version": "fio-3.38", "cluster": "homelab"}
					for _, w := range workloads {
						if n >= perRun {
							break
						}
						speed := class.scale * (0.9 + rng.Float64()*0.2)
						if round == result.RoundParallel {
							speed *= 0.7
						}
						iops := w.iops * speed
						lat := time.Duration(float64(w.latency) / speed)
						ios := int64(iops * 30)
						d := &result.Direction{IOPS: iops, BytesPerSec: iops * w.block, TotalIOs: ios, Bytes: int64(float64(ios) * w.block),
							Runtime: 30 * time.Second, Completion: latency(rng, lat, ios), Total: latency(rng, lat+lat/20, ios),
							Submission: result.Latency{Samples: ios, Mean: 2 * time.Microsecond, Min: time.Microsecond, Max: 80 * time.Microsecond}}
						res := result.Result{Target: target, Round: round, Repetition: rep, Workload: w.name, Labels: labels,
							Status: result.StatusComplete, Started: start, Finished: start.Add(30 * time.Second),
							CPU: result.CPU{UserPercent: 5 + rng.Float64()*10, SystemPercent: 20 + rng.Float64()*20}}
						switch {
						case strings.Contains(w.name, "rw"):
							half := *d
							half.IOPS, half.BytesPerSec, half.TotalIOs = d.IOPS/2, d.BytesPerSec/2, d.TotalIOs/2
							other := half
							res.Read, res.Write = &half, &other
						case w.write:
							res.Write = d
						default:
							res.Read = d
						}
						if w.sync {
							s := latency(rng, lat*3, ios)
							res.Sync = &s
						}
						if rng.IntN(4) == 0 {
							res.Bottleneck = &result.Attribution{LimitedBy: "device", Evidence: fmt.Sprintf("device %d%% utilised", 90+rng.IntN(10))}
						}
						imp.Results = append(imp.Results, res)
						n++
					}
				}
			}
		}
		if err := st.ImportRun(ctx, imp); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		ids = append(ids, run.ID)
	}
	fmt.Println(strings.Join(ids, " "))
}
