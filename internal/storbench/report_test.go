package storbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

func TestReport(t *testing.T) {
	st := sqliteStore(t)
	id := storeRun(t, st, result.Run{ID: "20261122-100000-aaaa", Started: started}, fixtureResults(t, analysisFixture))
	ctx := context.Background()
	compare := storbench.CompareRequest{RunIDs: []string{id}, GroupBy: "storage"}

	// By default, every verdict the runs hold data for: the fixture has no
	// sync latency (etcd, ceph-osd) nor the pi suite's tests.
	rep, err := storbench.Report(ctx, st, storbench.ReportRequest{CompareRequest: compare})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Verdicts) != 1 || rep.Verdicts[0].For != analysis.ForGeneral || rep.Verdicts[0].Status == "" || len(rep.Verdicts[0].Checks) == 0 {
		t.Errorf("verdicts = %+v", rep.Verdicts)
	}
	if len(rep.Runs) != 1 || rep.View.Comparison.GroupBy != "storage" {
		t.Errorf("runs %v, grouped by %q", rep.Runs, rep.View.Comparison.GroupBy)
	}

	for _, tt := range []struct {
		name    string
		kinds   []string
		missing bool
	}{
		{"a verdict without data", []string{analysis.ForGeneral, analysis.ForEtcd}, true},
		{"an unknown verdict", []string{"zfs"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, err := storbench.Report(ctx, st, storbench.ReportRequest{CompareRequest: compare, For: tt.kinds})
			var req *storbench.RequestError
			var missing *analysis.MissingError
			if !errors.As(err, &req) || errors.As(err, &missing) != tt.missing {
				t.Errorf("error %v: want a RequestError (missing data: %v)", err, tt.missing)
			}
		})
	}
}

func TestSaveReport(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "report.html")
	for _, content := range []string{"first", "second"} {
		if err := storbench.SaveReport(path, []byte(content)); err != nil {
			t.Fatal(err)
		}
		data, err := os.ReadFile(path)
		if err != nil || string(data) != content {
			t.Fatalf("read back %q, %v; want %q", data, err, content)
		}
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, %v", fi.Mode(), err)
	}
	// A report that cannot take the place of what is there (a directory)
	// leaves it alone and nothing beside it.
	taken := filepath.Join(dir, "taken")
	if err := os.Mkdir(taken, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := storbench.SaveReport(taken, []byte("x")); err == nil {
		t.Error("replaced a directory")
	}
	if err := storbench.SaveReport(filepath.Join(dir, "missing", "r.md"), []byte("x")); err == nil {
		t.Error("wrote into a missing directory")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("left in the directory: %v, want report.html and taken", names)
	}
}
