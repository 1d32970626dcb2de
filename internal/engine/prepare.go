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

// readyTarget is one target ready for fio, made once by prepare:
// everything the isolated, parallel and contention rounds run on it.
type readyTarget struct {
	// prepared is what the runner made of the target: where fio runs, its
	// file or device, its labels, its cleanup.
	prepared *runner.Prepared
	// fr runs fio on the target, in its judged work directory.
	fr fio.Runner
	// labels are fio's version, the target's kind and labels, and the
	// plan's: what every result on the target carries.
	labels map[string]string
	// ioEngine is the fio ioengine that replaces libaio where fio lacks
	// it; "" keeps each workload's.
	ioEngine string
	steps    []measuredStep
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
func (e *Engine) prepare(ctx context.Context, plan Plan, need runner.Need, t runner.Target) (*readyTarget, error) {
	p, err := t.Prepare(ctx, need)
	if err != nil {
		return nil, err
	}
	rt := &readyTarget{prepared: p, fr: p.FioRunner()}
	for _, n := range p.Notices {
		e.Observer.Notice(p.Name, n)
	}
	version, err := rt.fr.Version(ctx)
	if err != nil {
		return rt, err
	}
	rt.labels = targetLabels(plan, p, version)
	if rt.ioEngine, err = e.engineFor(ctx, rt.fr, plan, p.Name); err != nil {
		return rt, err
	}
	if plan.Telemetry && p.Telemetry != nil {
		s, err := p.Telemetry()
		if err != nil {
			// Said, not fatal: the figures stand without it.
			e.Observer.Notice(p.Name, fmt.Sprintf("no telemetry: %v; its results carry none, so what limited them cannot be judged", err))
		}
		rt.sampler = s
	}
	rt.steps = measuredSteps(plan, p)
	if plan.Contention == nil && plan.Sweep == nil { // their own files, in storbench's work directory
		if rt.fr, rt.dropJobs, err = e.judgeOn(ctx, plan, p, rt.fr, rt.ioEngine); err != nil {
			return rt, err
		}
	}
	return rt, nil
}

// targetLabels merges what results on a target carry; the plan's labels
// (the user's) win over the runner's.
func targetLabels(plan Plan, p *runner.Prepared, fioVersion string) map[string]string {
	labels := map[string]string{}
	result.LabelFioVersion.Set(labels, fioVersion)
	result.LabelTargetKind.Set(labels, p.Kind)
	maps.Copy(labels, p.Labels)
	// A fact the user gives replaces the runner's reading, and with it
	// the runner's note of where it read it.
	for fact, source := range map[result.LabelKey]result.LabelKey{
		result.LabelReplicas: result.LabelReplicasSource, result.LabelReplicaNodes: result.LabelReplicaNodesSource} {
		if _, given := fact.In(plan.Labels); given {
			delete(labels, string(source))
		}
	}
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
func (rt *readyTarget) stepAt(runID string, i, rep, reps int) Step {
	st := rt.steps[i]
	return Step{RunID: runID, Target: rt.prepared.Name, Workload: st.name, Index: i + 1, Count: len(rt.steps),
		Repetition: rep, Repetitions: reps, Expected: st.expected}
}

// invoke runs job on the target as step, in its work directory, with its
// labels and sampler; callers change what their round runs differently.
func (rt *readyTarget) invoke(step Step, job fio.Job) invocation {
	return invocation{step: step, fr: rt.fr, job: job, labels: rt.labels, sampler: rt.sampler}
}

// cleanUp removes the judged job files, then everything the runner made,
// with a fresh context: it also runs after the run was interrupted.
func (e *Engine) cleanUp(ctx context.Context, plan Plan, rt *readyTarget) []error {
	var failures []error
	if rt.dropJobs != nil {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
		err := rt.dropJobs(cctx)
		cancel()
		if err != nil {
			failures = append(failures, fmt.Errorf("target %s: cleanup: %w", rt.prepared.Name, err))
		}
	}
	timeout := plan.CleanupTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
	defer cancel()
	if err := rt.prepared.Cleanup(cctx); err != nil {
		e.Observer.Notice(rt.prepared.Name, "cleanup failed: "+err.Error())
		failures = append(failures, fmt.Errorf("target %s: cleanup: %w", rt.prepared.Name, err))
	}
	return failures
}

// cleanUpAll cleans every prepared target at once.
func (e *Engine) cleanUpAll(ctx context.Context, plan Plan, all []*readyTarget) []error {
	var wg sync.WaitGroup
	errs := make([][]error, len(all))
	for i, rt := range all {
		if rt == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.cleanUp(ctx, plan, rt)
		}()
	}
	wg.Wait()
	var out []error
	for _, e := range errs {
		out = append(out, e...)
	}
	return out
}
