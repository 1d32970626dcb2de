package app

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// TestMain lets a test run this binary as storbench itself, so signals are
// delivered to a real process.
func TestMain(m *testing.M) {
	if os.Getenv("STORBENCH_TEST_MAIN") == "1" {
		Main()
	}
	os.Exit(m.Run())
}

func TestInterruptKeepsFinishedWorkloadsAndRemovesFiles(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "long.yaml", `name: long
defaults: {size: 16MiB}
workloads:
  - {name: short, rw: randread, bs: 4KiB, runtime: 1s}
  - {name: long, rw: randwrite, bs: 4KiB, runtime: 60s}
`)
	target := t.TempDir()
	cmd := exec.Command(os.Args[0], "--db", db, "run", "--suite", suite, "--target", target)
	cmd.Env = append(os.Environ(), "STORBENCH_TEST_MAIN=1")
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait for the first workload's final line, then for fio to be writing
	// the second.
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "[1/2] short") {
			break
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for !fileUnder(t, target, "storbench-test.dat") && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	time.Sleep(500 * time.Millisecond)
	start := time.Now()
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	go func() {
		for sc.Scan() {
		}
	}()
	err = cmd.Wait()
	took := time.Since(start)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("exit: %v (stderr: %s)", err, stderr.String())
	}
	if took > 10*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if !strings.Contains(stderr.String(), "interrupted") {
		t.Errorf("stderr: %s", stderr.String())
	}
	assertEmptyDir(t, target)
	if pids := processesIn(target); len(pids) > 0 {
		t.Errorf("processes still working in the target: %v", pids)
	}

	runs := runsJSON(t, db)
	if len(runs) != 1 || runs[0].Status != result.StatusInterrupted {
		t.Fatalf("runs: %+v", runs)
	}
	s := showJSON(t, db, runs[0].ID)
	if len(s.Results) != 1 || s.Results[0].Workload != "short" || s.Results[0].Status != result.StatusComplete {
		t.Errorf("results kept: %+v", s.Results)
	}
}

// processesIn lists the processes whose working directory is inside dir:
// fio runs in storbench's work directory there.
func processesIn(dir string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		if cwd, err := os.Readlink(p + "/cwd"); err == nil && strings.HasPrefix(cwd, dir) {
			pids = append(pids, filepath.Base(p))
		}
	}
	return pids
}

func fileUnder(t *testing.T, dir, name string) bool {
	found := false
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Name() == name {
			found = true
		}
		return nil
	})
	return found
}
