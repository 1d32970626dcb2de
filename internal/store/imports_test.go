package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func sampleImport(runID, sha string) *Import {
	r := sample("", "seq-read")
	r.DisplayUnits = map[string]string{result.MetricBW: "MiB/s"}
	errs, ops := uint64(0), uint64(134444568)
	return &Import{
		Run: &result.Run{ID: runID, Suite: "import", Source: "fio-text,smartctl", Status: result.StatusComplete,
			Started: time.Unix(200, 0), Finished: time.Unix(200, 0), Targets: []string{"/mnt/ssd", "/dev/sda"}},
		Results: []result.Result{*r, *sample("", "rand-read-4k-qd1")},
		Health: []result.Health{{Target: "/dev/sda", Model: "ST2000DM008", PowerOnHours: 28425, Flags: []result.HealthFlag{},
			Attributes: []result.SMARTAttribute{{ID: 1, Name: "Raw_Read_Error_Rate", RawValue: ops, Operations: &ops, Errors: &errs}}}},
		Files: []ImportedFile{{SHA256: sha, File: "fio.txt", Format: "fio-text", Tool: "fio", ToolVersion: "fio-3.33", SizeBytes: 2684, Results: 2, Imported: time.Unix(200, 0)}},
	}
}

func TestImportRun(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	imp := sampleImport("20261122-020000-0001", "aa11")
	if err := s.ImportRun(ctx, imp); err != nil {
		t.Fatal(err)
	}
	if imp.Results[0].ID == 0 || imp.Health[0].ID == 0 {
		t.Fatal("IDs not set")
	}
	got, err := s.Results(ctx, ResultFilter{RunIDs: []string{imp.Run.ID}})
	if err != nil || len(got) != 2 {
		t.Fatalf("results %d, %v", len(got), err)
	}
	if got[0].DisplayUnits[result.MetricBW] != "MiB/s" || got[0].RunID != imp.Run.ID {
		t.Errorf("display units %v run %q", got[0].DisplayUnits, got[0].RunID)
	}
	if raw, err := s.RawFioJSON(ctx, got[0].ID); err != nil || len(raw) == 0 {
		t.Errorf("raw output: %v", err)
	}
	files, err := s.RunImports(ctx, imp.Run.ID)
	if err != nil || len(files) != 1 || files[0].SHA256 != "aa11" || files[0].ToolVersion != "fio-3.33" || !files[0].Imported.Equal(time.Unix(200, 0)) {
		t.Fatalf("provenance %+v, %v", files, err)
	}
	hs, err := s.Health(ctx, HealthFilter{Latest: true})
	if err != nil || len(hs) != 1 || hs[0].RunID != imp.Run.ID || *hs[0].Attributes[0].Operations != 134444568 {
		t.Fatalf("health %+v, %v", hs, err)
	}

	// The same file again is refused as a whole, naming the earlier run.
	again := sampleImport("20261122-020000-0002", "aa11")
	err = s.ImportRun(ctx, again)
	var dup *DuplicateError
	if !errors.As(err, &dup) || dup.Files[0].RunID != imp.Run.ID {
		t.Fatalf("second import: %v", err)
	}
	if _, err := s.Run(ctx, again.Run.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("refused import left its run behind: %v", err)
	}
	if found, _ := s.ImportedFiles(ctx, []string{"aa11", "bb22"}); len(found) != 1 {
		t.Errorf("ImportedFiles found %d", len(found))
	}

	// A later health record of the same device is the latest one.
	later := sampleImport("20261122-030000-0003", "cc33")
	later.Run.Started = time.Unix(300, 0)
	later.Health[0].PowerOnHours = 28500
	if err := s.ImportRun(ctx, later); err != nil {
		t.Fatal(err)
	}
	hs, _ = s.Health(ctx, HealthFilter{Latest: true})
	all, _ := s.Health(ctx, HealthFilter{})
	if len(hs) != 1 || hs[0].PowerOnHours != 28500 || len(all) != 2 {
		t.Errorf("latest %+v of %d", hs, len(all))
	}
}

func TestImportRunIsAllOrNothing(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	imp := sampleImport("20261122-020000-0009", "dd44")
	// The second file's provenance row fails (same SHA-256 twice) after the
	// run, both results and the health record were written.
	imp.Files = append(imp.Files, imp.Files[0])
	if err := s.ImportRun(ctx, imp); err == nil {
		t.Fatal("import with a failing row succeeded")
	}
	if _, err := s.Run(ctx, imp.Run.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("run left behind: %v", err)
	}
	if rs, _ := s.Results(ctx, ResultFilter{}); len(rs) != 0 {
		t.Errorf("%d results left behind", len(rs))
	}
	if hs, _ := s.Health(ctx, HealthFilter{}); len(hs) != 0 {
		t.Errorf("%d health records left behind", len(hs))
	}
}

// ImportWriter stores result by result in one transaction: Abort leaves
// nothing behind, Commit brings the run's workloads and targets up to date.
func TestImportWriter(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	imp := sampleImport("20261122-030000-0001", "bb22")
	w, err := s.BeginImport(ctx, imp.Run, imp.Files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range imp.Results {
		if err := w.AddResult(ctx, &imp.Results[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Abort(); err != nil {
		t.Fatal(err)
	}
	if runs, _ := s.Runs(ctx, RunFilter{}); len(runs) != 0 {
		t.Fatalf("%d runs after Abort", len(runs))
	}
	if files, _ := s.ImportedFiles(ctx, []string{"bb22"}); len(files) != 0 {
		t.Fatalf("provenance kept after Abort: %+v", files)
	}

	w, err = s.BeginImport(ctx, imp.Run, imp.Files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range imp.Results {
		if err := w.AddResult(ctx, &imp.Results[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.AddHealth(ctx, &imp.Health[0]); err != nil {
		t.Fatal(err)
	}
	imp.Run.Workloads = []string{"seq-read", "rand-read-4k-qd1"}
	imp.Run.Note = "imported from fio.txt"
	if err := w.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Errorf("Abort after Commit: %v", err)
	}
	run, err := s.Run(ctx, imp.Run.ID)
	if err != nil || len(run.Workloads) != 2 || run.Note != "imported from fio.txt" {
		t.Fatalf("run %+v, %v", run, err)
	}
	if got, _ := s.Results(ctx, ResultFilter{RunIDs: []string{run.ID}}); len(got) != 2 || imp.Results[1].ID == 0 {
		t.Fatalf("%d results stored", len(got))
	}
	if _, err := s.BeginImport(ctx, &result.Run{ID: "20261122-030000-0002"}, imp.Files); err == nil {
		t.Fatal("a file imported before must be refused at BeginImport")
	}
}
