package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// parallel reports whether the plan asks for a parallel round, which needs
// every target prepared at once.
func (p Plan) parallel() bool {
	for _, r := range p.Rounds {
		if r == result.RoundParallel {
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
func (e *Engine) runRounds(ctx context.Context, run *result.Run, plan Plan) (failures []error) {
	// Targets prepare, report and measure concurrently; observers are
	// promised calls in order from one goroutine at a time.
	e = &Engine{Store: e.Store, Observer: &lockedObserver{o: e.Observer}}
	need := e.need(plan, run.ID)

	var wg sync.WaitGroup
	all := make([]*prepared, len(plan.Targets))
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

	var targets []*prepared
	for i, pt := range all {
		if pt != nil {
			adoptHostLabels(run, pt.labels)
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
		targets = append(targets, pt)
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
func (e *Engine) isolatedRound(ctx context.Context, run *result.Run, plan Plan, targets []*prepared) (failures []error) {
	for _, pt := range targets {
		failures = append(failures, e.runSteps(ctx, run, plan, pt)...)
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
func (e *Engine) parallelRound(ctx context.Context, run *result.Run, plan Plan, targets []*prepared) (failures []error) {
	count := len(targets[0].steps)
	// The same checks as a target alone (measure.go): steady state, CPU
	// idle, cache risk, the write cliff, each against its own target.
	ms := make([]*measurer, len(targets))
	for ti, pt := range targets {
		ms[ti] = e.newMeasurer(ctx, plan, pt)
	}
	for rep := 1; rep <= plan.Repeat; rep++ {
		for i := range count {
			held := &heldStore{Store: e.Store}
			pe := &Engine{Store: held, Observer: e.Observer}
			line := newStartLine(len(targets))
			var wg sync.WaitGroup
			errs := make([]error, len(targets))
			ended := make(chan struct{}, len(targets))
			var cleanups []func()
			for ti, pt := range targets {
				st, m := pt.steps[i], ms[ti]
				dir, cleanup, err := m.logDir(ctx, st.w)
				if err != nil {
					e.Observer.Notice(pt.p.Name, err.Error())
					dir, cleanup = m.fr.Dir, func() {}
				}
				cleanups = append(cleanups, cleanup)
				dropped := m.dropCache(ctx, st.w)
				step := pt.stepAt(run.ID, i, rep, plan.Repeat)
				step.annotate = func(r *result.Result) { m.annotate(ctx, st.w, dropped, dir, r) }
				inv := pt.invoke(step, st.job(pt.engine))
				inv.fr.Dir = dir
				inv.fr.Cmder = line.cmder(inv.fr.Cmder)
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
			skew, n, ok := startSkew(held.results)
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

// startSkew is the spread of the moments the targets began measuring: from
// fio's own clock (the end of its report less the job's runtime) where its
// output says, else from when storbench started fio. n is the number of
// targets compared.
func startSkew(results []*result.Result) (skew time.Duration, n int, ok bool) {
	starts := map[string]time.Time{}
	for _, r := range results {
		if r.Status == result.StatusFailed && len(r.RawFioJSON) == 0 {
			continue
		}
		s := ioStart(r.RawFioJSON)
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

// ioStart reads when fio began measuring: its report's timestamp_ms less
// the longest job_runtime (both milliseconds). Zero when unknown.
func ioStart(raw []byte) time.Time {
	if len(raw) == 0 {
		return time.Time{}
	}
	var doc struct {
		TimestampMS int64 `json:"timestamp_ms"`
		Jobs        []struct {
			JobRuntime int64 `json:"job_runtime"`
		} `json:"jobs"`
	}
	if json.Unmarshal(raw, &doc) != nil || doc.TimestampMS == 0 || len(doc.Jobs) == 0 {
		return time.Time{}
	}
	var rt int64
	for _, j := range doc.Jobs {
		rt = max(rt, j.JobRuntime)
	}
	if rt <= 0 || rt > math.MaxInt64/int64(time.Millisecond) {
		return time.Time{}
	}
	return time.UnixMilli(doc.TimestampMS - rt)
}

// heldStore keeps the results of one parallel workload until all targets
// have finished it; everything else goes straight to the store.
type heldStore struct {
	store.Store
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
		if err := h.Store.AddResult(sctx, r); err != nil {
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

func (l *lockedObserver) WorkloadProgress(s Step, p fio.Progress) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.WorkloadProgress(s, p)
}

func (l *lockedObserver) WorkloadFinished(s Step, r *result.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.o.WorkloadFinished(s, r)
}

// The start line: in a parallel round each target's fio command is started
// behind a small sh gate that reports on stderr that it is ready, then waits
// for one line on stdin. When every target is ready (or has failed), one
// newline to each releases them together, so the skew left is the delivery
// of that newline and fio's own start-up, not the time a transport (a
// Kubernetes exec, an SSH session) takes to set a command up.
const (
	gateMarker = "storbench-gate-ready"
	gateScript = `printf '%s\n' "` + gateMarker + `" >&2; read -r _ || exit 125; exec "$@"`
	// gateWait bounds how long the barrier waits for slow targets.
	gateWait = 2 * time.Minute
)

// startLine releases the commands of one parallel workload together.
type startLine struct {
	mu      sync.Mutex
	ready   chan struct{}
	writers []*os.File
}

func newStartLine(n int) *startLine { return &startLine{ready: make(chan struct{}, n)} }

// cmder wraps c so its commands wait at the start line.
func (s *startLine) cmder(c execx.Cmder) execx.Cmder { return gatedCmder{inner: c, line: s} }

// release lets every waiting command go, or with run false (the run was
// interrupted) makes each exit without running.
func (s *startLine) release(run bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, w := range s.writers {
		if !run {
			break
		}
		if _, err := w.Write([]byte("\n")); err != nil {
			errs = append(errs, fmt.Errorf("releasing a command: %w", err))
		}
	}
	for _, w := range s.writers {
		if err := w.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.writers = nil
	return errors.Join(errs...)
}

type gatedCmder struct {
	inner execx.Cmder
	line  *startLine
}

func (g gatedCmder) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	argv := append([]string{"-c", gateScript, "storbench-gate", name}, args...)
	return &gatedCmd{Cmd: g.inner.Command(ctx, "sh", argv...), line: g.line}
}

type gatedCmd struct {
	execx.Cmd
	line   *startLine
	stderr io.Writer
}

func (c *gatedCmd) SetDir(d string) execx.Cmd       { c.Cmd.SetDir(d); return c }
func (c *gatedCmd) SetEnv(e ...string) execx.Cmd    { c.Cmd.SetEnv(e...); return c }
func (c *gatedCmd) SetStdin(io.Reader) execx.Cmd    { return c } // stdin carries the start signal
func (c *gatedCmd) SetStdout(w io.Writer) execx.Cmd { c.Cmd.SetStdout(w); return c }
func (c *gatedCmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

func (c *gatedCmd) Run() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	c.line.mu.Lock()
	c.line.writers = append(c.line.writers, w)
	c.line.mu.Unlock()
	defer r.Close()
	c.Cmd.SetStdin(r)
	c.Cmd.SetStderr(&markerWriter{next: c.stderr, ready: c.line.ready})
	return c.Cmd.Run()
}

// markerWriter passes stderr on, minus the gate's ready line, which it
// turns into a signal.
type markerWriter struct {
	next  io.Writer
	ready chan<- struct{}
	first []byte
	done  bool
}

func (m *markerWriter) Write(p []byte) (int, error) {
	n := len(p)
	if !m.done {
		m.first = append(m.first, p...)
		i := bytes.IndexByte(m.first, '\n')
		if i < 0 && len(m.first) < len(gateMarker)+1 {
			return n, nil
		}
		m.done = true
		rest := m.first
		if i >= 0 && string(m.first[:i]) == gateMarker {
			m.ready <- struct{}{}
			rest = m.first[i+1:]
		}
		m.first = nil
		p = rest
	}
	if m.next != nil && len(p) > 0 {
		if _, err := m.next.Write(p); err != nil {
			return n, err
		}
	}
	return n, nil
}
