package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/internal/trend"
)

// promtoolCheck runs "promtool check metrics" (its linter) on an exposition.
func promtoolCheck(t *testing.T, exposition []byte) {
	t.Helper()
	promtool := testenv.Tool(t, "promtool", "prometheus", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = bytes.NewReader(exposition)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics: %v\n%s\nexposition:\n%s", err, out, exposition)
	}
}

func TestExport(t *testing.T) {
	st, _ := populate(t)
	var buf bytes.Buffer
	if err := metrics.Export(context.Background(), st, &buf, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	got := series(t, bytes.NewReader(buf.Bytes()))
	checkSeries(t, got, wantSeries)
	for k := range got {
		if strings.Contains(k, `suite="standard"`) && strings.Contains(k, "etcd-fdatasync") {
			t.Errorf("%s: etcd-fdatasync came from the etcd run", k)
		}
		if strings.HasPrefix(k, "go_") || strings.HasPrefix(k, "process_") {
			t.Errorf("%s: the textfile must not carry runtime metrics", k)
		}
	}
	if !strings.Contains(buf.String(), "# TYPE storbench_latency_seconds summary") {
		t.Errorf("latency is not a summary:\n%s", buf.String())
	}
	promtoolCheck(t, buf.Bytes())
}

func TestExportEmpty(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, t.TempDir()+"/empty.db")
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var buf bytes.Buffer
	if err := metrics.Export(ctx, st, &buf, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	got := series(t, &buf)
	if len(got) != 1 {
		t.Errorf("empty database gave %v, want only storbench_build_info", got)
	}
	for k := range got {
		if !strings.HasPrefix(k, metrics.NameBuildInfo+"{") {
			t.Errorf("empty database gave %s", k)
		}
	}
}

func scrape(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// The handler builds on its previous scrape: a run stored between two
// scrapes, by another connection as storbench run would, shows in the next.
func TestHandler(t *testing.T) {
	_, path := populate(t)
	reader := store.NewLazy(path)
	defer reader.Close()
	srv := httptest.NewServer(metrics.Handler(reader, metrics.Options{Runtime: true}))
	defer srv.Close()

	code, body := scrape(t, srv.URL)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", code, body)
	}
	got := series(t, bytes.NewReader(body))
	checkSeries(t, got, wantSeries)
	if !strings.Contains(string(body), "go_goroutines") {
		t.Error("Runtime: no go_goroutines")
	}
	promtoolCheck(t, body)

	writer, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer writer.Close()
	addRun(t, writer, "20261120-060000-dddd", "standard", t0.Add(3*time.Hour),
		figure{target: "fast/node-1", round: result.RoundIsolated, workload: "rand-read-4k-qd1", iops: 90, bw: 368640, p50: time.Millisecond, p90: 2 * time.Millisecond,
			p99: 50 * time.Millisecond, p999: 90 * time.Millisecond, mean: 3 * time.Millisecond})
	code, body = scrape(t, srv.URL)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", code, body)
	}
	want := map[string]float64{}
	for k, v := range wantSeries {
		if !strings.Contains(k, `round="isolated"`) || !strings.Contains(k, "rand-read-4k-qd1") {
			want[k] = v
		}
	}
	labels := `{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`
	want["storbench_iops"+labels] = 90
	want["storbench_latency_seconds_count"+labels] = 1
	want["storbench_last_run_timestamp_seconds"+labels] = float64(t0.Add(3 * time.Hour).Unix())
	checkSeries(t, series(t, bytes.NewReader(body)), want)
}

// A database that cannot be read fails the scrape: Prometheus then marks
// the target down instead of seeing nothing.
func TestHandlerUnreadable(t *testing.T) {
	path := t.TempDir() + "/not-a-database.db"
	if err := os.WriteFile(path, []byte("this is not SQLite, and more than a header's worth of it......................................"), 0o644); err != nil {
		t.Fatal(err)
	}
	reader := store.NewLazy(path)
	defer reader.Close()
	srv := httptest.NewServer(metrics.Handler(reader, metrics.Options{}))
	defer srv.Close()
	code, body := scrape(t, srv.URL)
	if code != http.StatusInternalServerError || !strings.Contains(string(body), path) {
		t.Errorf("GET /metrics over a file that is not a database: %d\n%s", code, body)
	}
	if err := metrics.Export(context.Background(), reader, io.Discard, metrics.Options{}); err == nil {
		t.Error("Export over a file that is not a database: no error")
	}
}

// The handler asks for trend assessments again only when results were
// stored since it last asked, and shows what they say.
func TestHandlerTrend(t *testing.T) {
	_, path := populate(t)
	reader := store.NewLazy(path)
	defer reader.Close()
	var calls atomic.Int32
	judge := func(context.Context) ([]trend.Assessment, error) {
		calls.Add(1)
		return []trend.Assessment{
			{Target: "fast/node-1", Round: result.RoundIsolated, Workload: "rand-read-4k-qd1", Metric: result.MetricIOPS, Verdict: trend.Regression, Baseline: 2000, Delta: -0.45},
			{Target: "fast/node-1", Round: result.RoundIsolated, Workload: "etcd-fdatasync", Metric: result.MetricSyncP99, Verdict: trend.InsufficientHistory},
		}, nil
	}
	srv := httptest.NewServer(metrics.Handler(reader, metrics.Options{Trend: judge}))
	defer srv.Close()
	labels := `{metric="iops",round="isolated",target="fast/node-1",workload="rand-read-4k-qd1"}`
	for i := range 3 {
		code, body := scrape(t, srv.URL)
		if code != http.StatusOK {
			t.Fatalf("GET /metrics: %d\n%s", code, body)
		}
		got := series(t, bytes.NewReader(body))
		checkSeries(t, got, map[string]float64{metrics.NameRegression + labels: 2, metrics.NameTrendChange + labels: -0.45})
		if strings.Contains(string(body), `etcd-fdatasync",metric=`) || strings.Contains(string(body), `metric="sync_p99"`) {
			t.Errorf("too little history gave a series:\n%s", body)
		}
		if i == 1 {
			writer, err := store.Open(context.Background(), path)
			if err != nil {
				t.Fatal(err)
			}
			addRun(t, writer, "20261120-060000-dddd", "standard", t0.Add(3*time.Hour),
				figure{target: "other", round: result.RoundIsolated, workload: "seq-read", iops: 90, bw: 368640, p50: time.Millisecond,
					p90: 2 * time.Millisecond, p99: 5 * time.Millisecond, p999: 9 * time.Millisecond, mean: time.Millisecond})
			writer.Close()
		}
	}
	// The third scrape started assessing again in the background.
	for deadline := time.Now().Add(10 * time.Second); calls.Load() < 2 && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
	}
	scrape(t, srv.URL) // nothing new: no judgement
	time.Sleep(100 * time.Millisecond)
	if n := calls.Load(); n != 2 {
		t.Errorf("trend judged %d times over 4 scrapes with one new run between the 2nd and 3rd, want 2", n)
	}
}

// A contention round's probe alone and under load are two series, never
// averaged together.
func TestContentionRoles(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &result.Run{ID: "20261120-030000-aaaa", Suite: "contention", Source: "storbench", Status: result.StatusComplete, Started: t0}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for role, iops := range map[string]float64{"alone": 400, "loaded": 100} {
		labels := map[string]string{}
		result.LabelContention.Set(labels, role)
		r := &result.Result{RunID: run.ID, Target: "/srv/etcd", Round: result.RoundContention, Repetition: 1, Workload: "etcd-fdatasync",
			Labels: labels, Status: result.StatusComplete, Write: &result.Direction{IOPS: iops, BytesPerSec: iops * 2300}}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := metrics.Export(ctx, st, &buf, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	got := series(t, &buf)
	checkSeries(t, got, map[string]float64{
		`storbench_iops{round="contention:alone",suite="contention",target="/srv/etcd",workload="etcd-fdatasync"}`:  400,
		`storbench_iops{round="contention:loaded",suite="contention",target="/srv/etcd",workload="etcd-fdatasync"}`: 100,
	})
}
