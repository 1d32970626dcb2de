package store

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func open(t *testing.T) (*SQLite, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "sub", "results.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

func sample(runID, workload string) *result.Result {
	return &result.Result{
		RunID: runID, Target: "/mnt/ssd", Round: result.RoundIsolated, Repetition: 1, Workload: workload,
		Labels: map[string]string{"storage": "ssd"}, Status: result.StatusComplete,
		Started: time.Unix(100, 0), Finished: time.Unix(112, 0),
		Read: &result.Direction{IOPS: 1234.5, BytesPerSec: 5e6, TotalIOs: 12345, Bytes: 5e7, Runtime: 10 * time.Second,
			Completion: result.Latency{Samples: 12345, Mean: 800 * time.Microsecond, Min: 100, Max: time.Second,
				Percentiles: []result.Percentile{{P: 50, Value: 700 * time.Microsecond}, {P: 99, Value: 3 * time.Millisecond}}}},
		Sync:       &result.Latency{Samples: 10, Percentiles: []result.Percentile{{P: 99, Value: 9 * time.Millisecond}}},
		CPU:        result.CPU{UserPercent: 3.5, SystemPercent: 12},
		Bottleneck: &result.Attribution{LimitedBy: "device", Evidence: "device 98% utilised"},
		RawFioJSON: []byte(`{"fio version": "fio-3.33"}`),
	}
}

func TestRoundTrip(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	run := &result.Run{ID: "20261122-101010-abcd", Suite: "quick", Source: "storbench", Status: result.StatusRunning,
		Started: time.Unix(100, 0), Targets: []string{"/mnt/ssd"}, Workloads: []string{"seq-read"}, Labels: map[string]string{"storage": "ssd"}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	r := sample(run.ID, "seq-read")
	if err := s.AddResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	if r.ID == 0 {
		t.Fatal("no result ID assigned")
	}
	run.Status, run.Finished = result.StatusComplete, time.Unix(120, 0)
	if err := s.UpdateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	s.Close()

	// A fresh handle on the same file sees everything.
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	got, err := s2.Run(ctx, "20261122-1010")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != result.StatusComplete || !got.Finished.Equal(time.Unix(120, 0)) || got.Labels["storage"] != "ssd" || got.Targets[0] != "/mnt/ssd" {
		t.Errorf("run = %+v", got)
	}
	rs, err := s2.Results(ctx, ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(rs) != 1 {
		t.Fatalf("results %v %v", rs, err)
	}
	g := rs[0]
	if g.Read.IOPS != 1234.5 || g.Read.Completion.Mean != 800*time.Microsecond || g.Sync == nil || g.CPU.SystemPercent != 12 || g.Bottleneck.LimitedBy != "device" {
		t.Errorf("result = %+v", g)
	}
	if p, _ := g.Read.Completion.At(99); p != 3*time.Millisecond {
		t.Errorf("p99 = %v", p)
	}
	raw, err := s2.RawFioJSON(ctx, g.ID)
	if err != nil || string(raw) != `{"fio version": "fio-3.33"}` {
		t.Errorf("raw = %q %v", raw, err)
	}
	var mode string
	if err := s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal mode %q %v", mode, err)
	}
}

func TestRunLookup(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	for i, id := range []string{"20261122-101010-aaaa", "20261122-101010-aaab", "20261123-090000-bbbb"} {
		if err := s.CreateRun(ctx, &result.Run{ID: id, Suite: "quick", Status: result.StatusComplete, Started: time.Unix(int64(i), 0)}); err != nil {
			t.Fatal(err)
		}
	}
	var amb *AmbiguousError
	if _, err := s.Run(ctx, "20261122"); !errors.As(err, &amb) || len(amb.Matches) != 2 {
		t.Errorf("ambiguous prefix: %v", err)
	}
	if _, err := s.Run(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing: %v", err)
	}
	if _, err := s.Run(ctx, "2026112_"); !errors.Is(err, ErrNotFound) {
		t.Errorf("LIKE wildcard not escaped: %v", err)
	}
	if r, err := s.Run(ctx, "20261123"); err != nil || r.ID != "20261123-090000-bbbb" {
		t.Errorf("unique prefix: %v %v", r, err)
	}
	runs, err := s.Runs(ctx, RunFilter{Limit: 2})
	if err != nil || len(runs) != 2 || runs[0].ID != "20261123-090000-bbbb" {
		t.Errorf("newest first: %v %v", runs, err)
	}
	if err := s.CreateRun(ctx, &result.Run{ID: "20261123-090000-bbbb", Suite: "x", Status: result.StatusRunning}); err == nil {
		t.Error("duplicate run ID accepted")
	}
}

func TestResultFilters(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	if err := s.CreateRun(ctx, &result.Run{ID: "r1", Suite: "quick", Status: result.StatusComplete}); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"seq-read", "seq-write", "seq-read"} {
		if err := s.AddResult(ctx, sample("r1", w)); err != nil {
			t.Fatal(err)
		}
	}
	rs, err := s.Results(ctx, ResultFilter{RunIDs: []string{"r1"}, Workload: "seq-read"})
	if err != nil || len(rs) != 2 {
		t.Errorf("filter by workload: %d %v", len(rs), err)
	}
	if err := s.AddResult(ctx, sample("no-such-run", "x")); err == nil {
		t.Error("result for a missing run accepted")
	}
}
