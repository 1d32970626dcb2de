package storbench

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// TestHelperRunSSHKilled is not a test: killedRun runs the test binary as
// a storbench that is killed in the middle of a run on an SSH target.
func TestHelperRunSSHKilled(t *testing.T) {
	target := os.Getenv("STORBENCH_SSH_KILLED_RUN")
	if target == "" {
		t.Skip("the storbench process killedRun kills")
	}
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-long.yaml", false
	req.Targets = []string{target}
	// The store lives in the parent test's directory: this process is
	// killed, so a t.TempDir of its own would never be removed.
	st := store.NewLazy(filepath.Join(os.Getenv("STORBENCH_SSH_KILLED_STORE"), "r.db"))
	defer st.Close()
	_, err := Run(context.Background(), st, req, nil)
	t.Fatalf("the run was meant to be killed: %v", err)
}

// killedRun starts a storbench process running a 30 s workload on target
// (in dir on this machine), kills it (SIGKILL) once fio writes there, and
// returns the work directory it left.
func killedRun(t *testing.T, target, dir string) string {
	t.Helper()
	before := entries(t, dir)
	cmd, _ := startWriting(t, "TestHelperRunSSHKilled", dir, "STORBENCH_SSH_KILLED_RUN="+target, "STORBENCH_SSH_KILLED_STORE="+t.TempDir())
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	// fio goes first; the wrapper that stopped it (working in the
	// directory too) a moment later.
	deadline := time.Now().Add(30 * time.Second)
	for fioIn(dir) > 0 || workingIn(dir) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("processes still work in %s on the host 30s after storbench was killed: %q", dir, working(dir))
		}
		time.Sleep(100 * time.Millisecond)
	}
	var work []string
	for _, e := range entries(t, dir) {
		if !slices.Contains(before, e) {
			work = append(work, filepath.Join(dir, e))
		}
	}
	if len(work) != 1 {
		t.Fatalf("the killed run left %v in %s, want one work directory", work, dir)
	}
	return work[0]
}

// A storbench killed mid-run leaves its work directory on the host;
// cleanup --ssh removes it, and only it: a user's files, a directory
// named like storbench's but not marked as its own, and one holding a
// file storbench does not make stay. The next run on a directory removes
// what a killed run left there by itself, and says so.
func TestCleanupSSHAfterKilledRun(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	target := sshURL(t, servers[0], dir)
	keep := map[string]string{
		"user-data": "the user's",
		"storbench-20250101-000000-abcd/storbench-x.dat": "not marked",
	}
	for name, content := range keep {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	before := entries(t, dir)

	left := killedRun(t, target, dir)
	if _, err := os.Stat(filepath.Join(left, ssh.OwnerFile)); err != nil {
		t.Fatalf("the work directory is not marked as the run's: %v", err)
	}
	req := SSHCleanupRequest{Targets: []string{target}, DryRun: true}
	rep, err := CleanupSSH(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	var would []string
	for _, d := range rep.Targets[0].Dirs {
		if d.Kept == "" {
			would = append(would, d.Dir)
		}
	}
	if !slices.Equal(would, []string{left}) {
		t.Errorf("dry run would remove %v, want %s (report %+v)", would, left, rep)
	}
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("the dry run removed %s", left)
	}
	req.DryRun = false
	if rep, err = CleanupSSH(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if after := entries(t, dir); !slices.Equal(after, before) {
		t.Errorf("after cleanup %s holds %v, want %v (report %+v)", dir, after, before, rep)
	}
	// The marked directory with a file storbench does not make stays.
	left = killedRun(t, target, dir)
	if err := os.WriteFile(filepath.Join(left, "notes.txt"), []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep, err = CleanupSSH(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(left, "notes.txt")); err != nil {
		t.Errorf("cleanup removed a directory holding a user's file: %+v", rep)
	}
	os.Remove(filepath.Join(left, "notes.txt"))

	// The next run removes it.
	run := DefaultRunRequest()
	run.Suite, run.Telemetry, run.Workloads = "testdata/run-tiny.yaml", false, []string{"rr"}
	run.Targets = []string{target}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	obs := &recorder{}
	if _, err := Run(context.Background(), st, run, obs); err != nil {
		t.Fatal(err)
	}
	if after := entries(t, dir); !slices.Equal(after, before) {
		t.Errorf("after the next run %s holds %v, want %v", dir, after, before)
	}
	if !slices.ContainsFunc(obs.notices, func(n string) bool { return strings.Contains(n, "removed "+left) }) {
		t.Errorf("the run did not say it removed %s: %q", left, obs.notices)
	}
}

// workingIn counts the processes whose working directory is under dir or
// whose command line names it.
func workingIn(dir string) int { return len(working(dir)) }

func working(dir string) []string {
	var out []string
	bases, _ := filepath.Glob("/proc/[0-9]*")
	for _, b := range bases {
		if b == "/proc/"+strconv.Itoa(os.Getpid()) {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join(b, "cwd"))
		cl, _ := os.ReadFile(filepath.Join(b, "cmdline"))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cl), dir) {
			out = append(out, b+" "+cwd+" "+string(cl[:min(len(cl), 200)]))
		}
	}
	return out
}
