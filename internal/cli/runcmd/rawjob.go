package runcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
)

// rawTarget is a local target a raw job is judged for before anything runs.
type rawTarget struct {
	path   string
	device bool
}

// localRawTargets lists the local directory and device targets of the plan.
func localRawTargets(targets []string) ([]rawTarget, error) {
	var out []rawTarget
	for _, t := range targets {
		if _, ok, _ := splitKubeTarget(t); ok {
			continue
		}
		fi, err := os.Stat(t)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t, err)
		}
		dev := fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
		if !fi.IsDir() && !dev {
			return nil, fmt.Errorf("target %s is neither a directory nor a block device", t)
		}
		out = append(out, rawTarget{path: t, device: dev})
	}
	return out, nil
}

// judgeRawJob judges a raw job for a local target before the run, exactly as
// the engine judges it once the target is prepared: in a new, empty
// directory of storbench's own (inside a directory target, in the temporary
// directory for a device), removed again.
func judgeRawJob(ctx context.Context, raw *engine.RawJob, t rawTarget, policy safety.Policy) (*engine.Judged, error) {
	parent, err := filepath.Abs(t.path)
	if err != nil {
		return nil, err
	}
	file := fio.File{Name: local.TestFileName}
	if t.device {
		parent = ""
		resolved, err := filepath.EvalSymlinks(t.path)
		if err != nil {
			return nil, err
		}
		file.Name = resolved
	}
	size, _, _ := engine.RawNeeds(raw.File)
	file.Size = size
	work, err := os.MkdirTemp(parent, ".storbench-check-")
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.path, err)
	}
	j, err := engine.Judge(ctx, fio.Runner{Cmder: execx.Local{}}, raw.File, work, engine.JudgeOptions{
		Policy: policy, File: file, Device: t.device, Local: true,
	})
	if rerr := os.RemoveAll(work); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return j, err
}

// printDryRun says what a raw job would do on a target, running nothing.
func printDryRun(w io.Writer, t rawTarget, j *engine.Judged) {
	fmt.Fprintf(w, "Target %s: fio would run this job file (in %s):\n\n", t.path, "storbench's work directory")
	for _, l := range strings.SplitAfter(string(j.Text), "\n") {
		if l != "" {
			fmt.Fprintf(w, "    %s", l)
		}
	}
	fmt.Fprintf(w, "\nAs fio reads it:\n")
	for _, job := range j.Reading.Jobs {
		fmt.Fprintf(w, "  [%s] %s\n", job.Section, job.String())
	}
	fmt.Fprintf(w, "\nFiles and devices:\n")
	for _, tc := range j.Verdict.Touches {
		what := "reads"
		if tc.Writes {
			what = "writes"
		}
		where := "in storbench's work directory, removed afterwards"
		if !tc.Own {
			where = tc.Kind.String()
		}
		path := tc.Path
		if tc.Own && strings.HasPrefix(path, j.WorkDir) {
			path = "<work>" + strings.TrimPrefix(path, j.WorkDir)
		}
		fmt.Fprintf(w, "  %s %s %s (%s)\n", tc.Job, what, path, where)
	}
	fmt.Fprintf(w, "\nSafety: allowed")
	if len(j.Verdict.Writers) > 0 {
		fmt.Fprintf(w, " (writing jobs: %s)", strings.Join(j.Verdict.Writers, ", "))
	}
	fmt.Fprintf(w, "\nEstimated time: %s\n", estimate(j.Reading))
}

// estimate adds up the time-based jobs' ramp and runtime; size-based jobs
// run until their I/O is done, which only a run can tell.
func estimate(rd *fio.Reading) string {
	var total time.Duration
	sized := 0
	for _, j := range rd.Jobs {
		rt, ok := j.Value("runtime")
		if !ok {
			sized++
			continue
		}
		d := fioSeconds(rt)
		if r, ok := j.Value("ramp_time"); ok {
			d += fioSeconds(r)
		}
		total += d
	}
	s := "at most " + total.String()
	if sized > 0 {
		s += fmt.Sprintf(" for the time-based jobs, plus %d job(s) that run until their I/O is done", sized)
	}
	return s
}

// fioSeconds reads a fio time value: a bare number is seconds.
func fioSeconds(v string) time.Duration {
	v = strings.TrimSpace(v)
	for _, u := range []struct {
		suffix string
		d      time.Duration
	}{{"ms", time.Millisecond}, {"us", time.Microsecond}, {"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour}} {
		if strings.HasSuffix(v, u.suffix) {
			n, err := strconv.ParseFloat(strings.TrimSuffix(v, u.suffix), 64)
			if err == nil {
				return time.Duration(n * float64(u.d))
			}
			return 0
		}
	}
	n, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return 0
	}
	return time.Duration(n * float64(time.Second))
}
