package metrics_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// startPrometheus runs a real Prometheus server on 127.0.0.1 scraping
// target every second, with its storage in a temporary folder, and stops
// it when the test ends. It returns the server's base URL.
func startPrometheus(t *testing.T, target string) string {
	t.Helper()
	bin := testenv.Tool(t, "prometheus", "prometheus")
	dir := t.TempDir()
	config := fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: storbench
    static_configs:
      - targets: [%q]
`, target)
	if err := os.WriteFile(filepath.Join(dir, "prometheus.yml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	cmd := exec.Command(bin, "--config.file="+filepath.Join(dir, "prometheus.yml"), "--storage.tsdb.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr, "--log.level=warn")
	var logs testenv.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	t.Cleanup(func() {
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Errorf("stopping prometheus: %v", err)
		}
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			t.Errorf("prometheus did not stop within 15 s of SIGTERM; killing it")
			if err := cmd.Process.Kill(); err != nil {
				t.Errorf("killing prometheus: %v", err)
			}
			<-done
		}
		if t.Failed() {
			t.Logf("prometheus output:\n%s", logs.String())
		}
	})
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(base + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return base
			}
		}
		select {
		case err := <-done:
			t.Fatalf("prometheus exited: %v\n%s", err, logs.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("prometheus not ready at %s after 60 s:\n%s", base, logs.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// query runs an instant PromQL query and returns "name{labels}" -> value,
// without the job and instance labels Prometheus adds.
func query(t *testing.T, base, q string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("query %s: %v", q, err)
	}
	if body.Status != "success" {
		t.Fatalf("query %s: %s", q, body.Error)
	}
	out := map[string]float64{}
	for _, r := range body.Data.Result {
		name := r.Metric["__name__"]
		delete(r.Metric, "__name__")
		delete(r.Metric, "job")
		delete(r.Metric, "instance")
		s, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			t.Fatalf("query %s: value %v: %v", q, r.Value[1], err)
		}
		out[seriesKey(name, r.Metric)] = v
	}
	return out
}

// A real Prometheus server scrapes the handler over a real database: the
// series it stores carry the database's figures in base units, for runs
// stored through the store API and for a real fio output imported.
func TestPrometheusScrapes(t *testing.T) {
	st, path := populate(t)
	imported := importEtcd(t, st)

	reader := store.NewLazy(path)
	defer reader.Close()
	srv := httptest.NewServer(metrics.Handler(reader, metrics.Options{Runtime: true}))
	defer srv.Close()
	base := startPrometheus(t, strings.TrimPrefix(srv.URL, "http://"))

	// Wait for a scrape that stored every family.
	var got map[string]float64
	deadline := time.Now().Add(90 * time.Second)
	for {
		got = query(t, base, `{__name__=~"storbench_.+", job="storbench"}`)
		if up := query(t, base, `up{job="storbench"}`); len(up) == 1 && len(got) >= len(wantSeries) {
			for _, v := range up {
				if v != 1 {
					t.Fatalf("up = %v: the scrape failed", v)
				}
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no complete scrape within 90 s: %d series", len(got))
		}
		time.Sleep(500 * time.Millisecond)
	}
	checkSeries(t, got, wantSeries)
	checkSeries(t, got, imported)
	if g := query(t, base, `go_goroutines{job="storbench"}`); len(g) != 1 {
		t.Errorf("go_goroutines: %v", g)
	}
}

// importEtcd imports real fio output of etcd's fdatasync job (fio 3.x JSON)
// through storbench.Import and returns the series its figures must give,
// computed from the result as stored.
func importEtcd(t *testing.T, st store.Store) map[string]float64 {
	t.Helper()
	ctx := context.Background()
	rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"../importer/testdata/fio-etcd-fdatasync.json"},
		Target: "/var/lib/etcd", Labels: map[string]string{result.LabelHostname.String(): "pi4-2"}})
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{rep.RunID}})
	if err != nil || len(results) != 1 {
		t.Fatalf("imported results: %d, %v", len(results), err)
	}
	run, err := st.Run(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	r := results[0]
	labels := map[string]string{"target": r.Target, "suite": run.Suite, "round": r.Round, "workload": r.Workload}
	result.LabelHostname.Set(labels, "pi4-2")
	result.LabelNode.Set(labels, "")
	result.LabelStorageClass.Set(labels, "")
	out := map[string]float64{}
	want := func(name string, metric string, scale float64, extra ...string) {
		v, ok := r.Metric(metric)
		if !ok {
			t.Fatalf("the imported result holds no %s", metric)
		}
		l := map[string]string{}
		for k, v := range labels {
			l[k] = v
		}
		if len(extra) == 2 {
			l[extra[0]] = extra[1]
		}
		out[seriesKey(name, l)] = v * scale
	}
	want(metrics.NameIOPS, result.MetricIOPS, 1)
	want(metrics.NameBandwidth, result.MetricBW, 1)
	want(metrics.NameSyncP99, result.MetricSyncP99, 1e-9)
	want(metrics.NameLatency, result.MetricLatP99, 1e-9, "quantile", "0.99")
	want(metrics.NameLatency+"_sum", result.MetricLatMean, 1e-9)
	out[seriesKey(metrics.NameLastRun, labels)] = float64(run.Started.UnixNano()) / 1e9
	return out
}
