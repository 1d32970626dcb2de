package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
)

// The contention round measures a latency probe alone, then again while a
// bulk sequential writer runs beside it (two fio processes at once). Every
// result is stored with round "contention" and a "contention" label:
//
//	alone   the probe on its own, workload named as the probe
//	loaded  the probe under the bulk writer, workload "<probe>+bulk-write"
//	noise   the bulk writer itself, workload NoiseName
//
// Distinct workload names keep alone and loaded apart wherever results are
// grouped by workload (compare, reports). The label names and values are
// internal/contention's, which reads them; a "probe" label names the probe
// on all three.
const (
	// LoadedSuffix is appended to the probe's name for its loaded result.
	LoadedSuffix = "+bulk-write"
	// NoiseName is the bulk writer's workload name.
	NoiseName = "bulk-write-1m-qd16"
	// NoiseFileName is the bulk writer's file beside the probe's own in
	// storbench's work directory, removed with it.
	NoiseFileName = "storbench-noise.dat"
	// DefaultNoiseSize is the bulk writer's file: large enough that it
	// keeps streaming rather than rewriting a cached region.
	DefaultNoiseSize = 1 << 30
	// DefaultWarmup lets the writer fill the device queue and the
	// filesystem journal before the loaded probe starts.
	DefaultWarmup = 3 * time.Second
	// DefaultProbeLimit caps a size-based probe (etcd's 22 MiB) so a probe
	// slowed a hundredfold under load still ends.
	DefaultProbeLimit = 30 * time.Second
)

// Contention configures the contention round.
type Contention struct {
	// Probe is the latency workload, measured alone and under load.
	Probe spec.Workload
	// NoiseTarget, when set, takes the bulk writer instead of the probe's
	// own target (another directory on the same disk, or a disk sharing a
	// USB bridge or a network link).
	NoiseTarget runner.Target
	// NoiseSize is the bulk writer's file size; 0 means DefaultNoiseSize.
	NoiseSize int64
	// Warmup is how long the writer runs before the loaded probe starts;
	// 0 means DefaultWarmup.
	Warmup time.Duration
	// ProbeLimit caps a probe that has no runtime of its own; 0 means
	// DefaultProbeLimit.
	ProbeLimit time.Duration
}

// NoiseWorkload is the bulk writer: sequential 1 MiB writes at QD16 with
// direct I/O, like a large rsync or a backup stream, running for at most
// runtime (it is stopped as soon as the loaded probe ends).
func NoiseWorkload(size int64, runtime time.Duration) spec.Workload {
	direct, qd, jobs := true, 16, 1
	return spec.Workload{
		Name:        NoiseName,
		Description: "bulk sequential writer, 1 MiB blocks, QD16, direct I/O",
		Options: spec.Options{
			RW: "write", BlockSize: spec.Size(1 << 20), FileSize: spec.Size(size), IODepth: &qd, NumJobs: &jobs,
			IOEngine: "libaio", Direct: &direct, Runtime: spec.Duration(runtime),
		},
	}
}

func (c *Contention) noiseSize() int64 {
	if c.NoiseSize > 0 {
		return c.NoiseSize
	}
	return DefaultNoiseSize
}

// probe returns the probe as it runs: capped in time when size-based.
func (c *Contention) probe() spec.Workload {
	w := c.Probe
	limit := c.ProbeLimit
	if limit == 0 {
		limit = DefaultProbeLimit
	}
	if w.Runtime == 0 && limit > 0 {
		if _, set := w.Extra["runtime"]; !set {
			extra := map[string]string{"runtime": strconv.FormatInt(max(int64(limit/time.Second), 1), 10)}
			for k, v := range w.Extra {
				extra[k] = v
			}
			w.Extra = extra
		}
	}
	return w
}

// noise returns the writer, timed to outlast warmup plus the probe by a
// margin: it is always stopped early, the cap only guards against a
// transport that cannot deliver the stop.
func (c *Contention) noise() spec.Workload {
	probe := time.Duration(c.Probe.Ramp) + time.Duration(c.Probe.Runtime)
	if probe == 0 {
		probe = c.ProbeLimit
		if probe == 0 {
			probe = DefaultProbeLimit
		}
	}
	return NoiseWorkload(c.noiseSize(), c.warmup()+probe+time.Minute)
}

func (c *Contention) warmup() time.Duration {
	if c.Warmup > 0 {
		return c.Warmup
	}
	return DefaultWarmup
}

// suite is what the probe's target must accommodate: the probe and, when
// it shares the target, the writer.
func (c *Contention) suite() *spec.Suite {
	s := &spec.Suite{Name: "contention:" + c.Probe.Name, Source: "built-in", Workloads: []spec.Workload{c.probe()}}
	if c.NoiseTarget == nil {
		s.Workloads = append(s.Workloads, c.noise())
	}
	return s
}

func (c *Contention) workloadNames() []string {
	return []string{c.Probe.Name, c.Probe.Name + LoadedSuffix, NoiseName}
}

// adjustNeed makes room for the probe's and the writer's files side by
// side when they share a target.
func (c *Contention) adjustNeed(n *runner.Need) {
	if c == nil || c.NoiseTarget != nil {
		return
	}
	n.FileSize = int64(c.Probe.FileSize) + c.noiseSize()
}

func (c *Contention) noiseNeed(runID string) runner.Need {
	return runner.Need{RunID: runID, FileSize: c.noiseSize(), Writers: []string{NoiseName}, Direct: true}
}

// check lets a separate noise target refuse before anything is stored.
func (c *Contention) check(ctx context.Context, runID string) error {
	if c == nil || c.NoiseTarget == nil {
		return nil
	}
	if ch, ok := c.NoiseTarget.(runner.Checker); ok {
		if err := ch.Check(ctx, c.noiseNeed(runID)); err != nil {
			return &RefusedError{Target: c.NoiseTarget.Name(), Err: fmt.Errorf("noise target: %w", err)}
		}
	}
	return nil
}

// noisePlace is where the writer runs and on which file.
type noisePlace struct {
	fr    fio.Runner
	file  fio.File
	extra map[string]string // e.g. an offset past the probe on a shared device
	name  string            // target name for notices
}

// runContention runs the round on one prepared target: per repetition the
// probe alone, then the writer with the probe beside it.
func (e *Engine) runContention(ctx context.Context, run *result.Run, plan Plan, rt *readyTarget) (failures []error) {
	c, p, ioEngine := plan.Contention, rt.prepared, rt.ioEngine
	place, cleanup, err := e.placeNoise(ctx, run, c, p, rt.fr)
	if err != nil {
		e.recordTargetFailure(ctx, run, plan, p.Name, err)
		return []error{err}
	}
	defer func() {
		if err := cleanup(); err != nil {
			failures = append(failures, err)
		}
	}()
	probe := c.probe()
	loaded := probe
	loaded.Name = probe.Name + LoadedSuffix
	noise := c.noise()
	noiseEngine := ioEngine
	if c.NoiseTarget != nil && ioEngine == "" {
		// The probe's suite did not need libaio, the writer does.
		if ok, err := place.fr.HasEngine(ctx, "libaio"); err == nil && !ok {
			e.Observer.Notice(place.name, "fio here has no libaio engine: the bulk writer falls back to psync, at queue depth 1")
			noiseEngine = "psync"
		}
	}
	for k, v := range place.extra {
		if noise.Extra == nil {
			noise.Extra = map[string]string{}
		}
		noise.Extra[k] = v
	}
	expected := time.Duration(probe.Ramp) + time.Duration(probe.Runtime)
	with := func(role string) map[string]string {
		l := map[string]string{}
		result.LabelContention.Set(l, role)
		result.LabelProbe.Set(l, probe.Name)
		if place.name != p.Name {
			result.LabelNoiseTarget.Set(l, place.name) // part of the conditions
		}
		for k, v := range rt.labels {
			l[k] = v
		}
		return l
	}

	// The probe gets the checks a workload alone gets (measure.go): its
	// latency may measure the CPU or a cache as much as the storage.
	m := e.newMeasurer(ctx, plan, rt)
	for rep := 1; rep <= plan.Repeat; rep++ {
		step := func(i int, name string) Step {
			s := Step{RunID: run.ID, Target: p.Name, Workload: name, Index: i, Count: 3,
				Repetition: rep, Repetitions: plan.Repeat, Expected: expected}
			if name != NoiseName {
				s.annotate = func(r *result.Result) { m.annotate(ctx, &probe, false, m.fr.Dir, r) }
			}
			return s
		}
		alone := rt.invoke(step(1, probe.Name), fio.FromWorkload(probe, p.File, ioEngine))
		alone.labels = with(contention.RoleAlone)
		_, err := e.runStep(ctx, run, plan, alone)
		if ctx.Err() != nil {
			return failures
		}
		if err != nil {
			failures = append(failures, err)
			if plan.FailFast {
				return failures
			}
		}
		under := rt.invoke(step(2, loaded.Name), fio.FromWorkload(loaded, p.File, ioEngine))
		under.labels = with(contention.RoleLoaded)
		errs := e.underLoad(ctx, run, plan, under, step(3, NoiseName), place, fio.FromWorkload(noise, place.file, noiseEngine), with(contention.RoleNoise))
		failures = append(failures, errs...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			return failures
		}
	}
	return failures
}

// placeNoise prepares the writer's place: a separate noise target, a file
// beside the probe's, or on a shared raw device the span after the probe's.
func (e *Engine) placeNoise(ctx context.Context, run *result.Run, c *Contention, p *runner.Prepared, fr fio.Runner) (noisePlace, func() error, error) {
	none := func() error { return nil }
	if c.NoiseTarget != nil {
		np, err := c.NoiseTarget.Prepare(ctx, c.noiseNeed(run.ID))
		if err != nil {
			return noisePlace{}, none, fmt.Errorf("noise target %s: %w", c.NoiseTarget.Name(), err)
		}
		for _, n := range np.Notices {
			e.Observer.Notice(np.Name, n)
		}
		cleanup := func() error {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Minute)
			defer cancel()
			if err := np.Cleanup(cctx); err != nil {
				e.Observer.Notice(np.Name, "cleanup failed: "+err.Error())
				return fmt.Errorf("noise target %s: cleanup: %w", np.Name, err)
			}
			return nil
		}
		return noisePlace{fr: np.FioRunner(), file: np.File, name: np.Name}, cleanup, nil
	}
	probeSpan := min(int64(c.Probe.FileSize), p.File.Size)
	if p.Device || p.File.Engine != nil && p.File.Name == "" {
		// A whole device or image (RBD): past the probe's span, 1 MiB
		// aligned, so the two never overlap.
		offset := (probeSpan + 1<<20 - 1) &^ (1<<20 - 1)
		size := min(c.noiseSize(), p.File.Size-offset)
		if size < 1<<20 {
			return noisePlace{}, none, fmt.Errorf("device %s is too small for the bulk writer beside the probe (%d bytes after the probe's span)", p.Name, p.File.Size-offset)
		}
		return noisePlace{fr: fr, file: fio.File{Name: p.File.Name, Size: size, Engine: p.File.Engine}, name: p.Name,
			extra: map[string]string{"offset": strconv.FormatInt(offset, 10)}}, none, nil
	}
	size := min(c.noiseSize(), p.File.Size-probeSpan)
	if size < 1<<20 {
		size = min(c.noiseSize(), p.File.Size)
	}
	// The file lives in the work directory the target's cleanup removes
	// (for an engine target, the run's directory in the volume).
	return noisePlace{fr: fr, file: fio.File{Name: NoiseFileName, Size: size, Engine: p.File.Engine}, name: p.Name}, none, nil
}

type noiseOutcome struct {
	out      *fio.Outcome
	err      error
	finished time.Time
}

// underLoad starts the writer, lets it warm up, runs the loaded probe,
// stops the writer and stores its result. The writer is always stopped and
// waited for before returning, so cleanup never races it.
func (e *Engine) underLoad(ctx context.Context, run *result.Run, plan Plan, probe invocation, noiseStep Step, place noisePlace,
	noiseJob fio.Job, noiseLabels map[string]string) (failures []error) {
	probeStep := probe.step
	noiseCtx, stop := context.WithCancel(ctx)
	defer stop()
	done := make(chan noiseOutcome, 1)
	started := time.Now()
	go func() {
		out, err := place.fr.Run(noiseCtx, noiseJob, nil)
		done <- noiseOutcome{out: out, err: err, finished: time.Now()}
	}()
	e.Observer.Notice(probeStep.Target, fmt.Sprintf("bulk writer (1 MiB, QD16) started on %s; the probe starts in %s", place.name, plan.Contention.warmup()))

	var early *noiseOutcome
	select {
	case <-time.After(plan.Contention.warmup()):
	case n := <-done:
		early = &n
	}
	if early == nil && ctx.Err() == nil {
		if _, err := e.runStep(ctx, run, plan, probe); err != nil && ctx.Err() == nil {
			failures = append(failures, err)
		}
	}
	stop()
	n := early
	if n == nil {
		got := <-done
		n = &got
	}
	if ctx.Err() != nil {
		return failures
	}
	if early != nil {
		failures = append(failures, fmt.Errorf("workload %s on %s: the bulk writer stopped before the loaded probe could start", probeStep.Workload, probeStep.Target))
	}
	if err := e.storeNoise(ctx, run, plan, noiseStep, n, started, early != nil, noiseLabels); err != nil {
		failures = append(failures, err)
	}
	return failures
}

// storeNoise stores the writer's own result. Being stopped is its normal
// end; fio still reports what it wrote until then.
func (e *Engine) storeNoise(ctx context.Context, run *result.Run, plan Plan, step Step, n *noiseOutcome, started time.Time, early bool, labels map[string]string) error {
	base := result.Result{
		RunID: run.ID, Target: step.Target, Round: plan.Round, Repetition: step.Repetition,
		Workload: NoiseName, Labels: labels, Started: started, Finished: n.finished,
	}
	var jobs []fio.JobResult
	if n.out != nil {
		jobs = n.out.Final.AllJobs()
	}
	r := base
	var failure error
	switch {
	case len(jobs) == 0:
		msg := "fio produced no result"
		if n.err != nil && !errors.Is(n.err, context.Canceled) {
			msg = n.err.Error()
		}
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("workload %s on %s: %s", NoiseName, step.Target, msg)
		failure = errors.New(r.Error)
	default:
		r = mergeJob(base, n.out.Final.GlobalOptions, jobs[0], n.out.Raw)
		if r.Status == result.StatusFailed || (early && n.err != nil) {
			msg := r.Error
			if n.err != nil {
				msg = n.err.Error()
			}
			r.Status, r.Error = result.StatusFailed, fmt.Sprintf("workload %s on %s: %s", NoiseName, step.Target, msg)
			failure = errors.New(r.Error)
		}
	}
	if err := e.Store.AddResult(context.WithoutCancel(ctx), &r); err != nil {
		return err
	}
	e.Observer.WorkloadFinished(step, &r)
	return failure
}
