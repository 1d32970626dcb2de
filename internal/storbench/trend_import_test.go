package storbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
)

// TestBackfilledHistory imports a history measured before storbench (a CSV
// with a time column, a JSON with a time field) into a real SQLite file:
// each measured time is a run of its own, timed when it was measured, and
// trend finds the step in it.
func TestBackfilledHistory(t *testing.T) {
	ctx := context.Background()
	st := sqliteStore(t)
	rep, err := storbench.Import(ctx, st, storbench.ImportRequest{
		Files: []string{"../importer/testdata/backfill/history.csv", "../importer/testdata/backfill/history.json"}})
	if err != nil {
		t.Fatal(err)
	}
	// 16 nights of the NAS and 10 of the USB disk, 7 of them the same
	// night as the NAS's but half an hour later.
	if rep.Results != 27 || len(rep.MoreRuns) != 25 {
		t.Fatalf("%d results in run %s and %d more runs", rep.Results, rep.RunID, len(rep.MoreRuns))
	}
	runs, err := storbench.Runs(ctx, st, storbench.RunsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 26 {
		t.Fatalf("%d runs, want 26", len(runs))
	}
	newest, oldest := runs[0], runs[len(runs)-1]
	if want := time.Date(2026, 3, 17, 3, 0, 0, 0, time.UTC); !newest.Started.Equal(want) || newest.Targets[0] != "nas-disk-2" {
		t.Errorf("newest run %s at %s on %v, want the NAS at %s", newest.ID, newest.Started, newest.Targets, want)
	}
	if want := time.Date(2026, 3, 2, 2, 30, 0, 0, time.UTC); !oldest.Started.Equal(want) || oldest.Targets[0] != "usb-ssd" {
		t.Errorf("oldest run %s at %s on %v, want the USB disk at %s", oldest.ID, oldest.Started, oldest.Targets, want)
	}
	if oldest.Source != "csv,json" || !strings.Contains(oldest.Note, "part of import run "+rep.RunID) {
		t.Errorf("oldest run: source %q note %q", oldest.Source, oldest.Note)
	}

	tr, err := storbench.Trend(ctx, st, storbench.TrendRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Series) != 2 || tr.Verdict != trend.Regression {
		t.Fatalf("%s over %d series", tr.Verdict, len(tr.Series))
	}
	nas, usb := tr.Series[0], tr.Series[1]
	if nas.Target != "nas-disk-2" || nas.Verdict != trend.Regression || nas.Change != trend.Step ||
		!nas.Since.Time.Equal(time.Date(2026, 3, 14, 3, 0, 0, 0, time.UTC)) || nas.BaselineRuns != 12 || nas.Runs != 16 {
		t.Errorf("NAS: %+v", nas.Assessment)
	}
	if !strings.HasPrefix(nas.Message, "rand-write-4k-qd32 on nas-disk-2: 4") || !strings.Contains(nas.Message, "below its baseline of 12 runs since 2026-03-02") {
		t.Errorf("NAS message: %s", nas.Message)
	}
	// The night with two repetitions is one point.
	if len(nas.Points) != 16 {
		t.Errorf("%d points, want 16", len(nas.Points))
	}
	if usb.Target != "usb-ssd" || usb.Verdict != trend.OK || usb.Metric != result.MetricBW || usb.Runs != 10 {
		t.Errorf("USB: %+v", usb.Assessment)
	}
	// The latency trend of the same history goes up at the same run.
	lat, err := storbench.Trend(ctx, st, storbench.TrendRequest{Target: "nas-disk-2", Metric: result.MetricLatP99})
	if err != nil {
		t.Fatal(err)
	}
	if j := lat.Series[0]; j.Verdict != trend.Regression || j.Delta < 0.5 || j.Since.RunID != nas.Since.RunID {
		t.Errorf("p99: %s", j.Message)
	}
}

// TestImportTime: --time times every result of files that do not say
// (fio's own timestamps too), and the run is timed then, not at import.
func TestImportTime(t *testing.T) {
	ctx := context.Background()
	st := sqliteStore(t)
	at := time.Date(2025, 11, 3, 22, 15, 0, 0, time.UTC)
	rep, err := storbench.Import(ctx, st, storbench.ImportRequest{Time: at,
		Files: []string{"../importer/testdata/fio-randread-4k-qd32.json", "../importer/testdata/results.csv"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.MoreRuns) != 0 {
		t.Errorf("more runs %v, want one run", rep.MoreRuns)
	}
	run, err := st.Run(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if !run.Started.Equal(at) {
		t.Errorf("run started %s, want %s", run.Started, at)
	}
	h, err := st.History(ctx, store.HistoryFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != rep.Results || len(h) == 0 {
		t.Fatalf("%d results in the history, %d imported", len(h), rep.Results)
	}
	for _, m := range h {
		if !m.Measured.Equal(at) {
			t.Errorf("%s on %s measured %s, want %s", m.Workload, m.Target, m.Measured, at)
		}
	}

	// A row's own time wins over --time.
	rep, err = storbench.Import(ctx, st, storbench.ImportRequest{Time: at, Files: []string{"../importer/testdata/backfill/history.json"}})
	if err != nil {
		t.Fatal(err)
	}
	run, err = st.Run(ctx, rep.RunID)
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 3, 2, 2, 30, 0, 0, time.UTC); !run.Started.Equal(want) || len(rep.MoreRuns) != 9 {
		t.Errorf("run at %s with %d more, want %s and 9", run.Started, len(rep.MoreRuns), want)
	}
}

// TestImportBadTime: a bad time names the file, line and value, and
// nothing is stored, not even the rows before it.
func TestImportBadTime(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	bad := filepath.Join(dir, "backfill.csv")
	if err := os.WriteFile(bad, []byte("target,workload,metric,value,unit,time\n"+
		"pi,seq-read,bw,112,MB/s,2026-03-02T03:00:00Z\n"+
		"pi,seq-read,bw,110,MB/s,2026-03-03T03:00:00Z\n"+
		"pi,seq-read,bw,111,MB/s,3 March 2026\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := sqliteStore(t)
	_, err := storbench.Import(ctx, st, storbench.ImportRequest{Files: []string{"../importer/testdata/results.csv", bad}})
	var req *storbench.RequestError
	if !errors.As(err, &req) || !strings.Contains(err.Error(), bad+":4:") || !strings.Contains(err.Error(), `"3 March 2026"`) {
		t.Fatalf("err = %v, want a RequestError naming %s:4 and the value", err, bad)
	}
	runs, err := storbench.Runs(ctx, st, storbench.RunsRequest{})
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs stored (%v), want none", len(runs), err)
	}
	if h, err := st.History(ctx, store.HistoryFilter{}); err != nil || len(h) != 0 {
		t.Errorf("%d results stored (%v), want none", len(h), err)
	}
}
