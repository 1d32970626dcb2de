package web

import (
	"context"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// A sweep's run page and its comparison draw the sweep's chart and name
// its knee.
func TestSweepPages(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 28, 1, 0, 0, 0, time.UTC)
	run := &result.Run{ID: "20261128-010000-5eep", Suite: "sweep:rand-read-4k-qd1", Source: "storbench", Status: result.StatusComplete, Started: start, Finished: start.Add(time.Minute)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for n, iops := range map[int]float64{1: 1000, 2: 1900, 4: 3600, 8: 3700} {
		r := &result.Result{RunID: run.ID, Target: "/mnt/ssd", Round: result.SweepRound(n), Repetition: 1, Workload: "rand-read-4k-qd1",
			Labels: map[string]string{string(result.LabelClients): "x"}, Status: result.StatusComplete, Started: start, Finished: start.Add(time.Second),
			Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: int64(iops), Runtime: time.Second,
				Completion: result.Latency{Samples: 100, Mean: time.Millisecond, Percentiles: []result.Percentile{{P: 99, Value: time.Duration(n) * time.Millisecond}}}}}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	ts := serve(t, Options{DB: db})
	for _, page := range []string{"/runs/" + run.ID, "/compare?run=" + run.ID} {
		code, body := get(t, http.DefaultClient, ts.URL+page)
		if code != http.StatusOK || !strings.Contains(body, `<svg class="sweep"`) ||
			!strings.Contains(body, "Knee: 3600 IOPS at 4 clients, then flat") {
			t.Errorf("%s: %d, no sweep chart or knee:\n%s", page, code, body)
		}
	}
}
