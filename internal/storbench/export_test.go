package storbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
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
		"unknown format": {st, ExportRequest{Format: "csv", Path: "x.prom"}, `Format "csv": choose prometheus`},
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

// storbench_regression and the change come from Trend over the stored
// history: a disk that halved its IOPS for its last four runs after ten
// steady ones is a regression 50% below its baseline; a steady one is not.
func TestExportRegression(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 10, 1, 3, 0, 0, 0, time.UTC)
	for i := range 14 {
		when := start.Add(time.Duration(i) * 24 * time.Hour)
		run := &result.Run{ID: fmt.Sprintf("20261001-%06d-aaaa", i), Suite: "standard", Source: "storbench", Status: result.StatusComplete, Started: when}
		if err := st.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		wobble := 1 + 0.005*float64(i%3-1)
		for target, iops := range map[string]float64{"/mnt/steady": 1000 * wobble, "/mnt/failing": 1000 * wobble} {
			if target == "/mnt/failing" && i >= 10 {
				iops /= 2
			}
			r := &result.Result{RunID: run.ID, Target: target, Round: result.RoundIsolated, Repetition: 1, Workload: "rand-read-4k-qd1",
				Status: result.StatusComplete, Started: when, Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096}}
			if err := st.AddResult(ctx, r); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out bytes.Buffer
	if err := Export(ctx, st, ExportRequest{Format: ExportPrometheus, Path: "-", Stdout: &out}); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	for _, want := range []string{
		`storbench_regression{metric="iops",round="isolated",target="/mnt/failing",workload="rand-read-4k-qd1"} 2`,
		`storbench_regression{metric="iops",round="isolated",target="/mnt/steady",workload="rand-read-4k-qd1"} 0`,
	} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("export lacks %s", want)
		}
	}
	re := regexp.MustCompile(`storbench_trend_change_ratio\{metric="iops",round="isolated",target="/mnt/failing",workload="rand-read-4k-qd1"\} (\S+)`)
	m := re.FindStringSubmatch(text)
	if m == nil {
		t.Fatalf("no change ratio for /mnt/failing:\n%s", text)
	}
	if v, err := strconv.ParseFloat(m[1], 64); err != nil || v > -0.48 || v < -0.52 {
		t.Errorf("change ratio %s, want about -0.5 (half the baseline)", m[1])
	}
}
