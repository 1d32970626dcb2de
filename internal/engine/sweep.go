package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/telemetry"
	"github.com/storbench/storbench/internal/units"
)

// The saturation sweep (docs/sweep.md) runs one workload on N clients at
// once, for several N, on each target. A client is one fio job on a file of
// its own in the target's work directory; one fio process runs a step's N
// jobs, so fio itself starts them together (it sets every job up, then
// releases them at once), and each job's own IOPS and bandwidth logs, time
// stamped in Unix milliseconds, say when it ran. A step is stored as one
// result in round result.SweepRound(N): the clients' aggregate over the
// window when all of them ran (sweepagg.go), their latency merged from
// fio's json+ histograms.
const (
	// RoundSweep is the round a sweep plan runs; each step's result is
	// stored in result.SweepRound(N).
	RoundSweep = "sweep"
	// DefaultMaxClients caps an automatic sweep: doubling from one, the
	// sixth step.
	DefaultMaxClients = 32
	// SweepFilePrefix starts every client's file and log in the work
	// directory, removed with it.
	SweepFilePrefix = "storbench-sweep"
	// minClientSize is the smallest per-client file a sweep runs with.
	minClientSize = 1 << 20
)

// Sweep configures the saturation sweep.
type Sweep struct {
	// Workload is what every client runs; it must be time based.
	Workload spec.Workload
	// Clients are the steps, in order; empty doubles from one until the
	// knee is found or MaxClients is reached.
	Clients []int
	// MaxClients caps an automatic sweep; 0 means DefaultMaxClients.
	MaxClients int
	// ClientSize caps each client's file (--max-size); 0 keeps the
	// workload's size. The target's free space, shared by the most
	// clients of any step, may cap it further.
	ClientSize int64
}

// Validate refuses a sweep that cannot run: no runtime, bad steps.
func (s *Sweep) Validate() error {
	if s.Workload.Runtime <= 0 {
		return fmt.Errorf("the sweep needs a time-based workload (a runtime): %s has none", s.Workload.Name)
	}
	for i, n := range s.Clients {
		if n < 1 || n > 1024 {
			return fmt.Errorf("clients %d: out of range (1 to 1024)", n)
		}
		if i > 0 && n <= s.Clients[i-1] {
			return fmt.Errorf("clients %v: steps must grow", s.Clients)
		}
	}
	return nil
}

// Auto reports whether the steps are found as the sweep goes.
func (s *Sweep) Auto() bool { return len(s.Clients) == 0 }

// Steps are the client counts the sweep may run: the given ones, or the
// doublings up to the cap.
func (s *Sweep) Steps() []int {
	if !s.Auto() {
		return s.Clients
	}
	limit := s.MaxClients
	if limit <= 0 {
		limit = DefaultMaxClients
	}
	var out []int
	for n := 1; n <= limit; n *= 2 {
		out = append(out, n)
	}
	return out
}

// StepDuration is one step's planned measuring time.
func (s *Sweep) StepDuration() time.Duration {
	return time.Duration(s.Workload.Ramp) + time.Duration(s.Workload.Runtime)
}

// Estimate is how long the sweep's steps measure on one target, and
// whether that is an upper bound (an automatic sweep may stop sooner).
// Laying out the files comes on top.
func (s *Sweep) Estimate() (d time.Duration, atMost bool) {
	return time.Duration(len(s.Steps())) * s.StepDuration(), s.Auto()
}

func (s *Sweep) maxClients() int { return slices.Max(s.Steps()) }

func (s *Sweep) suite() *spec.Suite {
	return &spec.Suite{Name: "sweep:" + s.Workload.Name, Source: "built-in", Workloads: []spec.Workload{s.Workload}}
}

// adjustNeed asks the runner for room for every client's file at the
// largest step.
func (s *Sweep) adjustNeed(n *runner.Need) {
	if s == nil {
		return
	}
	n.FileSize = s.clientSize() * int64(s.maxClients())
}

func (s *Sweep) clientSize() int64 {
	size := int64(s.Workload.FileSize)
	if s.ClientSize > 0 && s.ClientSize < size {
		size = s.ClientSize
	}
	return size
}

// sizeIn is each client's file when the runner granted total bytes for
// all of them (its free-space rule may have cut the request): the client
// size, or an even share of total for the most clients, in whole 4 KiB.
func (s *Sweep) sizeIn(total int64) (size int64, shrunk bool) {
	size = s.clientSize()
	if share := total / int64(s.maxClients()); total > 0 && share < size {
		return share &^ (4096 - 1), true
	}
	return size, false
}

// logInterval is the averaging period of the clients' logs: a twentieth
// of the runtime, between 100 ms and 1 s.
func (s *Sweep) logInterval() time.Duration {
	d := time.Duration(s.Workload.Runtime) / 20
	return min(max(d.Round(100*time.Millisecond), 100*time.Millisecond), time.Second)
}

// clientFile and clientLog are client i's (1-based) file and log prefix.
func clientFile(i int) string { return fmt.Sprintf("%s-%d.dat", SweepFilePrefix, i) }

// sweepLogPrefix is every client's log prefix: fio numbers the logs by
// job, PREFIX_iops.I.log for the I-th.
const sweepLogPrefix = SweepFilePrefix + "-log"

func sweepLogFile(kind string, i int) string {
	return fmt.Sprintf("%s_%s.%d.log", sweepLogPrefix, kind, i)
}

// sweepJob is one step: n sections of the workload, one per client, each
// on its own file of size bytes, reported on its own, none behind a
// stonewall, with time-stamped IOPS and bandwidth logs and json+ output
// (the latency bins the merge needs).
func (s *Sweep) sweepJob(n int, size int64, ioEngine string) fio.Job {
	w := s.Workload
	one := 1
	w.NumJobs = &one
	base := fio.FromWorkload(w, fio.File{Size: size}, ioEngine)
	var job fio.Job
	for _, o := range base.Global {
		switch o.Key {
		case "filename":
		case "group_reporting":
			job.Global = append(job.Global, fio.Option{Key: "group_reporting", Value: "0"})
		default:
			job.Global = append(job.Global, o)
		}
	}
	ms := strconv.FormatInt(s.logInterval().Milliseconds(), 10)
	job.Global = append(job.Global, fio.Option{Key: "output-format", Value: "json+"}, fio.Option{Key: "log_unix_epoch", Value: "1"},
		fio.Option{Key: "log_avg_msec", Value: ms}, fio.Option{Key: "write_iops_log", Value: sweepLogPrefix},
		fio.Option{Key: "write_bw_log", Value: sweepLogPrefix})
	sec := base.Sections[0]
	for i := 1; i <= n; i++ {
		c := fio.Section{Name: fmt.Sprintf("%s.client%d", sec.Name, i), Options: []fio.Option{{Key: "filename", Value: clientFile(i)}}}
		for _, o := range sec.Options {
			if o.Key != "stonewall" {
				c.Options = append(c.Options, o)
			}
		}
		job.Sections = append(job.Sections, c)
	}
	return job
}

// runSweep runs the sweep's steps on a prepared target, stops at the first
// failed step and, when automatic, once the knee is known. The clients'
// files stay in the work directory between steps (each step reuses the
// ones laid out before) and go with it at cleanup, after a failure or
// Ctrl-C too.
func (e *Engine) runSweep(ctx context.Context, run *result.Run, plan Plan, rt *readyTarget) []error {
	s, p := plan.Sweep, rt.prepared
	if p.Dir == "" || p.Kind != "directory" {
		err := fmt.Errorf("target %s: the sweep runs each client on a file of its own in a directory; a %s target is not one (not built yet for it: docs/sweep.md)", p.Name, p.Kind)
		e.recordTargetFailure(ctx, run, plan, p.Name, err)
		return []error{err}
	}
	if slices.Contains(plan.Rounds, result.RoundNetwork) {
		e.Observer.Notice(p.Name, "no network round: with a sweep it measures the links of targets whose clients run apart (Kubernetes pods)")
	}
	size, shrunk := s.sizeIn(p.File.Size)
	if shrunk {
		e.Observer.Notice(p.Name, fmt.Sprintf("each client's file is %s, so %d clients fit in the free space", units.Bytes(size), s.maxClients()))
	}
	if size < minClientSize {
		err := fmt.Errorf("target %s: not enough free space for %d clients of at least %s each", p.Name, s.maxClients(), units.Bytes(minClientSize))
		e.recordTargetFailure(ctx, run, plan, p.Name, err)
		return []error{err}
	}
	return e.sweepSteps(ctx, p.Name, s, 0, func(at sweepAt) (*result.Result, error) {
		at.size = size
		return e.sweepStep(ctx, run, plan, rt, at)
	})
}

// sweepSteps says the sweep's estimate, then runs its steps on target
// with step, stops at the first failed step and, when automatic, once the
// knee is known. start is how long readying a step's clients takes (pods
// starting), counted in the estimate per step.
func (e *Engine) sweepSteps(ctx context.Context, target string, s *Sweep, start time.Duration, step func(at sweepAt) (*result.Result, error)) []error {
	steps := s.Steps()
	est, atMost := s.Estimate()
	word := "about"
	if atMost {
		word = "at most"
	}
	each := s.StepDuration().String() + " a step"
	if start > 0 {
		est += time.Duration(len(steps)) * start
		each += fmt.Sprintf(" and up to %s to start its clients", start)
	}
	e.Observer.Notice(target, fmt.Sprintf("sweep of %s over %s clients: %s %s, %s, plus laying out the files",
		s.Workload.Name, joinInts(steps), word, est, each))
	var done []analysis.SweepStep
	for i, n := range steps {
		r, err := step(sweepAt{index: i + 1, count: len(steps), clients: n})
		if ctx.Err() != nil {
			return nil
		}
		if err != nil {
			e.Observer.Notice(target, fmt.Sprintf("sweep stopped at %d clients: %v", n, err))
			return []error{err}
		}
		f := r.Figures()
		done = append(done, analysis.StepOf(&f, n))
		// Only a flat step is proof: the latency sign speaks for a sweep
		// that never levelled off, known at its end (analysis/knee.go).
		if k := analysis.FindKnee(done); s.Auto() && k.Found && k.Reason == "flat" {
			e.Observer.Notice(target, "knee: "+k.Summary)
			break
		}
	}
	return nil
}

// sweepAt is one step's place in the sweep.
type sweepAt struct {
	index, count, clients int
	size                  int64
}

// sweepStep runs one step, stores its result and returns it; the error
// says the step failed (a client failed, fio failed, nothing measured).
func (e *Engine) sweepStep(ctx context.Context, run *result.Run, plan Plan, rt *readyTarget, at sweepAt) (*result.Result, error) {
	s := plan.Sweep
	step := Step{RunID: run.ID, Target: rt.prepared.Name, Workload: fmt.Sprintf("%s x%d", s.Workload.Name, at.clients),
		Index: at.index, Count: at.count, Repetition: 1, Repetitions: 1, Expected: s.StepDuration()}
	e.Observer.WorkloadStarted(step)
	var rec runner.Recording
	recAt := time.Now() // the recording's series count from its first reading, taken as Start begins
	if rt.sampler != nil {
		rec = rt.sampler.Start()
	}
	started := time.Now()
	out, ferr := rt.fr.Run(ctx, s.sweepJob(at.clients, at.size, rt.ioEngine), nil)
	r := &result.Result{RunID: run.ID, Target: rt.prepared.Name, Round: result.SweepRound(at.clients), Repetition: 1,
		Workload: s.Workload.Name, Labels: maps.Clone(rt.labels), Started: started, Finished: time.Now()}
	if rec != nil {
		r.Telemetry = rec.Stop()
	}
	logs, lerr := e.readSweepLogs(context.WithoutCancel(ctx), rt, at.clients)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	result.LabelClients.Set(r.Labels, strconv.Itoa(at.clients))
	var fig sweepFigures
	if out != nil && len(out.Final.Jobs) > 0 {
		fig = aggregateSweep(sweepReading{output: &out.Final, logs: logs, interval: s.logInterval(), planned: time.Duration(s.Workload.Runtime)})
		r.RawFioJSON = out.Raw
	}
	fig.apply(r)
	r.Telemetry = telemetry.Within(r.Telemetry, recAt, fig.from, fig.to)
	r.Bottleneck = telemetry.Attribute(r, r.Telemetry)
	if link := telemetry.LinkCap(r); link != nil {
		r.Bottleneck = link
	}
	var failure error
	switch {
	case ferr != nil:
		failure = ferr
	case len(fig.failed) > 0:
		failure = fmt.Errorf("client(s) failed: %s", strings.Join(fig.failed, "; "))
	case fig.clients < at.clients:
		failure = fmt.Errorf("fio reported %d of %d clients", fig.clients, at.clients)
	case lerr != nil:
		e.Observer.Notice(rt.prepared.Name, fmt.Sprintf("%d clients: the logs could not be read (%v): the aggregate is fio's own, over each client's whole run", at.clients, lerr))
	}
	if failure != nil {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("sweep step of %d clients on %s: %v", at.clients, rt.prepared.Name, failure)
		failure = errors.New(r.Error)
	}
	if err := e.Store.AddResult(context.WithoutCancel(ctx), r); err != nil {
		return nil, err
	}
	e.Observer.WorkloadFinished(step, r)
	return r, failure
}

// readSweepLogs reads and removes every client's IOPS and bandwidth logs.
func (e *Engine) readSweepLogs(ctx context.Context, rt *readyTarget, n int) (map[int]clientLog, error) {
	logs := map[int]clientLog{}
	var errs []error
	cmd := rt.prepared.Cmder
	read := func(kind string, i int) []byte {
		path := rt.prepared.Dir + "/" + sweepLogFile(kind, i)
		data, err := execx.Output(cmd.Command(ctx, "cat", path))
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", path, err))
			return nil
		}
		if _, err := execx.Output(cmd.Command(ctx, "rm", "-f", path)); err != nil {
			errs = append(errs, err)
		}
		return data
	}
	for i := 1; i <= n; i++ {
		l, err := parseClientLog(read("iops", i), read("bw", i))
		if err != nil {
			errs = append(errs, fmt.Errorf("client %d: %w", i, err))
		}
		logs[i] = l
	}
	return logs, errors.Join(errs...)
}

func joinInts(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ",")
}
