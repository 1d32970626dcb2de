package engine

import (
	"context"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// prepared is one target ready for fio, made once by prepare: everything
// the isolated, parallel and contention rounds run on it.
type prepared struct {
	p *runner.Prepared
	// fr runs fio on the target, in its judged work directory.
	fr fio.Runner
	// labels are fio's version, the target's kind and labels, and the
	// plan's: what every result on the target carries.
	labels map[string]string
	// engine replaces libaio where fio lacks it; "" keeps each workload's.
	engine string
	steps  []measuredStep
	// sampler records the host fio runs on; nil when it is not sampled.
	sampler runner.Sampler
	// dropJobs removes the judged job files and releases the devices they
	// claimed; nil when nothing was judged.
	dropJobs func(context.Context) error
}

// prepare has the runner prepare t and readies it for fio: the runner's
// notices told, fio asked its version and engines, labels merged, steps
// listed, the sampler made when the plan asks for telemetry, and (outside
// the contention round) fio's own reading of the job files judged before
// any runs (rawjob.go). When the runner prepared the target but a later
// step failed, the returned value comes with the error: cleanUp still
// removes what the runner made.
func (e *Engine) prepare(ctx context.Context, plan Plan, need runner.Need, t runner.Target) (*prepared, error) {
	p, err := t.Prepare(ctx, need)
	if err != nil {
		return nil, err
	}
	pt := &prepared{p: p, fr: fio.Runner{Cmder: p.Cmder, Dir: p.Dir}}
	for _, n := range p.Notices {
		e.Observer.Notice(p.Name, n)
	}
	version, err := pt.fr.Version(ctx)
	if err != nil {
		return pt, err
	}
	pt.labels = targetLabels(plan, p, version)
	if pt.engine, err = e.engineFor(ctx, pt.fr, plan, p.Name); err != nil {
		return pt, err
	}
	if plan.Telemetry && p.Telemetry != nil {
		s, err := p.Telemetry()
		if err != nil {
			// Said, not fatal: the figures stand without it.
			e.Observer.Notice(p.Name, fmt.Sprintf("no telemetry: %v; its results carry none, so what limited them cannot be judged", err))
		}
		pt.sampler = s
	}
	pt.steps = measuredSteps(plan, p)
	if plan.Contention == nil {
		if pt.fr, pt.dropJobs, err = e.judgeOn(ctx, plan, p, pt.fr, pt.engine); err != nil {
			return pt, err
		}
	}
	return pt, nil
}

// targetLabels merges what results on a target carry; the plan's labels
// (the user's) win over the runner's.
func targetLabels(plan Plan, p *runner.Prepared, fioVersion string) map[string]string {
	labels := map[string]string{}
	result.LabelFioVersion.Set(labels, fioVersion)
	result.LabelTargetKind.Set(labels, p.Kind)
	maps.Copy(labels, p.Labels)
	maps.Copy(labels, plan.Labels)
	return labels
}

// adoptHostLabels gives the run the host-wide labels (host, kernel, CPU)
// of the first target that has them, in the plan's order.
func adoptHostLabels(run *result.Run, labels map[string]string) {
	for _, k := range result.HostLabels {
		if _, set := k.In(run.Labels); !set && k.Of(labels) != "" {
			k.Set(run.Labels, k.Of(labels))
		}
	}
}

// stepAt is the i-th step as observers see it in repetition rep of reps.
func (pt *prepared) stepAt(runID string, i, rep, reps int) Step {
	st := pt.steps[i]
	return Step{RunID: runID, Target: pt.p.Name, Workload: st.name, Index: i + 1, Count: len(pt.steps),
		Repetition: rep, Repetitions: reps, Expected: st.expected}
}

// invoke runs job on the target as step, in its work directory, with its
// labels and sampler; callers change what their round runs differently.
func (pt *prepared) invoke(step Step, job fio.Job) invocation {
	return invocation{step: step, fr: pt.fr, job: job, labels: pt.labels, sampler: pt.sampler}
}

// cleanUp removes the judged job files, then everything the runner made,
// with a fresh context: it also runs after the run was interrupted.
func (e *Engine) cleanUp(ctx context.Context, plan Plan, pt *prepared) []error {
	var failures []error
	if pt.dropJobs != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		err := pt.dropJobs(cctx)
		cancel()
		if err != nil {
			failures = append(failures, fmt.Errorf("target %s: cleanup: %w", pt.p.Name, err))
		}
	}
	timeout := plan.CleanupTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := pt.p.Cleanup(cctx); err != nil {
		e.Observer.Notice(pt.p.Name, "cleanup failed: "+err.Error())
		failures = append(failures, fmt.Errorf("target %s: cleanup: %w", pt.p.Name, err))
	}
	return failures
}

// cleanUpAll cleans every prepared target at once.
func (e *Engine) cleanUpAll(ctx context.Context, plan Plan, all []*prepared) []error {
	var wg sync.WaitGroup
	errs := make([][]error, len(all))
	for i, pt := range all {
		if pt == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.cleanUp(ctx, plan, pt)
		}()
	}
	wg.Wait()
	var out []error
	for _, e := range errs {
		out = append(out, e...)
	}
	return out
}
