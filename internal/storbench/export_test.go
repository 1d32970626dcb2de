package storbench

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// exportStore is a database holding one run with one result.
func exportStore(t *testing.T) store.Store {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	run := &result.Run{ID: "20261120-030000-aaaa", Suite: "standard", Source: "storbench", Status: result.StatusComplete, Started: time.Unix(1e9, 0)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	r := &result.Result{RunID: run.ID, Target: "/srv/a", Round: result.RoundIsolated, Repetition: 1, Workload: "seq-read",
		Status: result.StatusComplete, Read: &result.Direction{IOPS: 250, BytesPerSec: 262144000}}
	if err := st.AddResult(ctx, r); err != nil {
		t.Fatal(err)
	}
	return st
}

const wantLine = `storbench_bandwidth_bytes_per_second{hostname="",node="",round="isolated",storage_class="",suite="standard",target="/srv/a",workload="seq-read"} 2.62144e+08`

func TestExportFile(t *testing.T) {
	st := exportStore(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "storbench.prom")
	if err := os.WriteFile(path, []byte("old\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Export(context.Background(), st, ExportRequest{Format: ExportPrometheus, Path: path}); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), wantLine+"\n") {
		t.Errorf("%s lacks %s:\n%s", path, wantLine, data)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v, want 0644 (the textfile collector may run as another user)", fi.Mode().Perm())
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside the file: %v", entries)
	}

	var out bytes.Buffer
	if err := Export(context.Background(), st, ExportRequest{Format: ExportPrometheus, Path: "-", Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	if out.String() != string(data) {
		t.Errorf("standard output differs from the file:\n%s", out.String())
	}
}

// A file that cannot be replaced keeps its content and leaves nothing
// beside it; requests that cannot be carried out are RequestErrors.
func TestExportRefused(t *testing.T) {
	st := exportStore(t)
	ctx := context.Background()
	dir := t.TempDir()
	// A directory where the file should be: the rename fails after the
	// temporary file was written.
	blocked := filepath.Join(dir, "storbench.prom")
	if err := os.MkdirAll(filepath.Join(blocked, "keep"), 0o755); err != nil {
		t.Fatal(err)
	}
	err := Export(ctx, st, ExportRequest{Format: ExportPrometheus, Path: blocked})
	if err == nil || !strings.Contains(err.Error(), "replacing "+blocked) {
		t.Errorf("export over a directory: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("left beside the file: %v", entries)
	}

	missing := store.NewLazy(filepath.Join(dir, "none", "results.db"))
	for name, tc := range map[string]struct {
		st   store.Store
		req  ExportRequest
		want string
	}{
		"unknown format": {st, ExportRequest{Format: "csv", Path: "x.prom"}, `--format "csv": choose prometheus`},
		"no path":        {st, ExportRequest{Format: ExportPrometheus}, "name the file to write"},
		"no database":    {missing, ExportRequest{Format: ExportPrometheus, Path: filepath.Join(dir, "x.prom")}, "no database at " + missing.Path()},
	} {
		t.Run(name, func(t *testing.T) {
			err := Export(ctx, tc.st, tc.req)
			var re *RequestError
			if !errors.As(err, &re) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want a RequestError saying %q", err, tc.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "none")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a refused export created the database's folder: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("refused exports left files: %v", entries)
	}
}
