// Command lifecycle measures how fast storbench lets go of a target when it
// is stopped (issue 9, "Measured"):
//
//   - SIGHUP and SIGTERM: from the signal to every fio process gone and the
//     test files removed (the target directory empty again);
//   - kill -9 (SIGKILL): from the signal to every fio process gone.
//
// Each is repeated -n times (10) with a fresh run of a writing workload
// with two fio job processes, and the median, minimum and maximum printed.
//
// Usage: go run ./bench/lifecycle -storbench bin/storbench [-dir /path/on/disk] [-n 10]
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/proc"
)

const suite = `name: hold
defaults: {size: 16MiB}
workloads:
  - {name: hold, rw: randwrite, bs: 4KiB, runtime: 120s, numjobs: 2}
`

func main() {
	bin := flag.String("storbench", "bin/storbench", "storbench binary")
	dir := flag.String("dir", "", "directory to hold the targets (default: a new temporary directory)")
	n := flag.Int("n", 10, "repetitions per signal")
	flag.BoolVar(&verbose, "v", false, "print every repetition: when fio was gone, when the target was let go")
	flag.Parse()
	if err := run(*bin, *dir, *n); err != nil {
		fmt.Fprintln(os.Stderr, "lifecycle:", err)
		os.Exit(1)
	}
}

func run(bin, dir string, n int) error {
	if dir == "" {
		d, err := os.MkdirTemp("", "storbench-lifecycle-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	suitePath := filepath.Join(dir, "hold.yaml")
	if err := os.WriteFile(suitePath, []byte(suite), 0o644); err != nil {
		return err
	}
	for _, m := range []struct {
		name  string
		sig   syscall.Signal
		files bool // also wait for the target to be empty
	}{
		{"SIGHUP to fio gone and files removed", syscall.SIGHUP, true},
		{"SIGTERM to fio gone and files removed", syscall.SIGTERM, true},
		{"SIGKILL (kill -9) to fio gone", syscall.SIGKILL, false},
	} {
		var times, fioTimes []time.Duration
		for i := range n {
			fioGone, d, err := once(bin, dir, suitePath, i, m.sig, m.files)
			if err != nil {
				return fmt.Errorf("%s, run %d: %w", m.name, i+1, err)
			}
			times, fioTimes = append(times, d), append(fioTimes, fioGone)
		}
		report(m.name, times)
		if m.files {
			report(fmt.Sprintf("  of which %s to fio gone", m.sig), fioTimes)
		}
	}
	return nil
}

func report(name string, times []time.Duration) {
	slices.Sort(times)
	fmt.Printf("%-40s median %7.1f ms  min %7.1f ms  max %7.1f ms  (n=%d)\n", name,
		ms(times[len(times)/2]), ms(times[0]), ms(times[len(times)-1]), len(times))
}

// once starts a run, waits for fio and its two jobs to write, signals
// storbench and times how long until the target is let go.
func once(bin, dir, suitePath string, i int, sig syscall.Signal, files bool) (fioGone, took time.Duration, err error) {
	target, err := os.MkdirTemp(dir, fmt.Sprintf("target-%d-", i))
	if err != nil {
		return 0, 0, err
	}
	defer os.RemoveAll(target)
	cmd := exec.Command(bin, "--db", filepath.Join(dir, "results.db"), "run", "--suite", suitePath, "--target", target, "--telemetry=false")
	if err := cmd.Start(); err != nil {
		return 0, 0, err
	}
	defer cmd.Process.Kill()
	if err := waitUntil(30*time.Second, func() bool { return len(working(target, cmd.Process.Pid)) >= 3 }); err != nil {
		return 0, 0, fmt.Errorf("fio did not start its two jobs: %w", err)
	}
	// Mid-workload, as a dropped session or a kill finds it: past fio's
	// start-up (laying out the file, forking its jobs).
	time.Sleep(2 * time.Second)
	begin := time.Now()
	if err := cmd.Process.Signal(sig); err != nil {
		return 0, 0, err
	}
	done := func() bool {
		if len(working(target, cmd.Process.Pid)) > 0 {
			return false
		}
		if fioGone == 0 {
			fioGone = time.Since(begin)
		}
		if !files {
			return true
		}
		entries, err := os.ReadDir(target)
		return err == nil && len(entries) == 0
	}
	if err := waitUntil(30*time.Second, done); err != nil {
		return 0, 0, fmt.Errorf("target not let go: %w", err)
	}
	took = time.Since(begin)
	cmd.Wait()
	if verbose {
		fmt.Printf("  %s: fio gone %.1f ms, target let go %.1f ms\n", sig, ms(fioGone), ms(took))
	}
	if sig == syscall.SIGKILL {
		// What the killed run left: the next run's cleanup is not timed.
		if err := exec.Command(bin, "--db", filepath.Join(dir, "results.db"), "cleanup").Run(); err != nil {
			return 0, 0, fmt.Errorf("cleanup: %w", err)
		}
	}
	return fioGone, took, nil
}

var verbose bool

// working lists the processes working in dir other than storbench itself
// (whose command line names the target): fio and its jobs.
func working(dir string, storbench int) []proc.Stat {
	ps, _ := proc.Reader{}.WorkingIn(dir)
	return slices.DeleteFunc(ps, func(p proc.Stat) bool { return p.PID == storbench })
}

func waitUntil(limit time.Duration, ok func() bool) error {
	deadline := time.Now().Add(limit)
	for !ok() {
		if time.Now().After(deadline) {
			return fmt.Errorf("not within %s", limit)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
