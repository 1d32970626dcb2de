// Command serve measures the dashboard over a large database: it fills a
// real SQLite file with 100,000 results through the store API (many runs
// of realistic targets, workloads, rounds, repetitions, labels and
// telemetry), starts "storbench serve" as a process of its own on
// 127.0.0.1, requests each page many times and prints each page's p50, p95
// and worst time, and the serve process's resident memory from /proc.
// Targets: pages p95 <= 200 ms, /metrics p95 <= 100 ms, RSS <= 150 MiB.
//
//	go build -o /tmp/storbench ./cmd/storbench && go run ./bench/serve -storbench /tmp/storbench
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench/serve:", err)
		os.Exit(1)
	}
}

func run() error {
	bin := flag.String("storbench", "", "the storbench binary to serve with (required)")
	db := flag.String("db", "", "database: filled first when it does not exist (default: a temporary one)")
	total := flag.Int("results", 100000, "results to generate")
	perRun := flag.Int("per-run", 48, "results per run")
	n := flag.Int("requests", 40, "timed requests per page")
	flag.Parse()
	if *bin == "" {
		return errors.New("-storbench BINARY is required")
	}
	if *db == "" {
		dir, err := os.MkdirTemp("", "bench-serve-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*db = filepath.Join(dir, "results.db")
	}
	if _, err := os.Stat(*db); errors.Is(err, os.ErrNotExist) {
		start := time.Now()
		if err := generate(*db, *total, *perRun); err != nil {
			return err
		}
		fi, _ := os.Stat(*db)
		fmt.Printf("generated %d results in %d runs: %.1f s, database %d MiB\n", *total, *total / *perRun, time.Since(start).Seconds(), fi.Size()>>20)
	}
	st, err := store.OpenReadOnly(context.Background(), *db)
	if err != nil {
		return err
	}
	runs, err := st.Runs(context.Background(), store.RunFilter{})
	st.Close()
	if err != nil || len(runs) < 20 {
		return fmt.Errorf("reading the runs back: %d runs, %v", len(runs), err)
	}

	cmd, base, err := startServe(*bin, *db)
	if err != nil {
		return err
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()

	client := &http.Client{Timeout: time.Minute}
	fmt.Printf("%-24s %8s %8s %8s %5s  %s\n", "page", "p50 ms", "p95 ms", "max ms", "runs", "target")
	over := false
	for _, p := range pages(runs) {
		took, status, rows, err := timePage(client, base+p.path, *n)
		if err != nil {
			return err
		}
		if status != http.StatusOK {
			fmt.Printf("%-24s answered %d: not measured\n", p.name, status)
			continue
		}
		slices.Sort(took)
		p95 := took[(len(took)*95+99)/100-1]
		verdict := "ok"
		if p95 > p.limitMS {
			verdict, over = "OVER", true
		}
		fmt.Printf("%-24s %8.1f %8.1f %8.1f %5d  <= %.0f ms %s\n", p.name, took[len(took)/2], p95, took[len(took)-1], rows, p.limitMS, verdict)
	}
	rss, hwm, err := memory(cmd.Process.Pid)
	if err != nil {
		return err
	}
	verdict := "ok"
	if hwm > 150 {
		verdict, over = "OVER", true
	}
	fmt.Printf("serve RSS now %d MiB, peak %d MiB (<= 150 MiB %s); load average %s\n", rss, hwm, verdict, loadavg())
	if over {
		return errors.New("a target was missed")
	}
	return nil
}

// startServe starts "storbench serve" on db at a free local port and returns
// the process and the base URL it announced on its first stderr line.
func startServe(bin, db string) (*exec.Cmd, string, error) {
	cmd := exec.Command(bin, "--db", db, "serve", "--listen", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, "", err
	}
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	stop := func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}
	line, err := bufio.NewReader(stderr).ReadString('\n')
	if err != nil {
		stop()
		return nil, "", fmt.Errorf("serve said nothing: %w", err)
	}
	go io.Copy(io.Discard, stderr)
	m := regexp.MustCompile(`http://([^/]+)/`).FindStringSubmatch(line)
	if m == nil {
		stop()
		return nil, "", fmt.Errorf("serve's start line names no address: %q", line)
	}
	return cmd, "http://" + m[1], nil
}

// page is one dashboard page to time, with its p95 target in milliseconds.
type page struct {
	name, path string
	limitMS    float64
}

// pages lists the dashboard pages to time, built from the runs in the database.
func pages(runs []result.Run) []page {
	mid := runs[len(runs)/2].ID
	ten := make([]string, 0, 10)
	for _, r := range runs[100:110] {
		ten = append(ten, "run="+r.ID)
	}
	return []page{
		{"runs list", "/", 200},
		{"runs list, page 10", "/?offset=450", 200},
		{"runs by target", "/?target=" + url.QueryEscape(target(7)), 200},
		{"runs by label", "/?label=storage%3Dsd-card", 200},
		{"runs by rare label", "/?label=node%3Dnope", 200},
		{"runs by suite+status", "/?suite=etcd&status=complete", 200},
		{"runs by date", "/?since=2026-03-01&until=2026-03-31", 200},
		{"run page", "/runs/" + mid, 200},
		{"run status (live poll)", "/runs/" + mid + "/status.json", 200},
		{"compare 3 runs", "/compare?run=" + runs[10].ID + "&run=" + runs[11].ID + "&run=" + runs[12].ID + "&group_by=storage", 200},
		{"compare 10 runs", "/compare?" + strings.Join(ten, "&") + "&group_by=storage&baseline=storage%3Dnvme", 200},
		{"trend, the targets", "/trend", 200},
		{"trend, one target", "/trend?target=" + url.QueryEscape(target(7)), 200},
		{"trend, target+workload", "/trend?target=" + url.QueryEscape(target(7)) + "&workload=rand-read-4k-qd32&round=isolated", 200},
		{"/metrics", "/metrics", 100},
	}
}

// timePage requests u n times after two warm-up requests and returns each
// timed request's duration in milliseconds, the last status and the run rows
// in the last body; it stops at the first answer that is not 200 OK.
func timePage(client *http.Client, u string, n int) (took []float64, status, rows int, err error) {
	for i := range n + 2 {
		t0 := time.Now()
		resp, err := client.Get(u)
		if err != nil {
			return nil, 0, 0, err
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return nil, 0, 0, err
		}
		rows = strings.Count(string(body), "<tr data-run=")
		status = resp.StatusCode
		if i >= 2 { // two warm-up requests
			took = append(took, float64(time.Since(t0).Microseconds())/1000)
		}
		if status != http.StatusOK {
			break
		}
	}
	return took, status, rows, nil
}

// memory reads a process's resident set now and at its peak, in MiB.
func memory(pid int) (rss, hwm int, err error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, ":")
		kb, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB"))
		switch k {
		case "VmRSS":
			rss = kb >> 10
		case "VmHWM":
			hwm = kb >> 10
		}
	}
	return rss, hwm, nil
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.Join(strings.Fields(string(b))[:min(3, len(strings.Fields(string(b))))], " ")
}

// The fleet: 40 targets of five kinds of storage on 20 hosts, measured
// again and again over a year, so every target has a history.
var kinds = []struct {
	storage string
	path    string
	scale   float64
}{{"nvme", "/mnt/nvme", 1}, {"sata-ssd", "/mnt/ssd", 0.3}, {"usb-ssd", "/mnt/usb", 0.1}, {"sd-card", "/var/lib/bench", 0.01}, {"hdd", "/srv/hdd", 0.02}}

func target(i int) string {
	return fmt.Sprintf("pi%02d:%s", i%20, kinds[i%len(kinds)].path)
}

var suites = []struct {
	name      string
	workloads []string
	iops      []float64 // nvme figures
	block     float64
}{
	{"standard", []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32", "rand-read-4k-qd1", "rand-write-4k-qd1"},
		[]float64{2500, 1800, 300000, 200000, 12000, 40000}, 4096},
	{"quick", []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32"}, []float64{2500, 1800, 300000, 200000}, 4096},
	{"etcd", []string{"etcd-fdatasync"}, []float64{3000}, 2300},
}

var percentiles = []float64{1, 5, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

func latency(rng *rand.Rand, mean time.Duration, samples int64) result.Latency {
	l := result.Latency{Samples: samples, Mean: mean, StdDev: mean / 3, Min: mean / 5, Max: mean * 40}
	for _, p := range percentiles {
		f := 0.4 + 0.6*p/50
		if p > 90 {
			f = 1.5 + (p-90)*0.9
		}
		l.Percentiles = append(l.Percentiles, result.Percentile{P: p, Value: time.Duration(float64(mean) * f * (0.95 + rng.Float64()*0.1))})
	}
	return l
}

// telemetry is 30 one-second samples of the series the run page draws.
func telemetry(rng *rand.Rand, busy float64) *result.Telemetry {
	const samples = 30
	s := &result.TelemetrySeries{Values: map[string][]float64{}}
	for i := range samples {
		s.OffsetsMS = append(s.OffsetsMS, int64(i+1)*1000)
	}
	for _, name := range []string{result.SeriesCPUBusy, result.SeriesCPUIOWait, result.SeriesDiskUtil, result.SeriesIOPressureSome, result.SeriesDiskReadBPS, result.SeriesDiskWriteBPS} {
		v := make([]float64, samples)
		for i := range v {
			v[i] = busy * (0.8 + 0.4*rng.Float64())
			if strings.HasSuffix(name, "_bps") {
				v[i] *= 1e6
			}
		}
		s.Values[name] = v
	}
	return &result.Telemetry{Host: "pi", Interval: time.Second, CPUs: 4, Series: s}
}

// generate stores total results in runs of perRun: each run one suite on
// one to three targets, isolated and parallel rounds, repeated to fill.
func generate(db string, total, perRun int) error {
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		return err
	}
	defer st.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	runs := total / perRun
	for r := range runs {
		start := base.Add(time.Duration(float64(r) / float64(runs) * float64(365*24*time.Hour)))
		su := suites[r%len(suites)]
		first := rng.IntN(40)
		var targets []string
		for t := range 1 + rng.IntN(3) {
			targets = append(targets, target(first+t))
		}
		run := &result.Run{ID: result.NewRunID(start, uint16(rng.UintN(1<<16))), Suite: su.name, Source: "storbench",
			Status: result.StatusComplete, Started: start, Finished: start.Add(20 * time.Minute), Workloads: su.workloads, Targets: targets,
			Labels: map[string]string{string(result.LabelStorbenchVersion): "bench", "site": []string{"home", "lab"}[r%2]}}
		if r%97 == 0 {
			run.Status = result.StatusFailed
		}
		imp := &store.Import{Run: run}
	fill:
		for rep := 1; ; rep++ {
			for _, round := range []string{result.RoundIsolated, result.RoundParallel} {
				for ti, tg := range targets {
					k := kinds[(first+ti)%len(kinds)]
					labels := map[string]string{"storage": k.storage, "node": fmt.Sprintf("pi%02d", (first+ti)%20), "site": run.Labels["site"],
						string(result.LabelHostname): fmt.Sprintf("pi%02d", (first+ti)%20), string(result.LabelFioVersion): "fio-3.38"}
					for wi, w := range su.workloads {
						if len(imp.Results) == perRun {
							break fill
						}
						speed := k.scale * (0.9 + rng.Float64()*0.2)
						if round == result.RoundParallel {
							speed *= 0.7
						}
						iops := su.iops[wi] * speed
						block := su.block
						if strings.HasPrefix(w, "seq") {
							block = 1 << 20
						}
						lat := time.Duration(float64(100*time.Microsecond) / speed)
						ios := int64(iops * 30)
						d := &result.Direction{IOPS: iops, BytesPerSec: iops * block, TotalIOs: ios, Bytes: int64(float64(ios) * block),
							Runtime: 30 * time.Second, Completion: latency(rng, lat, ios), Total: latency(rng, lat+lat/20, ios)}
						res := result.Result{Target: tg, Round: round, Repetition: rep, Workload: w, Labels: labels, Status: result.StatusComplete,
							Started: start, Finished: start.Add(30 * time.Second), Telemetry: telemetry(rng, 30+rng.Float64()*60),
							Bottleneck: &result.Attribution{LimitedBy: "device", Evidence: fmt.Sprintf("device %d%% utilised", 90+rng.IntN(10))}}
						if strings.Contains(w, "write") || strings.HasPrefix(w, "etcd") {
							res.Write = d
						} else {
							res.Read = d
						}
						if strings.HasPrefix(w, "etcd") {
							s := latency(rng, 3*lat, ios)
							res.Sync = &s
						}
						imp.Results = append(imp.Results, res)
					}
				}
			}
		}
		if err := st.ImportRun(ctx, imp); err != nil {
			return fmt.Errorf("storing run %d: %w", r, err)
		}
	}
	return nil
}
