package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// parallel reports whether the plan asks for a parallel or a network
// round, which need every target prepared at once.
func (p Plan) parallel() bool {
	for _, r := range p.Rounds {
		if r == result.RoundParallel || r == result.RoundNetwork {
			return true
		}
	}
	return false
}

// runRounds prepares every target at once, runs the plan's rounds in order
// on all that are ready, and cleans every target up at the end:
//
//	isolated  each target alone, one after the other
//	parallel  each workload on all targets at the same moment; the next
//	          workload starts when all have finished
//	network   the links between the targets' nodes (network.go)
func (e *Engine) runRounds(ctx context.Context, run *result.Run, plan Plan) (failures []error) {
	// Targets prepare, report and measure concurrently; observers are
	// promised calls in order from one goroutine at a time.
	e = &Engine{Store: e.Store, Observer: &lockedObserver{o: e.Observer}}
	need := e.need(plan, run.ID)

	var wg sync.WaitGroup
	all := make([]*readyTarget, len(plan.Targets))
	errs := make([]error, len(plan.Targets))
	for i, t := range plan.Targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			all[i], errs[i] = e.prepare(ctx, plan, need, t)
		}()
	}
	wg.Wait()

	defer func() {
		failures = append(failures, e.cleanUpAll(ctx, plan, all)...)
	}()

	var targets []*readyTarget
	for i, rt := range all {
		if rt != nil {
			adoptHostLabels(run, rt.labels)
		}
		if errs[i] != nil {
			if ctx.Err() != nil {
				return failures
			}
			failures = append(failures, errs[i])
			for _, round := range plan.Rounds {
				rp := plan
				rp.Round = round
				e.recordTargetFailure(ctx, run, rp, plan.Targets[i].Name(), errs[i])
			}
			continue
		}
		targets = append(targets, rt)
	}
	if len(targets) == 0 {
		return failures
	}

	for _, round := range plan.Rounds {
		rp := plan
		rp.Round = round
		var errs []error
		switch round {
		case result.RoundParallel:
			errs = e.parallelRound(ctx, run, rp, targets)
		case result.RoundNetwork:
			errs = e.networkRound(ctx, run, rp, targets) // network.go
		default:
			errs = e.isolatedRound(ctx, run, rp, targets)
		}
		failures = append(failures, errs...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			return failures
		}
	}
	return failures
}

// isolatedRound runs each target alone, one after the other, as a run
// without a parallel round does (measure.go).
func (e *Engine) isolatedRound(ctx context.Context, run *result.Run, plan Plan, targets []*readyTarget) (failures []error) {
	for _, rt := range targets {
		failures = append(failures, e.runSteps(ctx, run, plan, rt)...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			return failures
		}
	}
	return failures
}

// parallelRound runs each workload on every target at once. All targets'
// goroutines wait at a barrier that opens for them together; the results of
// a workload are held until every target has finished it, so that each can
// carry the start skew.
func (e *Engine) parallelRound(ctx context.Context, run *result.Run, plan Plan, targets []*readyTarget) (failures []error) {
	count := len(targets[0].steps)
	// The same checks as a target alone (measure.go): steady state, CPU
	// idle, cache risk, the write cliff, each against its own target.
	ms := make([]*measurer, len(targets))
	for ti, rt := range targets {
		ms[ti] = e.newMeasurer(ctx, plan, rt)
	}
	for rep := 1; rep <= plan.Repeat; rep++ {
		for i := range count {
			held := &heldStore{Recorder: e.Store}
			pe := &Engine{Store: held, Observer: e.Observer}
			line := newStartLine(len(targets))
			var wg sync.WaitGroup
			errs := make([]error, len(targets))
			ended := make(chan struct{}, len(targets))
			var cleanups []func()
			for ti, rt := range targets {
				st, m := rt.steps[i], ms[ti]
				dir, cleanup, err := m.logDir(ctx, st.w)
				if err != nil {
					e.Observer.Notice(rt.prepared.Name, err.Error())
					dir, cleanup = m.fr.Dir, func() {}
				}
				cleanups = append(cleanups, cleanup)
				dropped := m.dropCache(ctx, st.w)
				step := rt.stepAt(run.ID, i, rep, plan.Repeat)
				step.annotate = func(r *result.Result) { m.annotate(ctx, st.w, dropped, dir, r) }
				inv := rt.invoke(step, st.job(rt.ioEngine))
				inv.fr.Dir = dir
				inv.fr.Cmder = line.cmder(ti, inv.fr.Cmder)
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { ended <- struct{}{} }()
					_, errs[ti] = pe.runStep(ctx, run, plan, inv)
				}()
			}
			// The barrier: every command at its start line, or already ended
			// (it could not start), or the wait bounded.
			timeout := time.NewTimer(gateWait)
			for waiting := len(targets); waiting > 0; waiting-- {
				select {
				case <-line.ready:
				case <-ended:
				case <-timeout.C:
					waiting = 0
				case <-ctx.Done():
					waiting = 0
				}
			}
			timeout.Stop()
			releaseErr := line.release(ctx.Err() == nil)
			wg.Wait()
			for _, c := range cleanups {
				c()
			}
			if ctx.Err() != nil {
				return failures
			}
			if releaseErr != nil {
				failures = append(failures, releaseErr)
			}
			skew, n, ok := startSkew(held.results, line.endsByTarget(targets))
			if ok {
				e.Observer.Notice(result.RoundParallel, fmt.Sprintf("workload %s began on %d targets within %s", targets[0].steps[i].name, n, skew.Round(time.Millisecond)))
			}
			if err := held.flush(ctx, func(r *result.Result) {
				r.Labels = maps.Clone(r.Labels)
				if r.Labels == nil {
					r.Labels = map[string]string{}
				}
				result.LabelParallelTargets.Set(r.Labels, strconv.Itoa(len(targets)))
				if ok {
					result.LabelStartSkew.Set(r.Labels, strconv.FormatFloat(float64(skew)/float64(time.Millisecond), 'f', 1, 64))
				}
			}); err != nil {
				return append(failures, err)
			}
			for _, err := range errs {
				if err != nil {
					failures = append(failures, err)
				}
			}
			if plan.FailFast && len(failures) > 0 {
				return failures
			}
		}
	}
	return failures
}

// startSkew is the spread of the moments the targets began measuring:
// where a target's command reported its I/O over (ioEnds, storbench's
// clock: the start line's end line), that moment less fio's job runtime;
// else fio's own clock, the time of its report less the runtime (late by
// whatever the I/O engine's close takes); else when storbench started
// fio. n is the number of targets compared.
func startSkew(results []*result.Result, ioEnds map[string]time.Time) (skew time.Duration, n int, ok bool) {
	starts := map[string]time.Time{}
	for _, r := range results {
		if r.Status == result.StatusFailed && len(r.RawFioJSON) == 0 {
			continue
		}
		s := ioStart(r.RawFioJSON, ioEnds[r.Target])
		if s.IsZero() {
			s = r.Started
		}
		if prev, seen := starts[r.Target]; !seen || s.Before(prev) {
			starts[r.Target] = s
		}
	}
	if len(starts) < 2 {
		return 0, len(starts), false
	}
	var lo, hi time.Time
	for _, s := range starts {
		if lo.IsZero() || s.Before(lo) {
			lo = s
		}
		if s.After(hi) {
			hi = s
		}
	}
	return hi.Sub(lo), len(starts), true
}

// ioStart reads when fio began measuring: the end of its I/O (ended, when
// known; else its report's timestamp_ms) less the longest job_runtime
// (milliseconds). Zero when unknown.
func ioStart(raw []byte, ended time.Time) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	var doc struct {
		TimestampMS int64 `json:"timestamp_ms"`
		Jobs        []struct {
			JobRuntime int64 `json:"job_runtime"`
		} `json:"jobs"`
	}
	if json.Unmarshal(raw, &doc) != nil || len(doc.Jobs) == 0 {
		return time.Time{}
	}
	var rt int64
	for _, j := range doc.Jobs {
		rt = max(rt, j.JobRuntime)
	}
	if rt <= 0 || rt > math.MaxInt64/int64(time.Millisecond) {
		return time.Time{}
	}
	if !ended.IsZero() {
		return ended.Add(-time.Duration(rt) * time.Millisecond)
	}
	if doc.TimestampMS == 0 {
		return time.Time{}
	}
	return time.UnixMilli(doc.TimestampMS - rt)
}

// heldStore keeps the results of one parallel workload until all targets
// have finished it; everything else goes straight to the store.
type heldStore struct {
	store.Recorder
	mu      sync.Mutex
	results []*result.Result
}

func (h *heldStore) AddResult(_ context.Context, r *result.Result) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.results = append(h.results, r)
	return nil
}

// flush stores the held results, each first passed to edit.
func (h *heldStore) flush(ctx context.Context, edit func(*result.Result)) error {
	sctx := context.WithoutCancel(ctx)
	var errs []error
	for _, r := range h.results {
		edit(r)
		if err := h.Recorder.AddResult(sctx, r); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// lockedObserver serialises calls to an Observer from several goroutines.
type lockedObserver struct {
	mu sync.Mutex
	o  Observer
}

func (l *lockedObserver) RunStarted(r *result.Run) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.RunStarted(r)
}

func (l *lockedObserver) Notice(target, message string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.Notice(target, message)
}

func (l *lockedObserver) WorkloadStarted(s Step) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.WorkloadStarted(s)
}

func (l *lockedObserver) WorkloadProgress(s Step, p result.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.WorkloadProgress(s, p)
}

func (l *lockedObserver) WorkloadFinished(s Step, r *result.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.WorkloadFinished(s, r)
}
