package storbench_test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// killedRun stores a run as running whose process has exited, with a work
// directory holding storbench's test file on a local target, and returns
// that directory.
func killedRun(t *testing.T, db, id string) string {
	t.Helper()
	ctx := context.Background()
	self, err := proc.Reader{}.Self()
	if err != nil {
		t.Fatal(err)
	}
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	self.PID = exited.Process.Pid
	target := t.TempDir()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.CreateRun(ctx, &result.Run{ID: id, Suite: "quick", Status: result.StatusRunning, Started: time.Now(),
		Targets: []string{target}, Workloads: []string{"seq-read"}, Process: &self}); err != nil {
		t.Fatal(err)
	}
	work := filepath.Join(target, "storbench-"+id)
	if err := os.MkdirAll(work, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, "storbench-test.dat"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	return work
}

func TestCleanupLocal(t *testing.T) {
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "results.db")
	const id = "20261122-101500-dead"
	work := killedRun(t, db, id)
	open := func() store.Store {
		st, err := store.Open(ctx, db)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}

	// A read-only store cannot record the cleanup: nothing is removed.
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	rep, err := storbench.CleanupLocal(ctx, open(), storbench.CleanupRequest{})
	var ro *store.ReadOnlyError
	if rep != nil || !errors.As(err, &ro) {
		t.Errorf("read-only store: %+v, %v", rep, err)
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}
	st := open()

	rep, err = storbench.CleanupLocal(ctx, st, storbench.CleanupRequest{DryRun: true})
	if err != nil || !rep.DryRun || len(rep.Runs) != 1 || rep.Runs[0].ID != id || len(rep.Runs[0].Dirs) != 1 || rep.Runs[0].Dirs[0].Path != work {
		t.Fatalf("dry run: %+v, %v", rep, err)
	}
	if _, err := os.Stat(work); err != nil {
		t.Fatal("the dry run removed the work directory")
	}
	if _, err := storbench.CleanupLocal(ctx, st, storbench.CleanupRequest{RunID: "20990101"}); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("unknown run: %v", err)
	}

	rep, err = storbench.CleanupLocal(ctx, st, storbench.CleanupRequest{RunID: id[:10]})
	if err != nil || rep.DryRun || len(rep.Runs) != 1 || !rep.Runs[0].Marked || !rep.Runs[0].Dirs[0].Removed {
		t.Fatalf("cleanup: %+v, %v", rep, err)
	}
	if _, err := os.Stat(work); !os.IsNotExist(err) {
		t.Errorf("work directory left: %v", err)
	}
	if r, err := st.Run(ctx, id); err != nil || r.Status != result.StatusAbandoned {
		t.Errorf("run stored as %v (%v), want abandoned", r.Status, err)
	}
	rep, err = storbench.CleanupLocal(ctx, st, storbench.CleanupRequest{})
	if err != nil || rep.Runs == nil || len(rep.Runs) != 0 {
		t.Errorf("second cleanup: %+v, %v", rep, err)
	}
}

func TestCleanupKubeWithoutACluster(t *testing.T) {
	rep, err := storbench.CleanupKube(context.Background(), storbench.KubeCleanupRequest{
		Cluster: kubekit.ConnectOptions{Kubeconfig: filepath.Join(t.TempDir(), "missing")}, Timeout: time.Second})
	var ie *storbench.RequestError
	if rep != nil || !errors.As(err, &ie) {
		t.Errorf("got %+v, %v (%T), want an RequestError", rep, err, err)
	}
}
