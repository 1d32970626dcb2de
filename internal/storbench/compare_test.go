package storbench_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// analysisFixture is the four-target, two-group, two-round fixture of the
// analysis tests: /mnt/n1 and /mnt/n2 labelled storage=nvme, /mnt/s1 and
// /mnt/s2 storage=sata.
const analysisFixture = "../analysis/testdata/fixture.json"

// sqliteStore opens a real SQLite file in a temporary directory.
func sqliteStore(t *testing.T) store.Store {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil {
			t.Error(err)
		}
	})
	return st
}

// storeRun writes a run and its results through the store.
func storeRun(t *testing.T, st store.Store, run result.Run, rs []result.Result) string {
	t.Helper()
	ctx := context.Background()
	if run.Suite == "" {
		run.Suite, run.Source = "standard", "storbench"
	}
	if run.Status == "" {
		run.Status = result.StatusComplete
	}
	if err := st.CreateRun(ctx, &run); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].RunID = run.ID
		if err := st.AddResult(ctx, &rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return run.ID
}

// fixtureResults reads a JSON list of results from testdata.
func fixtureResults(t *testing.T, path string) []result.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

var started = time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)

func TestCompare(t *testing.T) {
	st := sqliteStore(t)
	id := storeRun(t, st, result.Run{ID: "20261122-100000-aaaa", Started: started}, fixtureResults(t, analysisFixture))
	storeRun(t, st, result.Run{ID: "20261122-100000-bbbb", Started: started}, nil)
	ctx := context.Background()

	tests := []struct {
		name    string
		req     storbench.CompareRequest
		runs    int
		groups  []string
		badReq  bool  // a RequestError
		wantErr error // errors.Is
	}{
		{name: "targets", req: storbench.CompareRequest{RunIDs: []string{id}}, runs: 1, groups: []string{"/mnt/n1", "/mnt/n2", "/mnt/s1", "/mnt/s2"}},
		{name: "grouped against a baseline", req: storbench.CompareRequest{RunIDs: []string{id}, GroupBy: "storage", Baseline: "storage=nvme"},
			runs: 1, groups: []string{"nvme", "sata"}},
		{name: "a run named twice, once by prefix", req: storbench.CompareRequest{RunIDs: []string{id, "20261122-100000-a"}, Round: result.RoundParallel},
			runs: 1, groups: []string{"/mnt/n1", "/mnt/n2", "/mnt/s1", "/mnt/s2"}},
		{name: "no run", req: storbench.CompareRequest{}, badReq: true},
		{name: "unknown run", req: storbench.CompareRequest{RunIDs: []string{"19990101"}}, badReq: true, wantErr: store.ErrNotFound},
		{name: "ambiguous prefix", req: storbench.CompareRequest{RunIDs: []string{"20261122"}}, badReq: true},
		{name: "baseline nobody has", req: storbench.CompareRequest{RunIDs: []string{id}, Baseline: "storage=usb"}, badReq: true},
		{name: "round nobody ran", req: storbench.CompareRequest{RunIDs: []string{id}, Round: result.RoundContention}, wantErr: analysis.ErrNoResults},
		{name: "a run without results", req: storbench.CompareRequest{RunIDs: []string{"20261122-100000-bbbb"}}, wantErr: analysis.ErrNoResults},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cmp, err := storbench.Compare(ctx, st, tt.req)
			var req *storbench.RequestError
			if got := errors.As(err, &req); got != tt.badReq {
				t.Errorf("error %v: a RequestError: %v, want %v", err, got, tt.badReq)
			}
			if tt.wantErr != nil && !errors.Is(err, tt.wantErr) {
				t.Errorf("error %v does not wrap %v", err, tt.wantErr)
			}
			if tt.badReq || tt.wantErr != nil {
				if err == nil {
					t.Error("no error")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(cmp.Runs) != tt.runs || cmp.Runs[0].ID != id {
				t.Errorf("runs = %+v", cmp.Runs)
			}
			if got := cmp.View.Comparison.Groups; len(got) != len(tt.groups) || got[0] != tt.groups[0] {
				t.Errorf("groups = %v, want %v", got, tt.groups)
			}
			if len(cmp.View.Sections) == 0 || len(cmp.View.Records) == 0 || cmp.Verdicts != nil {
				t.Errorf("view: %d sections, %d records, verdicts %v", len(cmp.View.Sections), len(cmp.View.Records), cmp.Verdicts)
			}
		})
	}
}

// TestRefusedRequestsCreateNothing: a request refused before reading
// leaves a lazily opened store unopened, so a command that refuses to
// start creates no database.
func TestRefusedRequestsCreateNothing(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "results.db")
	st := store.NewLazy(db)
	defer st.Close()
	refused := []error{
		func() error { _, err := storbench.Compare(ctx, st, storbench.CompareRequest{}); return err }(),
		func() error {
			_, err := storbench.Report(ctx, st, storbench.ReportRequest{For: []string{"zfs"}, CompareRequest: storbench.CompareRequest{RunIDs: []string{"x"}}})
			return err
		}(),
		func() error { _, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: "etcd"}); return err }(),
		func() error { _, err := storbench.Runs(ctx, st, storbench.RunsRequest{Status: "sleeping"}); return err }(),
	}
	for i, err := range refused {
		var req *storbench.RequestError
		if !errors.As(err, &req) {
			t.Errorf("request %d: %v, want a RequestError", i, err)
		}
	}
	if st.Opened() {
		t.Error("a refused request opened the database")
	}
	if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the database exists: %v", err)
	}
}
