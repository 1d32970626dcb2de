// Package engine runs a suite on targets: it prepares each target, runs
// every workload through fio, stores each result the moment it is known, and
// cleans up on success, failure and interruption. It reports what happens
// through an Observer and never prints.
package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/netround"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/telemetry"
	"github.com/storbench/storbench/internal/version"
)

// Plan is what to run, where, and how often.
type Plan struct {
	// Suite is the workloads to run. Exactly one of Suite and RawJob is set.
	Suite *spec.Suite
	// RawJob is a user's fio job file, run as it is.
	RawJob *RawJob
	// Policy is what the user allowed (--destructive): every job file,
	// a suite's generated one included, is judged under it (rawjob.go).
	Policy safety.Policy
	// Targets run one after the other.
	Targets []runner.Target
	// Repeat runs the whole suite this many times on each target (>= 1).
	Repeat int
	// Round names the conditions, "isolated" unless said otherwise.
	Round string
	// Rounds, when they include "parallel", prepare all targets at once and
	// run these rounds in order ("isolated", "parallel"); see parallel.go.
	Rounds []string
	// NetworkAllPairs has the network round measure every pair of the
	// run's nodes, the other nodes (replicas, servers) among themselves
	// too; by default each fio node against the others.
	NetworkAllPairs bool
	// Network says how long each of the network round's measurements
	// runs; zero fields take netround's defaults.
	Network netround.Options
	// Labels are the user's own labels, added to the run and every result.
	Labels map[string]string
	// LiveProgress asks fio for a status report every second and passes it
	// to Observer.WorkloadProgress. Off, fio runs exactly as the bare command
	// would, with no status reports.
	LiveProgress bool
	// FailFast stops at the first failed workload.
	FailFast bool
	// CleanupTimeout bounds the cleanup after the run; 0 means 2 minutes.
	CleanupTimeout time.Duration
	// Now and RandID make IDs deterministic in tests; nil means real ones.
	Now func() time.Time
	// Telemetry samples the host fio runs on while each workload runs,
	// where the target's runner can (runner.Prepared.Telemetry); results
	// of a target it cannot sample carry no telemetry.
	Telemetry bool
	// Contention, when set, runs the contention round (contention.go)
	// instead of a suite: Suite and RawJob stay nil.
	Contention *Contention
	// Sweep, when set, runs the saturation sweep (sweep.go) instead of a
	// suite: Suite and RawJob stay nil.
	Sweep *Sweep
	// Measurement asks for repeat-until-precise, cache dropping and
	// preconditioning (measure.go).
	Measurement Measurement
}

// Step identifies one workload execution for observers.
type Step struct {
	RunID       string
	Target      string
	Workload    string
	Index       int // 1-based position of the workload within the suite
	Count       int // workloads in the suite
	Repetition  int
	Repetitions int
	// Expected is the workload's planned duration (ramp + runtime); zero for
	// size-based workloads.
	Expected time.Duration
	// annotate adds the measurement checks to a result before it is stored.
	annotate func(*result.Result)
}

// Observer hears about progress. Calls come from the goroutine running the
// plan, in order.
type Observer interface {
	RunStarted(run *result.Run)
	Notice(target, message string)
	WorkloadStarted(s Step)
	WorkloadProgress(s Step, p result.Progress)
	WorkloadFinished(s Step, r *result.Result)
}

// ErrInterrupted is returned when the context was cancelled mid-run.
var ErrInterrupted = errors.New("interrupted")

// ErrWorkloadFailed is returned (wrapped) when at least one workload failed.
var ErrWorkloadFailed = errors.New("a workload failed")

// RefusedError is a target that refused the plan before the run began.
type RefusedError struct {
	Target string
	Err    error
}

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// Engine runs plans and records what they measure. It needs only the
// store's write side: a run created, its results added, the run finished.
type Engine struct {
	Store    store.Recorder
	Observer Observer
}

// Run executes the plan. The returned run is stored and final; the error is
// ErrInterrupted, wraps ErrWorkloadFailed, or says why nothing could run.
func (e *Engine) Run(ctx context.Context, plan Plan) (*result.Run, error) {
	now := plan.Now
	if now == nil {
		now = time.Now
	}
	plan = plan.withDefaults()
	run := newRun(plan, now())
	// Refusals (unsafe device, no space) come before anything is stored.
	if err := e.check(ctx, plan, run.ID); err != nil {
		return nil, err
	}
	if err := e.Store.CreateRun(ctx, run); err != nil {
		return nil, err
	}
	e.Observer.RunStarted(run)

	var failures []error
	targets := plan.Targets
	switch {
	case plan.Sweep != nil:
		targets, failures = e.sweepGroups(ctx, run, plan, targets) // sweepgroup.go, with its network round
	case plan.parallel():
		failures, targets = e.runRounds(ctx, run, plan), nil // parallel.go
	}
	for _, t := range targets {
		errs := e.runTarget(ctx, run, plan, t)
		failures = append(failures, errs...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			break
		}
	}
	return run, e.finish(ctx, run, now(), failures)
}

// withDefaults fills what the plan leaves unset: one repetition, the
// isolated round, and the contention round's own suite.
func (p Plan) withDefaults() Plan {
	if p.Repeat < 1 {
		p.Repeat = 1
	}
	if p.Round == "" {
		p.Round = result.RoundIsolated
	}
	if p.Contention != nil {
		p.Suite, p.Round = p.Contention.suite(), result.RoundContention
	}
	if p.Sweep != nil {
		p.Suite, p.Round = p.Sweep.suite(), RoundSweep
	}
	return p
}

// newRun is the run the plan makes, started at start: its labels, suite,
// workloads and targets, and the process running it.
func newRun(plan Plan, start time.Time) *result.Run {
	run := &result.Run{
		ID:      result.NewRunID(start, uint16(rand.UintN(1<<16))),
		Status:  result.StatusRunning,
		Started: start,
		Source:  "storbench",
		Labels:  map[string]string{string(result.LabelStorbenchVersion): version.Version},
	}
	for k, v := range plan.Labels {
		run.Labels[k] = v
	}
	// Who runs it, so a run whose process is gone shows as abandoned; off
	// Linux nothing is recorded and the run is never judged.
	if p, err := (proc.Reader{}).Self(); err == nil {
		run.Process = &p
	}
	if plan.Suite != nil {
		run.Suite = plan.Suite.Name
		for _, w := range plan.Suite.Workloads {
			run.Workloads = append(run.Workloads, w.Name)
		}
	} else {
		run.Suite = "fio-job:" + plan.RawJob.Path
		for _, s := range plan.RawJob.File.Jobs() {
			run.Workloads = append(run.Workloads, s.Name)
		}
	}
	if plan.Contention != nil {
		run.Workloads = plan.Contention.workloadNames()
	}
	for _, t := range plan.Targets {
		run.Targets = append(run.Targets, t.Name())
	}
	return run
}

// check has every target that can refuse the plan (runner.Checker) and
// the contention round judge it before anything is stored.
func (e *Engine) check(ctx context.Context, plan Plan, runID string) error {
	need := e.need(plan, runID)
	for _, t := range plan.Targets {
		if c, ok := t.(runner.Checker); ok {
			if err := c.Check(ctx, need); err != nil {
				return &RefusedError{Target: t.Name(), Err: err}
			}
		}
	}
	return plan.Contention.check(ctx, runID)
}

// finish records how the run ended, at end, even after Ctrl-C, and returns
// the run's error: ErrInterrupted, or ErrWorkloadFailed with the failures.
func (e *Engine) finish(ctx context.Context, run *result.Run, end time.Time, failures []error) error {
	fin, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	run.Finished = end
	switch {
	case ctx.Err() != nil:
		run.Status = result.StatusInterrupted
	case len(failures) > 0:
		run.Status = result.StatusFailed
		run.Note = errors.Join(failures...).Error()
	default:
		run.Status = result.StatusComplete
	}
	if err := e.Store.UpdateRun(fin, run); err != nil {
		return fmt.Errorf("recording the end of run %s: %w", run.ID, err)
	}
	switch {
	case ctx.Err() != nil:
		return ErrInterrupted
	case len(failures) > 0:
		return fmt.Errorf("%w: %w", ErrWorkloadFailed, errors.Join(failures...))
	}
	return nil
}

// runTarget prepares one target, runs everything on it and cleans it up.
func (e *Engine) runTarget(ctx context.Context, run *result.Run, plan Plan, t runner.Target) (failures []error) {
	rt, err := e.prepare(ctx, plan, e.need(plan, run.ID), t)
	if rt != nil {
		adoptHostLabels(run, rt.labels)
		defer func() { failures = append(failures, e.cleanUp(ctx, plan, rt)...) }()
	}
	if err != nil {
		e.recordTargetFailure(ctx, run, plan, t.Name(), err)
		return []error{err}
	}
	if plan.Contention != nil {
		return e.runContention(ctx, run, plan, rt)
	}
	if plan.Sweep != nil {
		return e.runSweep(ctx, run, plan, rt) // sweep.go
	}
	return e.runSteps(ctx, run, plan, rt) // measure.go
}

type step struct {
	name     string
	expected time.Duration
	job      func(ioEngine string) fio.Job
}

func rawName(r *RawJob) string {
	if jobs := r.File.Jobs(); len(jobs) == 1 {
		return jobs[0].Name
	}
	return fmt.Sprintf("%d jobs of %s", len(r.File.Jobs()), r.Path)
}

// engineFor picks libaio where fio has it and the suite asks for it, else
// psync, with a notice.
func (e *Engine) engineFor(ctx context.Context, fr fio.Runner, plan Plan, target string) (string, error) {
	if plan.Suite == nil {
		return "", nil
	}
	uses := false
	for _, w := range plan.Suite.Workloads {
		if w.IOEngine == "libaio" {
			uses = true
		}
	}
	if !uses {
		return "", nil
	}
	ok, err := fr.HasEngine(ctx, "libaio")
	if err != nil {
		return "", err
	}
	if ok {
		return "", nil
	}
	e.Observer.Notice(target, "fio here has no libaio engine: falling back to psync, so queue depths above 1 are not honoured")
	return "psync", nil
}

// invocation is one fio run of a round: the step observers hear about,
// the job, the runner it goes through, the labels its results carry and
// the sampler recording meanwhile (nil: not sampled).
type invocation struct {
	step    Step
	fr      fio.Runner
	job     fio.Job
	labels  map[string]string
	sampler runner.Sampler
}

// runStep runs one fio invocation and stores its result(s).
func (e *Engine) runStep(ctx context.Context, run *result.Run, plan Plan, inv invocation) ([]*result.Result, error) {
	step, job := inv.step, inv.job
	e.Observer.WorkloadStarted(step)
	var rec runner.Recording
	if inv.sampler != nil {
		rec = inv.sampler.Start()
	}
	started := time.Now()
	var onProgress func(result.Progress)
	if plan.LiveProgress {
		onProgress = func(p result.Progress) { e.Observer.WorkloadProgress(step, p) }
	}
	out, ferr := inv.fr.Run(ctx, job, onProgress)
	finished := time.Now()
	var tel *result.Telemetry
	if rec != nil {
		tel = rec.Stop()
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	base := result.Result{
		RunID: run.ID, Target: step.Target, Round: plan.Round, Repetition: step.Repetition,
		Workload: step.Workload, Labels: inv.labels, Started: started, Finished: finished, Telemetry: tel,
	}
	var jobs []fio.JobResult
	if out != nil {
		jobs = out.Final.AllJobs()
	}
	var stored []*result.Result
	var failure error
	if len(jobs) == 0 || (ferr != nil && plan.RawJob == nil) {
		r := base
		r.Status = result.StatusFailed
		msg := "fio produced no result"
		if ferr != nil {
			msg = ferr.Error()
		}
		if len(jobs) > 0 {
			r = mergeJob(base, out.Final.GlobalOptions, jobs[0], out.Raw)
		}
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("workload %s on %s: %s", step.Workload, step.Target, msg)
		failure = errors.New(r.Error)
		if err := e.Store.AddResult(ctx, &r); err != nil {
			return nil, err
		}
		e.Observer.WorkloadFinished(step, &r)
		return []*result.Result{&r}, failure
	}
	names := reportNames(jobs)
	for i, j := range jobs {
		r := mergeJob(base, out.Final.GlobalOptions, j, out.Raw)
		switch {
		case plan.RawJob != nil:
			r.Workload, r.Method = names[i], ranWith(plan.RawJob.Path, out.Final.GlobalOptions, j)
		case job.Path != "":
			// A suite's job workload: one result per fio job report.
			w, _ := plan.Suite.Workload(step.Workload)
			r.Method = ranWith(w.Job, out.Final.GlobalOptions, j)
			if len(jobs) > 1 {
				r.Workload = step.Workload + "/" + names[i]
			}
		}
		if step.annotate != nil {
			step.annotate(&r)
		}
		// fio exiting non-zero fails every job it reported, even one whose
		// own error code is 0 (a raw job's verify failure, a later job's
		// error): figures are kept, but never labelled complete.
		if ferr != nil && r.Status != result.StatusFailed {
			r.Status, r.Error = result.StatusFailed, ferr.Error()
		}
		if r.Status == result.StatusFailed {
			r.Error = fmt.Sprintf("workload %s on %s: %s", r.Workload, step.Target, r.Error)
			failure = errors.Join(failure, errors.New(r.Error))
		}
		if err := e.Store.AddResult(ctx, &r); err != nil {
			return stored, err
		}
		stored = append(stored, &r)
		s := step
		s.Workload = r.Workload
		e.Observer.WorkloadFinished(s, &r)
	}
	return stored, failure
}

// mergeJob is one fio job report j (global: its output's [global]
// options) on base's run, target and telemetry, labelled with the I/Os it
// kept in flight.
func mergeJob(base result.Result, global fio.Options, j fio.JobResult, raw []byte) result.Result {
	r := fio.ToResult(j)
	r.RunID, r.Target, r.Round, r.Repetition, r.Workload = base.RunID, base.Target, base.Round, base.Repetition, base.Workload
	r.Labels, r.Started, r.Finished = maps.Clone(base.Labels), base.Started, base.Finished
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if n := fio.InFlight(global, j.Options); n > 0 {
		result.LabelInFlight.Set(r.Labels, strconv.Itoa(n))
	}
	r.RawFioJSON = raw
	r.Telemetry = base.Telemetry
	r.Bottleneck = telemetry.Attribute(&r, r.Telemetry)
	if link := telemetry.LinkCap(&r); link != nil {
		r.Bottleneck = link
	}
	return r
}

func (e *Engine) need(plan Plan, runID string) runner.Need {
	n := runner.Need{RunID: runID}
	if plan.Suite != nil {
		n.FileSize = plan.Suite.MaxFileSize()
		n.Writers = plan.Suite.Writes()
		for _, w := range plan.Suite.Workloads {
			if *w.Direct {
				n.Direct = true
			}
		}
		plan.Contention.adjustNeed(&n)
		plan.Sweep.adjustNeed(&n)
		return n
	}
	n.FileSize, n.Writers, n.Direct = RawNeeds(plan.RawJob.File)
	return n
}

// recordTargetFailure stores a failed result for every workload of a target
// that could not be prepared, so show and compare say why it has no figures.
func (e *Engine) recordTargetFailure(ctx context.Context, run *result.Run, plan Plan, target string, cause error) {
	e.Observer.Notice(target, cause.Error())
	sctx := context.WithoutCancel(ctx)
	for _, w := range run.Workloads {
		r := result.Result{RunID: run.ID, Target: target, Round: plan.Round, Repetition: 1, Workload: w,
			Status: result.StatusFailed, Error: cause.Error(), Started: time.Now(), Finished: time.Now()}
		if err := e.Store.AddResult(sctx, &r); err != nil {
			e.Observer.Notice(target, "storing the failure: "+err.Error())
			return
		}
	}
}
