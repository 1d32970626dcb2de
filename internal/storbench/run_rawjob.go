package storbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner/local"
)

// JudgedTarget is a raw fio job checked for one local target before the run:
// the file fio would run, fio's reading of it and the safety verdict.
type JudgedTarget struct {
	Path   string
	Device bool
	*engine.Judged
	// TimeBased is the time-based jobs' ramp and runtime added up;
	// UntilDone counts the size-based jobs, which run until their I/O is
	// done, which only a run can tell.
	TimeBased time.Duration
	UntilDone int
}

// view is what a dry run shows of j.
func (j JudgedTarget) view() analysis.DryRun {
	v := analysis.DryRun{Target: j.Path, Text: j.Text, Writers: j.Verdict.Writers, WorkDir: j.WorkDir,
		TimeBased: j.TimeBased, UntilDone: j.UntilDone}
	for _, job := range j.Reading.Jobs {
		v.Jobs = append(v.Jobs, analysis.DryRunJob{Section: job.Section, Options: job.String()})
	}
	for _, t := range j.Verdict.Touches {
		v.Touches = append(v.Touches, analysis.DryRunTouch{Job: t.Job, Path: t.Path, Writes: t.Writes, Own: t.Own, Kind: t.Kind.String()})
	}
	return v
}

// judgeLocalTargets judges the plan's raw job for every local directory and
// device target, in order, returning those checked before an error too.
func judgeLocalTargets(ctx context.Context, req *RunRequest, plan *engine.Plan) ([]JudgedTarget, error) {
	var out []JudgedTarget
	for _, t := range req.Targets {
		if !isLocalPath(req, t) {
			continue
		}
		fi, err := os.Stat(t)
		if err != nil {
			return nil, refuse(fmt.Errorf("target %s: %w", t, err))
		}
		dev := fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0
		if !fi.IsDir() && !dev {
			return nil, refusef("target %s is neither a directory nor a block device", t)
		}
		out = append(out, JudgedTarget{Path: t, Device: dev})
	}
	for i := range out {
		j, err := judgeRawJob(ctx, plan, out[i].Path, out[i].Device)
		if err != nil {
			return out[:i], judgeErr(err)
		}
		out[i].Judged = j
		out[i].TimeBased, out[i].UntilDone = rawJobTime(j.Reading)
	}
	return out, nil
}

// judgeRawJob judges a raw job for a local target before the run, exactly
// as the engine judges it once the target is prepared: in a new, empty
// directory of storbench's own (inside a directory target, in the temporary
// directory for a device), removed again.
func judgeRawJob(ctx context.Context, plan *engine.Plan, path string, device bool) (*engine.Judged, error) {
	parent, err := filepath.Abs(path)
	if err != nil {
		return nil, err
	}
	file := fio.File{Name: local.TestFileName}
	if device {
		parent = ""
		resolved, err := filepath.EvalSymlinks(path)
		if err != nil {
			return nil, err
		}
		file.Name = resolved
	}
	size, _, _ := engine.RawNeeds(plan.RawJob.File)
	file.Size = size
	work, err := os.MkdirTemp(parent, ".storbench-check-")
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	j, err := engine.Judge(ctx, fio.Runner{Cmder: execx.Local{}}, plan.RawJob.File, work, engine.JudgeOptions{
		Policy: plan.Policy, File: file, Device: device, Local: true,
	})
	if rerr := os.RemoveAll(work); rerr != nil {
		err = errors.Join(err, rerr)
	}
	return j, err
}

// rawJobTime adds up the time-based jobs' ramp and runtime and counts the
// size-based ones.
func rawJobTime(rd *fio.Reading) (total time.Duration, sized int) {
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
	return total, sized
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
