package app

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
)

// These tests run the storbench binary itself, built once, as a real
// process: signals, kill -9 and a second process see what users see.

var built struct {
	once sync.Once
	path string
	err  error
	dir  string
}

func TestMain(m *testing.M) {
	code := m.Run()
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// binary builds cmd/storbench once per test run.
func binary(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		built.dir, built.err = os.MkdirTemp("", "storbench-bin-")
		if built.err != nil {
			return
		}
		built.path = filepath.Join(built.dir, "storbench")
		out, err := exec.Command("go", "build", "-o", built.path, "github.com/storbench/storbench/cmd/storbench").CombinedOutput()
		if err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.path
}

// process is a storbench process started by a test.
type process struct {
	cmd    *exec.Cmd
	lines  chan string
	stderr *strings.Builder
}

// start runs the binary with args, reading its stdout line by line.
func start(t *testing.T, db string, args ...string) *process {
	t.Helper()
	cmd := exec.Command(binary(t), append([]string{"--db", db}, args...)...)
	cmd.Env = append(os.Environ(), "NO_COLOR=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &process{cmd: cmd, lines: make(chan string, 100), stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill() })
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			select {
			case p.lines <- sc.Text():
			default:
			}
		}
		close(p.lines)
	}()
	return p
}

// waitLine waits for a stdout line starting with prefix.
func (p *process) waitLine(t *testing.T, prefix string) {
	t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				t.Fatalf("storbench ended before printing %q; stderr: %s", prefix, p.stderr)
			}
			if strings.HasPrefix(l, prefix) {
				return
			}
		case <-timeout:
			t.Fatalf("no line %q within a minute", prefix)
		}
	}
}

// exitCode waits for the process and returns its exit code.
func (p *process) exitCode(t *testing.T) int {
	t.Helper()
	go func() {
		for range p.lines {
		}
	}()
	err := p.cmd.Wait()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			t.Fatalf("storbench was killed by %s instead of exiting; stderr: %s", ws.Signal(), p.stderr)
		}
		return ee.ExitCode()
	}
	t.Fatal(err)
	return -1
}

// working lists the processes working in dir (see proc.Reader.WorkingIn).
func working(dir string) []proc.Stat {
	ps, _ := proc.Reader{}.WorkingIn(dir)
	return ps
}

func waitUntil(t *testing.T, what string, limit time.Duration, ok func() bool) time.Duration {
	t.Helper()
	begin := time.Now()
	for !ok() {
		if time.Since(begin) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(begin)
}

// longSuite is a short workload, then a long writing one with two fio job
// processes.
func longSuite(t *testing.T, dir string) string {
	return writeFile(t, dir, "long.yaml", `name: long
defaults: {size: 16MiB}
workloads:
  - {name: short, rw: randread, bs: 4KiB, runtime: 1s}
  - {name: long, rw: randwrite, bs: 4KiB, runtime: 120s, numjobs: 2}
`)
}

// startLong starts the long suite and returns once fio writes in the
// second workload.
func startLong(t *testing.T, db, target string) *process {
	t.Helper()
	p := start(t, db, "run", "--suite", longSuite(t, t.TempDir()), "--target", target)
	p.waitLine(t, "[1/2] short")
	// fio's main process (storbench's child) and its two job processes
	// (the main's children): counting processes alone would also count
	// the short workload's fio still exiting, and a job not yet forked.
	waitUntil(t, "fio writing with two jobs", 30*time.Second, func() bool {
		jobs := 0
		for _, main := range working(target) {
			if main.PPID != p.cmd.Process.Pid {
				continue
			}
			for _, s := range working(target) {
				if s.PPID == main.PID {
					jobs++
				}
			}
		}
		return jobs == 2
	})
	time.Sleep(300 * time.Millisecond)
	return p
}

func TestStopSignalsCleanUp(t *testing.T) {
	needFio(t)
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT} {
		t.Run(sig.String(), func(t *testing.T) {
			// each signal stops its own storbench, database and target;
			// nothing is timed against a limit
			t.Parallel()
			dir := t.TempDir()
			db := filepath.Join(dir, "r.db")
			target := t.TempDir()
			p := startLong(t, db, target)
			begin := time.Now()
			if err := p.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			code := p.exitCode(t)
			took := time.Since(begin)
			if want := 128 + int(sig); code != want {
				t.Fatalf("exit %d, want %d; stderr: %s", code, want, p.stderr)
			}
			if strings.Contains(p.stderr.String(), "goroutine ") {
				t.Errorf("a goroutine dump: %s", p.stderr)
			}
			if !strings.Contains(p.stderr.String(), "interrupted") {
				t.Errorf("stderr: %s", p.stderr)
			}
			if left := working(target); len(left) > 0 {
				t.Errorf("processes left after storbench exited: %v", left)
			}
			assertEmptyDir(t, target)
			t.Logf("%s: exited and cleaned up in %s", sig, took)

			runs := runsJSON(t, db)
			if len(runs) != 1 || runs[0].Status != result.StatusInterrupted {
				t.Fatalf("runs: %+v", runs)
			}
			s := showJSON(t, db, runs[0].ID)
			if len(s.Results) != 1 || s.Results[0].Workload != "short" || s.Results[0].Status != result.StatusComplete {
				t.Errorf("results kept: %+v", s.Results)
			}
		})
	}
}

// storbench killed with SIGKILL: fio goes with it, the run shows as
// abandoned with its finished workload, and cleanup removes the test files
// and records the run as abandoned.
func TestKilledRunIsAbandonedAndCleanedUp(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	target := t.TempDir()
	p := startLong(t, db, target)
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	took := waitUntil(t, "fio gone after storbench's SIGKILL", 10*time.Second, func() bool { return len(working(target)) == 0 })
	t.Logf("fio gone %s after SIGKILL", took)

	runs := runsJSON(t, db)
	if len(runs) != 1 || runs[0].Status != result.StatusAbandoned || runs[0].Process == nil || runs[0].Process.PID != p.cmd.Process.Pid {
		t.Fatalf("runs: %+v", runs)
	}
	id := runs[0].ID
	s := showJSON(t, db, id)
	if s.Run.Status != result.StatusAbandoned || len(s.Results) != 1 || s.Results[0].Workload != "short" {
		t.Errorf("show: %+v %+v", s.Run, s.Results)
	}
	if inv := storbench(t, db, "show", id); !strings.Contains(inv.stdout, "abandoned") {
		t.Errorf("show table: %s", inv.stdout)
	}
	work := filepath.Join(target, "storbench-"+id)
	if _, err := os.Stat(filepath.Join(work, "storbench-test.dat")); err != nil {
		t.Fatalf("the killed run left no test file to clean up: %v", err)
	}
	if inv := storbench(t, db, "runs", "--status", "running"); strings.Contains(inv.stdout, id) {
		t.Errorf("runs --status running lists the abandoned run: %s", inv.stdout)
	}

	// A read-only database cannot record the cleanup: nothing is removed.
	if err := os.Chmod(db, 0o444); err != nil {
		t.Fatal(err)
	}
	if inv := storbench(t, db, "cleanup"); inv.code == 0 || !strings.Contains(inv.stderr, "read-only: "+db) {
		t.Errorf("cleanup on a read-only database: %d %s", inv.code, inv.stderr)
	}
	if _, err := os.Stat(work); err != nil {
		t.Fatal("cleanup removed files it could not record")
	}
	if err := os.Chmod(db, 0o644); err != nil {
		t.Fatal(err)
	}

	inv := storbench(t, db, "cleanup", "--dry-run")
	if inv.code != 0 || !strings.Contains(inv.stdout, "would remove "+work) {
		t.Fatalf("cleanup --dry-run: %d %s %s", inv.code, inv.stdout, inv.stderr)
	}
	if _, err := os.Stat(work); err != nil {
		t.Fatal("--dry-run removed the work directory")
	}
	inv = storbench(t, db, "cleanup")
	if inv.code != 0 || !strings.Contains(inv.stdout, "removed "+work) {
		t.Fatalf("cleanup: %d %s %s", inv.code, inv.stdout, inv.stderr)
	}
	assertEmptyDir(t, target)
	inv = storbench(t, db, "runs", "--status", "abandoned", "--output", "json")
	var stored []result.Run
	if err := json.Unmarshal([]byte(inv.stdout), &stored); err != nil || len(stored) != 1 || stored[0].Status != result.StatusAbandoned ||
		!strings.Contains(stored[0].Note, "removed "+work) {
		t.Errorf("after cleanup: %v %+v", err, stored)
	}
	if s := showJSON(t, db, id); len(s.Results) != 1 {
		t.Errorf("cleanup lost the finished workload: %+v", s.Results)
	}
	if inv := storbench(t, db, "cleanup"); inv.code != 0 || !strings.Contains(inv.stdout, "No abandoned runs") {
		t.Errorf("second cleanup: %d %s", inv.code, inv.stdout)
	}
}

// A run that is live is not abandoned: another storbench process sees it
// running and cleanup leaves its files alone.
func TestLiveRunIsNotAbandoned(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	target := t.TempDir()
	p := startLong(t, db, target)
	runs := runsJSON(t, db)
	if len(runs) != 1 || runs[0].Status != result.StatusRunning {
		t.Fatalf("runs: %+v", runs)
	}
	if inv := storbench(t, db, "cleanup"); inv.code != 0 || !strings.Contains(inv.stdout, "No abandoned runs") {
		t.Errorf("cleanup during a live run: %d %s", inv.code, inv.stdout)
	}
	if _, err := os.Stat(filepath.Join(target, "storbench-"+runs[0].ID, "storbench-test.dat")); err != nil {
		t.Errorf("cleanup touched the live run's files: %v", err)
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	p.exitCode(t)
}

// killWithFio kills storbench and fio's main process outright at the same
// moment (as an OOM kill or a host agent might): nothing is left to stop
// fio's job processes, which run on, orphaned, in the run's directory. It
// returns the run's ID and the orphans.
func killWithFio(t *testing.T, db, target string) (string, []proc.Stat) {
	t.Helper()
	p := startLong(t, db, target)
	var main []proc.Stat
	for _, s := range working(target) {
		if s.PPID == p.cmd.Process.Pid {
			main = append(main, s)
		}
	}
	if len(main) != 1 {
		t.Fatalf("fio's main process: %v among %v", main, working(target))
	}
	// Stopped first, so storbench cannot see fio die and stop its jobs.
	if err := p.cmd.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Kill(main[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	p.cmd.Wait()
	t.Cleanup(func() { proc.Reader{}.StopWorkingIn(target, "", 5*time.Second) })
	time.Sleep(500 * time.Millisecond)
	orphans := working(target)
	if len(orphans) != 2 {
		t.Fatalf("want fio's two jobs orphaned, working in %s: %v", target, orphans)
	}
	runs := runsJSON(t, db)
	if len(runs) != 1 {
		t.Fatalf("runs: %+v", runs)
	}
	return runs[0].ID, orphans
}

// storbench and fio's main process killed together leave fio's jobs
// running: cleanup kills them, then removes the run's directory.
func TestCleanupStopsOrphanedJobs(t *testing.T) {
	needFio(t)
	db := filepath.Join(t.TempDir(), "r.db")
	target := t.TempDir()
	id, orphans := killWithFio(t, db, target)
	inv := storbench(t, db, "cleanup")
	if inv.code != 0 {
		t.Fatalf("cleanup: %d %s %s", inv.code, inv.stdout, inv.stderr)
	}
	if left := working(target); len(left) > 0 {
		t.Errorf("processes left working in %s after cleanup (orphans were %v): %v", target, orphans, left)
	}
	assertEmptyDir(t, target)
	inv = storbench(t, db, "runs", "--status", "abandoned", "--output", "json")
	var stored []result.Run
	if err := json.Unmarshal([]byte(inv.stdout), &stored); err != nil || len(stored) != 1 || stored[0].ID != id ||
		!strings.Contains(stored[0].Note, "killed 2 processes") {
		t.Errorf("after cleanup: %v %+v", err, stored)
	}
}

// The next run stops what an abandoned run left working before it
// measures beside it; the files stay for cleanup.
func TestNextRunStopsOrphanedJobs(t *testing.T) {
	needFio(t)
	db := filepath.Join(t.TempDir(), "r.db")
	target := t.TempDir()
	id, _ := killWithFio(t, db, target)
	suite := writeFile(t, t.TempDir(), "tiny.yaml", `name: tiny
defaults: {size: 1MiB}
workloads:
  - {name: r, rw: read, bs: 4KiB, runtime: 200ms}
`)
	inv := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir())
	if inv.code != 0 {
		t.Fatalf("run: %d %s %s", inv.code, inv.stdout, inv.stderr)
	}
	if left := working(target); len(left) > 0 {
		t.Errorf("processes left working in %s after the next run: %v", target, left)
	}
	if !strings.Contains(inv.stdout+inv.stderr, "stopped 2 processes abandoned run "+id+" left working") {
		t.Errorf("the run did not say what it stopped:\n%s\n%s", inv.stdout, inv.stderr)
	}
	if _, err := os.Stat(filepath.Join(target, "storbench-"+id)); err != nil {
		t.Errorf("the next run removed the abandoned run's files: %v", err)
	}
}
