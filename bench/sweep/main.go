// Command sweep measures issue 34's figure: the saturation sweep's
// aggregate at each step (storbench run --clients, through the library)
// against the same clients run by fio's own client/server mode on the same
// directory: N fio servers on 127.0.0.1, one fio --client per server, each
// running the same job (storbench's own job writer) on a file of its own;
// fio's aggregate is the sum of its clients' IOPS. The two methods
// alternate step by step, in turn first, so a drift of the disk spreads
// over both.
//
// Usage (from the repository root):
//
//	go run ./bench/sweep -dir /path/on/disk [-clients 1,2,4,8] [-runtime 10s] [-rounds 2] [-size 256MiB]
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

func main() {
	dir := flag.String("dir", "", "directory on the disk to measure")
	clients := flag.String("clients", "1,2,4,8", "the steps")
	runtime := flag.Duration("runtime", 10*time.Second, "each step's runtime")
	rounds := flag.Int("rounds", 2, "how many times to measure each step with each method")
	size := flag.String("size", "256MiB", "each client's file")
	flag.Parse()
	if err := run(*dir, *clients, *runtime, *rounds, *size); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(dir, clients string, runtime time.Duration, rounds int, sizeText string) error {
	if dir == "" {
		return fmt.Errorf("-dir is required")
	}
	size, err := units.ParseSize(sizeText)
	if err != nil {
		return err
	}
	w, err := workload(runtime, size)
	if err != nil {
		return err
	}
	db := filepath.Join(os.TempDir(), fmt.Sprintf("sweep-bench-%d.db", os.Getpid()))
	defer os.Remove(db)
	st := store.NewLazy(db)
	defer st.Close()
	fmt.Printf("%-8s %-6s %14s %14s %8s %12s\n", "CLIENTS", "ROUND", "STORBENCH IOPS", "FIO C/S IOPS", "DIFF", "START SPREAD")
	for _, f := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			return fmt.Errorf("-clients %s: %w", clients, err)
		}
		var sb, cs []float64
		for r := range rounds {
			var a, b float64
			var spread string
			first := func() error { var e error; a, spread, e = viaStorbench(st, dir, w, n); return e }
			second := func() error { var e error; b, e = viaClientServer(dir, w, n, size); return e }
			if r%2 == 1 {
				first, second = second, first
			}
			if err := first(); err != nil {
				return err
			}
			if err := second(); err != nil {
				return err
			}
			sb, cs = append(sb, a), append(cs, b)
			fmt.Printf("%-8d %-6d %14.0f %14.0f %+7.1f%% %9s ms\n", n, r+1, a, b, (a/b-1)*100, spread)
		}
		ma, mb := mean(sb), mean(cs)
		fmt.Printf("%-8d %-6s %14.0f %14.0f %+7.1f%%\n", n, "mean", ma, mb, (ma/mb-1)*100)
	}
	return nil
}

// workload is the swept workload: 4 KiB random reads at QD1, direct, time
// based.
func workload(runtime time.Duration, size int64) (spec.Workload, error) {
	y := fmt.Sprintf("name: b\nworkloads:\n  - {name: rand-read-4k-qd1, rw: randread, bs: 4KiB, iodepth: 1, size: %d, runtime: %dms}\n", size, runtime.Milliseconds())
	s, err := spec.Parse([]byte(y), "bench.yaml")
	if err != nil {
		return spec.Workload{}, err
	}
	return s.Workloads[0], nil
}

// viaStorbench runs one sweep step through the library and returns its
// aggregate IOPS and its start spread.
func viaStorbench(st store.Store, dir string, w spec.Workload, n int) (float64, string, error) {
	req := storbench.DefaultRunRequest()
	req.SuiteSpec = &spec.Suite{Name: "bench", Workloads: []spec.Workload{w}}
	req.Targets, req.Telemetry = []string{dir}, false
	req.Sweep.Clients = strconv.Itoa(n)
	r, err := storbench.Run(context.Background(), st, req, nil)
	if err != nil {
		return 0, "", err
	}
	o, err := storbench.LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		return 0, "", err
	}
	for _, x := range o.Results {
		if x.Round == result.SweepRound(n) {
			iops, _ := x.Metric(result.MetricIOPS)
			return iops, result.LabelSweepStartSpread.Of(x.Labels), nil
		}
	}
	return 0, "", fmt.Errorf("run %s: no result of %d clients", r.ID, n)
}

// viaClientServer runs the same job on n fio servers through one fio
// client and returns the sum of the clients' IOPS.
func viaClientServer(dir string, w spec.Workload, n int, size int64) (float64, error) {
	work, err := os.MkdirTemp(dir, "fio-cs-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	args := []string{"--output-format=json"}
	var servers []*exec.Cmd
	defer func() {
		for _, s := range servers {
			s.Process.Kill()
			s.Wait()
		}
	}()
	for i := range n {
		port, err := freePort()
		if err != nil {
			return 0, err
		}
		srv := exec.Command("fio", fmt.Sprintf("--server=ip:127.0.0.1,%d", port))
		srv.Dir = work
		if err := srv.Start(); err != nil {
			return 0, err
		}
		servers = append(servers, srv)
		job := filepath.Join(work, fmt.Sprintf("client-%d.fio", i+1))
		text := fio.FromWorkload(w, fio.File{Name: filepath.Join(work, fmt.Sprintf("cs-%d.dat", i+1)), Size: size}, "").String()
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			return 0, err
		}
		args = append(args, fmt.Sprintf("--client=ip:127.0.0.1,%d", port), job)
	}
	time.Sleep(300 * time.Millisecond) // the servers listening
	out, err := exec.Command("fio", args...).Output()
	if err != nil {
		return 0, fmt.Errorf("fio client: %w", err)
	}
	docs, _, _, err := fio.ParseOutputs(strings.NewReader(string(out)))
	if err != nil || len(docs) == 0 {
		return 0, fmt.Errorf("fio client output: %v", err)
	}
	var sum float64
	jobs := docs[len(docs)-1].AllJobs()
	for _, j := range jobs {
		r := fio.ToResult(j)
		iops, _ := r.Metric(result.MetricIOPS)
		sum += iops
	}
	if len(jobs) != n {
		return 0, fmt.Errorf("fio client reported %d of %d clients", len(jobs), n)
	}
	return sum, nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func mean(xs []float64) float64 {
	var s float64
	for _, x := range xs {
		s += x
	}
	if len(xs) == 0 {
		return math.NaN()
	}
	return s / float64(len(xs))
}
