package main

import (
	"context"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// runRound measures what `storbench run --rounds parallel` does across n
// ssh:// targets, through internal/storbench as the command calls it:
// the start skew the engine measures on fio's clocks (the label
// start_skew_ms), and the whole run's time, connections to cleanup, per
// repetition. The hosts are reached through a ~/.ssh of the bench's own
// (HOME is pointed at it), as ssh would reach them.
func runRound(n, reps int) error {
	home, err := os.MkdirTemp("", "storbench-bench-ssh-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	dot := filepath.Join(home, ".ssh")
	if err := os.Mkdir(dot, 0o700); err != nil {
		return err
	}
	opts, stop, err := fleet(dot, n)
	defer stop()
	if err != nil {
		return err
	}
	os.Setenv("HOME", home)
	os.Setenv("SSH_AUTH_SOCK", "")
	u, err := user.Current()
	if err != nil {
		return err
	}
	suite, err := spec.Parse([]byte(`
name: bench-ssh-round
workloads:
  - {name: randread-4k, rw: randread, bs: 4KiB, size: 16MiB, runtime: 2s, ioengine: psync}
`), "bench-ssh-round")
	if err != nil {
		return err
	}
	fmt.Printf("%d ssh:// targets (sshd on 127.0.0.1, one directory each), storbench.Run --rounds parallel, %d repetitions\n\n", n, reps)
	var skews, totals []float64
	for r := range reps {
		req := storbench.DefaultRunRequest()
		req.SuiteSpec, req.Telemetry, req.Rounds = suite, true, []string{result.RoundParallel}
		for i, o := range opts {
			dir := filepath.Join(home, "target"+strconv.Itoa(r)+"-"+strconv.Itoa(i))
			if err := os.Mkdir(dir, 0o755); err != nil {
				return err
			}
			req.Targets = append(req.Targets, "ssh://"+u.Username+"@127.0.0.1:"+strconv.Itoa(o.Port)+dir)
		}
		st := store.NewLazy(filepath.Join(home, "run"+strconv.Itoa(r)+".db"))
		began := time.Now()
		run, err := storbench.Run(context.Background(), st, req, nil)
		took := time.Since(began)
		if err != nil {
			st.Close()
			return err
		}
		o, err := storbench.LoadRunOutcome(context.Background(), st, run)
		st.Close()
		if err != nil {
			return err
		}
		if len(o.Results) != n {
			return fmt.Errorf("repetition %d stored %d results, want %d", r, len(o.Results), n)
		}
		skew, err := strconv.ParseFloat(result.LabelStartSkew.Of(o.Results[0].Labels), 64)
		if err != nil {
			return fmt.Errorf("repetition %d: %s %q: %w", r, result.LabelStartSkew, result.LabelStartSkew.Of(o.Results[0].Labels), err)
		}
		skews = append(skews, skew)
		totals = append(totals, float64(took.Milliseconds()))
	}
	row := func(what string, v []float64) {
		slices.Sort(v)
		fmt.Printf("%-52s %3d %8.1f %8.1f\n", what, len(v), v[len(v)/2], v[len(v)-1])
	}
	fmt.Printf("%-52s %3s %8s %8s\n", "ms", "n", "median", "max")
	row(fmt.Sprintf("parallel-round start skew across %d hosts (fio)", n), skews)
	row("whole run (connect, check, prepare, 2 s workload, clean up)", totals)
	return nil
}
