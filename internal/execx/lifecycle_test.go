package execx_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/testenv"
)

// TestMain lets a test run this binary as a parent that starts fio and is
// then killed.
func TestMain(m *testing.M) {
	if dir := os.Getenv("EXECX_TEST_PARENT_DIR"); dir != "" {
		os.Exit(parent(dir))
	}
	os.Exit(m.Run())
}

// parent starts a long two-job fio through execx.Local in dir and waits,
// reading fio's output through a pipe as storbench does. Like app.Main it
// ignores SIGPIPE, which fio inherits: killed fio's main process would
// otherwise die writing to the broken pipe and leave its jobs running.
func parent(dir string) int {
	signal.Ignore(syscall.SIGPIPE)
	cmd := execx.Local{}.Command(context.Background(), "fio", longFio...).SetDir(dir).SetStdout(&strings.Builder{}).SetStderr(&strings.Builder{})
	fmt.Println("starting")
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var longFio = []string{"--name=held", "--rw=randwrite", "--bs=4k", "--size=8m", "--runtime=120", "--time_based",
	"--numjobs=2", "--filename=held.dat", "--output-format=json"}

// workingIn lists the processes working in dir.
func workingIn(dir string) []proc.Stat {
	ps, _ := proc.Reader{}.WorkingIn(dir)
	return ps
}

func waitFor(t *testing.T, what string, limit time.Duration, ok func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !ok() {
		if time.Since(start) > limit {
			t.Fatalf("%s: not within %s", what, limit)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// fio's main process and both job processes (in sessions of their own) are
// gone soon after the process that started them is killed with SIGKILL.
func TestFioDiesWithKilledParent(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), "EXECX_TEST_PARENT_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	bufio.NewReader(out).ReadString('\n')
	// fio's main process plus one process per job.
	waitFor(t, "fio running with its two jobs", 20*time.Second, func() bool { return len(workingIn(dir)) >= 3 })
	pids := workingIn(dir)
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()
	took := waitFor(t, fmt.Sprintf("fio processes %v gone", pids), 10*time.Second, func() bool { return len(workingIn(dir)) == 0 })
	t.Logf("fio gone %s after the parent's SIGKILL", took)
}

// fio's main process killed (or crashed) leaves its job processes
// orphaned, each in a session of its own; Run kills them and returns only
// once they are gone.
func TestFioJobsGoWithKilledMain(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	t.Cleanup(func() { proc.Reader{}.StopWorkingIn(dir, "", 5*time.Second) })
	done := make(chan error, 1)
	go func() {
		done <- execx.Local{}.Command(context.Background(), "fio", longFio...).SetDir(dir).SetStdout(&strings.Builder{}).Run()
	}()
	waitFor(t, "fio running with its two jobs", 20*time.Second, func() bool { return len(workingIn(dir)) >= 3 })
	var main []proc.Stat
	for _, p := range workingIn(dir) {
		if p.PPID == os.Getpid() {
			main = append(main, p)
		}
	}
	if len(main) != 1 {
		t.Fatalf("fio's main process: %v among %v", main, workingIn(dir))
	}
	if err := syscall.Kill(main[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("a killed fio reported success")
		}
	case <-time.After(execx.OrphanWait + 10*time.Second):
		t.Fatal("Run did not return after fio's main process was killed")
	}
	if left := workingIn(dir); len(left) > 0 {
		t.Errorf("processes left working in %s once Run returned: %v", dir, left)
	}
}

// A command that ignores SIGTERM and leaves a child in a session of its own
// is killed, child and all, StopGrace after cancellation.
func TestCancelKillsTreeThatIgnoresTerm(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- execx.Local{}.Command(ctx, "sh", "-c", `trap "" TERM; setsid sleep 300 & echo started > started; wait`).SetDir(dir).Run()
	}()
	waitFor(t, "child started", 10*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(dir, "started"))
		return err == nil && len(workingIn(dir)) >= 2
	})
	pids := workingIn(dir)
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("cancelled command reported success")
		}
	case <-time.After(execx.StopGrace + 5*time.Second):
		t.Fatal("cancelled command did not return")
	}
	took := waitFor(t, fmt.Sprintf("processes %v gone", pids), 3*time.Second, func() bool { return len(workingIn(dir)) == 0 })
	t.Logf("tree gone %s after Run returned", took)
}

// A command that honours SIGTERM stops at once, not after StopGrace.
func TestCancelStopsFioPromptly(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var stdout strings.Builder
	go func() {
		done <- execx.Local{}.Command(ctx, "fio", longFio...).SetDir(dir).SetStdout(&stdout).Run()
	}()
	waitFor(t, "fio running with its two jobs", 20*time.Second, func() bool { return len(workingIn(dir)) >= 3 })
	start := time.Now()
	cancel()
	<-done
	if took := time.Since(start); took >= execx.StopGrace {
		t.Errorf("fio took %s to stop on SIGTERM", took)
	}
	waitFor(t, "fio gone", 3*time.Second, func() bool { return len(workingIn(dir)) == 0 })
}

func TestDescendantsOfThisProcess(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 30 & sleep 30 & wait")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var below []proc.Stat
	waitFor(t, "two sleeps", 5*time.Second, func() bool {
		below, _ = proc.Reader{}.Descendants(os.Getpid())
		return len(below) >= 3
	})
	for _, p := range below {
		if p.PID == cmd.Process.Pid {
			return
		}
	}
	t.Errorf("shell %d not among descendants %+v", cmd.Process.Pid, below)
}
