package metrics_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
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
	if err := metrics.Export(context.Background(), st, &buf); err != nil {
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
	if err := metrics.Export(ctx, st, &buf); err != nil {
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
	if err := metrics.Export(context.Background(), reader, io.Discard); err == nil {
		t.Error("Export over a file that is not a database: no error")
	}
}
