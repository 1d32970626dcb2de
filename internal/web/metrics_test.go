package web

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// /metrics on serve: the latest figures of the database read, serve's
// own runtime, promtool's approval; behind the token like every page.
func TestMetrics(t *testing.T) {
	f := newFixture(t, false)
	ts := serve(t, Options{DB: f.db})
	code, body := get(t, ts.Client(), ts.URL+"/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d\n%s", code, body)
	}
	for _, want := range []string{"storbench_iops{", "storbench_latency_seconds{", `workload="rand-read-4k-qd32"`, "go_goroutines", "process_resident_memory_bytes"} {
		if !strings.Contains(body, want) {
			t.Errorf("no %q in /metrics", want)
		}
	}
	promtool := testenv.Tool(t, "promtool", "prometheus")
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(body)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}

	gated := serve(t, Options{DB: f.db, Token: "tok"})
	if code, _ := get(t, gated.Client(), gated.URL+"/metrics"); code != 401 {
		t.Errorf("/metrics without the token: %d, want 401", code)
	}
	if code, _ := get(t, gated.Client(), gated.URL+"/metrics", "Authorization", "Bearer tok"); code != 200 {
		t.Errorf("/metrics with the token: %d", code)
	}
	empty := serve(t, Options{DB: filepath.Join(t.TempDir(), "none.db")})
	if code, _ := get(t, empty.Client(), empty.URL+"/metrics"); code != 503 {
		t.Errorf("/metrics without a database: %d, want 503", code)
	}
}
