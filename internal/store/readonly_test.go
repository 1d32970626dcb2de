package store

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// A read-only handle refuses writes, creates nothing for a missing file,
// and reads every commit of a writer working at the same time without
// "database is locked".
func TestOpenReadOnlyBesideAWriter(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "results.db")
	if _, err := OpenReadOnly(ctx, path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing database: %v, want os.ErrNotExist", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("opening a missing database read-only left %d files", len(entries))
	}
	w, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	r, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if !r.ReadOnly() {
		t.Error("ReadOnly() = false")
	}
	var ro *ReadOnlyError
	if err := r.CreateRun(ctx, &result.Run{ID: "x", Suite: "s", Status: result.StatusRunning}); !errors.As(err, &ro) {
		t.Fatalf("a write through the read-only handle: %v, want a ReadOnlyError", err)
	}

	const n = 200
	var wg sync.WaitGroup
	wg.Add(1)
	errs := make(chan error, 2)
	go func() {
		defer wg.Done()
		run := &result.Run{ID: "w", Suite: "quick", Status: result.StatusRunning, Started: time.Now(), Targets: []string{"/mnt/a"}}
		if err := w.CreateRun(ctx, run); err != nil {
			errs <- err
			return
		}
		for i := range n {
			if err := w.AddResult(ctx, sample("w", fmt.Sprint("wl", i))); err != nil {
				errs <- err
				return
			}
		}
		run.Status = result.StatusComplete
		errs <- w.UpdateRun(ctx, run)
	}()
	seen := 0
	for deadline := time.Now().Add(30 * time.Second); seen < n && time.Now().Before(deadline); {
		figs, err := r.Figures(ctx, ResultFilter{RunIDs: []string{"w"}})
		if err != nil {
			t.Fatalf("reading beside the writer: %v", err)
		}
		// History reads in one snapshot too (the dashboard's trend page).
		if _, err := r.History(ctx, HistoryFilter{Target: "/mnt/a"}); err != nil {
			t.Fatalf("history beside the writer: %v", err)
		}
		if len(figs) < seen {
			t.Fatalf("results went from %d to %d", seen, len(figs))
		}
		seen = len(figs)
	}
	wg.Wait()
	if err := <-errs; err != nil {
		t.Fatalf("writer: %v", err)
	}
	run, err := r.Run(ctx, "w")
	if err != nil || run.Status != result.StatusComplete || seen != n {
		t.Fatalf("after the writer: run %+v, %v; %d results seen, want %d", run, err, seen, n)
	}
}
