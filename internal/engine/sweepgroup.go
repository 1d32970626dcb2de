package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
	"github.com/storbench/storbench/internal/units"
)

// A sweep on targets whose clients run apart (runner.Clients: a pod per
// client on Kubernetes) runs a step on every target of a client group at
// once: each target readies its N clients, every client runs its own fio
// with one job on its own file, and the step's result for the group is
// the aggregate of all of them over the window when all ran, read from
// each client's time-stamped logs exactly as for N jobs of one fio
// (sweepagg.go). With several targets in the group (a class's nodes) each
// target's own clients are also stored as a result of their own.

// sweepGroups runs the sweep on the plan's targets that run their clients
// apart, group by group, and returns the others, which the engine sweeps
// one by one (runSweep).
func (e *Engine) sweepGroups(ctx context.Context, run *result.Run, plan Plan, targets []runner.Target) (rest []runner.Target, failures []error) {
	var order []string
	groups := map[string][]runner.Clients{}
	for _, t := range targets {
		c, ok := t.(runner.Clients)
		if !ok {
			rest = append(rest, t)
			continue
		}
		g := c.ClientGroup()
		if _, seen := groups[g]; !seen {
			order = append(order, g)
		}
		groups[g] = append(groups[g], c)
	}
	for _, g := range order {
		failures = append(failures, e.sweepGroup(ctx, run, plan, g, groups[g])...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			return nil, failures
		}
	}
	return rest, failures
}

// groupMember is one prepared target of a client group.
type groupMember struct {
	t  runner.Clients
	rt *readyTarget
}

// sweepGroup prepares the group's targets at once, sweeps them together
// and removes every client and target after the last step, a failed one,
// or Ctrl-C.
func (e *Engine) sweepGroup(ctx context.Context, run *result.Run, plan Plan, name string, ts []runner.Clients) (failures []error) {
	e = &Engine{Store: e.Store, Observer: &lockedObserver{o: e.Observer}}
	need := e.need(plan, run.ID)
	rts := make([]*readyTarget, len(ts))
	errs := make([]error, len(ts))
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rts[i], errs[i] = e.prepare(ctx, plan, need, t)
		}()
	}
	wg.Wait()
	defer func() { failures = append(failures, e.releaseGroup(ctx, plan, ts, rts)...) }()
	var members []groupMember
	for i, rt := range rts {
		if rt != nil {
			adoptHostLabels(run, rt.labels)
		}
		if errs[i] != nil {
			if ctx.Err() != nil {
				return failures
			}
			e.recordTargetFailure(ctx, run, plan, ts[i].Name(), errs[i])
			failures = append(failures, errs[i])
			continue
		}
		members = append(members, groupMember{t: ts[i], rt: rt})
	}
	if len(members) == 0 || (plan.FailFast && len(failures) > 0) {
		return failures
	}
	if slices.Contains(plan.Rounds, result.RoundNetwork) {
		// The links first, so that what bound a step can be read against
		// them (analysis.Breakdowns, BoundBy).
		rp := plan
		rp.Round = result.RoundNetwork
		rts := make([]*readyTarget, len(members))
		for i, m := range members {
			rts[i] = m.rt
		}
		failures = append(failures, e.networkRound(ctx, run, rp, rts)...)
		if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
			return failures
		}
	}
	s := plan.Sweep
	size, shrunk := s.sizeIn(members[0].rt.prepared.File.Size)
	for _, m := range members[1:] {
		if sz, sh := s.sizeIn(m.rt.prepared.File.Size); sz < size {
			size, shrunk = sz, sh
		}
	}
	if shrunk {
		e.Observer.Notice(name, fmt.Sprintf("each client's file is %s, so %d clients fit in the free space", units.Bytes(size), s.maxClients()))
	}
	if size < minClientSize {
		err := fmt.Errorf("target %s: not enough free space for %d clients of at least %s each", name, s.maxClients(), units.Bytes(minClientSize))
		e.recordTargetFailure(ctx, run, plan, name, err)
		return append(failures, err)
	}
	var start time.Duration
	for _, m := range members {
		start = max(start, m.t.ClientStart())
	}
	g := &clientGroup{name: name, members: members, need: runner.Need{RunID: run.ID, FileSize: size, Writers: need.Writers, Direct: need.Direct}}
	return append(failures, e.sweepSteps(ctx, name, s, start, func(at sweepAt) (*result.Result, error) {
		at.size = size
		return e.groupStep(ctx, run, plan, g, at)
	})...)
}

// releaseGroup removes every client, then every target, of the group, all
// at once, with a fresh context.
func (e *Engine) releaseGroup(ctx context.Context, plan Plan, ts []runner.Clients, rts []*readyTarget) []error {
	timeout := plan.CleanupTimeout
	if timeout == 0 {
		timeout = 2 * time.Minute
	}
	var mu sync.Mutex
	var out []error
	var wg sync.WaitGroup
	for i, t := range ts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), timeout)
			err := t.ReleaseClients(cctx)
			cancel()
			var errs []error
			if err != nil {
				e.Observer.Notice(t.Name(), "removing the sweep's clients failed: "+err.Error())
				errs = append(errs, fmt.Errorf("target %s: cleanup of the sweep's clients: %w", t.Name(), err))
			}
			if rts[i] != nil {
				errs = append(errs, e.cleanUp(ctx, plan, rts[i])...)
			}
			mu.Lock()
			out = append(out, errs...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// clientGroup is a group's prepared targets and what each client needs.
type clientGroup struct {
	name    string
	members []groupMember
	// need is each client's: FileSize is one client's file.
	need runner.Need
}

// clientRun is one client's fio run in a step: its target (member), its
// number there (1-based), what fio said and its logs.
type clientRun struct {
	member, index int
	client        runner.Client
	// prerun is the file the start gate's command leaves.
	prerun string
	out    *fio.Outcome
	err    error
	log    clientLog
	logErr error
}

// groupStep readies every target's clients for the step, runs them all at
// once and stores the group's aggregate (and, for several targets, each
// target's); the error says the step failed.
func (e *Engine) groupStep(ctx context.Context, run *result.Run, plan Plan, g *clientGroup, at sweepAt) (*result.Result, error) {
	s := plan.Sweep
	runs, err := g.readyClients(ctx, at.clients)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	step := Step{RunID: run.ID, Target: g.name, Workload: fmt.Sprintf("%s x%d", s.Workload.Name, at.clients),
		Index: at.index, Count: at.count, Repetition: 1, Repetitions: 1, Expected: s.StepDuration()}
	e.Observer.WorkloadStarted(step)
	if err != nil {
		r := &result.Result{RunID: run.ID, Target: g.name, Round: result.SweepRound(at.clients), Repetition: 1, Workload: s.Workload.Name,
			Labels: g.commonLabels(), Status: result.StatusFailed, Started: time.Now(), Finished: time.Now(),
			Error: fmt.Sprintf("sweep step of %d clients on %s: readying the clients: %v", at.clients, g.name, err)}
		return e.storeFailedStep(ctx, step, r, at.clients)
	}
	// Every client's file is laid out before any client starts: a client
	// laying out its file while the others run would start late.
	if err := g.layOut(ctx, s, runs, at.size); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		r := &result.Result{RunID: run.ID, Target: g.name, Round: result.SweepRound(at.clients), Repetition: 1, Workload: s.Workload.Name,
			Labels: g.commonLabels(), Status: result.StatusFailed, Started: time.Now(), Finished: time.Now(),
			Error: fmt.Sprintf("sweep step of %d clients on %s: laying out the clients' files: %v", at.clients, g.name, err)}
		return e.storeFailedStep(ctx, step, r, at.clients)
	}
	recs := make([]runner.Recording, len(g.members))
	// recAt is when each recording began: its series' offsets count from
	// its first reading, taken as Start begins (a node's sampler answers
	// through the API server, which can take seconds).
	recAt := make([]time.Time, len(g.members))
	for i, m := range g.members {
		if m.rt.sampler != nil {
			recAt[i] = time.Now()
			recs[i] = m.rt.sampler.Start()
		}
	}
	started := time.Now()
	g.runClients(ctx, s, runs, at.size)
	finished := time.Now()
	tel := make([]*result.Telemetry, len(g.members))
	for i, rec := range recs {
		if rec != nil {
			tel[i] = rec.Stop()
		}
	}
	readClientLogs(context.WithoutCancel(ctx), runs)
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	span := stepSpan{started: started, finished: finished}
	var perTarget []*result.Result
	if len(g.members) > 1 {
		for i, m := range g.members {
			r := g.stepResult(run, s, at, clientsOf(runs, i), span, m.rt.prepared.Name, m.rt.labels, tel[i], recAt[i])
			perTarget = append(perTarget, r)
		}
	}
	r := g.stepResult(run, s, at, runs, span, g.name, g.commonLabels(), nil, time.Time{})
	if len(g.members) == 1 {
		r = g.stepResult(run, s, at, runs, span, g.name, g.members[0].rt.labels, tel[0], recAt[0])
	} else {
		r.Bottleneck = groupBottleneck(perTarget)
	}
	for _, pr := range perTarget {
		if err := e.Store.AddResult(context.WithoutCancel(ctx), pr); err != nil {
			return nil, err
		}
	}
	if err := e.Store.AddResult(context.WithoutCancel(ctx), r); err != nil {
		return nil, err
	}
	e.noteLogErrors(g.name, at.clients, runs)
	e.Observer.WorkloadFinished(step, r)
	if r.Status == result.StatusFailed {
		return r, errors.New(r.Error)
	}
	return r, nil
}

// storeFailedStep stores a step that failed before its clients ran.
func (e *Engine) storeFailedStep(ctx context.Context, step Step, r *result.Result, clients int) (*result.Result, error) {
	result.LabelClients.Set(r.Labels, strconv.Itoa(clients))
	if err := e.Store.AddResult(context.WithoutCancel(ctx), r); err != nil {
		return nil, err
	}
	e.Observer.WorkloadFinished(step, r)
	return r, errors.New(r.Error)
}

// layOut has every client's fio lay out its file (create_only), all at
// once, before the step starts them.
func (g *clientGroup) layOut(ctx context.Context, s *Sweep, runs []*clientRun, size int64) error {
	errs := make([]error, len(runs))
	var wg sync.WaitGroup
	for i, c := range runs {
		m := g.members[c.member]
		fr := fio.Runner{Cmder: c.client.Cmder, Dir: c.client.Dir, Env: m.rt.fr.Env}
		job := s.clientJob(c.index, size, m.rt.ioEngine)
		job.Global = append(job.Global, fio.Option{Key: "create_only", Value: "1"})
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := fr.Run(ctx, job, nil); err != nil {
				errs[i] = fmt.Errorf("%s: %w", c.client.Name, err)
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// stepSpan is when a step's fio ran.
type stepSpan struct{ started, finished time.Time }

// readyClients has every target ready n clients at once.
func (g *clientGroup) readyClients(ctx context.Context, n int) ([]*clientRun, error) {
	got := make([][]runner.Client, len(g.members))
	errs := make([]error, len(g.members))
	var wg sync.WaitGroup
	for i, m := range g.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = m.t.Clients(ctx, m.rt.prepared, g.need, n)
			if errs[i] == nil && len(got[i]) != n {
				errs[i] = fmt.Errorf("target %s: %d clients readied, %d asked for", m.t.Name(), len(got[i]), n)
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var runs []*clientRun
	for i, cs := range got {
		for k, c := range cs {
			runs = append(runs, &clientRun{member: i, index: k + 1, client: c})
		}
	}
	return runs, nil
}

// startGate is when a step's clients begin their I/O: the next whole
// second after every client's fio has had time to start (exec through
// the API server took up to 200 ms a client when 48 started at once on
// the 2-core test cluster), so that they begin together rather than in the order their
// commands reached them.
func startGate(now time.Time, clients int) time.Time {
	return now.Add(time.Second + time.Duration(clients)*250*time.Millisecond).Truncate(time.Second).Add(time.Second)
}

// gateCommand waits, before a client's I/O, for the start gate on its
// node's clock (fio's exec_prerun; its wait is not part of the job's
// runtime, and the logs say when each client really began).
func gateCommand(gate time.Time) string {
	return fmt.Sprintf("sh -c 'until [ $(date +%%s) -ge %d ]; do sleep 0.01; done'", gate.Unix())
}

// prerunFile is what fio leaves in its directory for a job with
// exec_prerun: the command's output.
func prerunFile(job fio.Job) string { return job.Sections[0].Name + ".prerun.txt" }

// runClients starts every client's fio, each waiting for one start gate,
// and waits for all.
func (g *clientGroup) runClients(ctx context.Context, s *Sweep, runs []*clientRun, size int64) {
	gate := gateCommand(startGate(time.Now(), len(runs)))
	var wg sync.WaitGroup
	for _, c := range runs {
		m := g.members[c.member]
		fr := fio.Runner{Cmder: c.client.Cmder, Dir: c.client.Dir, Env: m.rt.fr.Env}
		job := s.clientJob(c.index, size, m.rt.ioEngine)
		job.Global = append(job.Global, fio.Option{Key: "exec_prerun", Value: gate})
		c.prerun = prerunFile(job)
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.out, c.err = fr.Run(ctx, job, nil)
		}()
	}
	wg.Wait()
}

// readClientLogs reads and removes every client's IOPS and bandwidth
// logs, each through its own Cmder.
func readClientLogs(ctx context.Context, runs []*clientRun) {
	var wg sync.WaitGroup
	for _, c := range runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var errs []error
			read := func(kind string) []byte {
				path := clientPath(c.client.Dir, clientLogFile(c.index, kind))
				data, err := execx.Output(c.client.Cmder.Command(ctx, "cat", path))
				if err != nil {
					errs = append(errs, fmt.Errorf("reading %s on %s: %w", path, c.client.Name, err))
					return nil
				}
				if _, err := execx.Output(c.client.Cmder.Command(ctx, "rm", "-f", path)); err != nil {
					errs = append(errs, err)
				}
				return data
			}
			if c.prerun != "" {
				if _, err := execx.Output(c.client.Cmder.Command(ctx, "rm", "-f", clientPath(c.client.Dir, c.prerun))); err != nil {
					errs = append(errs, err)
				}
			}
			l, err := parseClientLog(read("iops"), read("bw"))
			c.log, c.logErr = l, errors.Join(append(errs, err)...)
		}()
	}
	wg.Wait()
}

func (e *Engine) noteLogErrors(name string, n int, runs []*clientRun) {
	for _, c := range runs {
		if c.logErr != nil && c.err == nil {
			e.Observer.Notice(name, fmt.Sprintf("%d clients: %s's logs could not be read (%v): its share is fio's own, over its whole run", n, c.client.Name, c.logErr))
		}
	}
}

func clientsOf(runs []*clientRun, member int) []*clientRun {
	var out []*clientRun
	for _, c := range runs {
		if c.member == member {
			out = append(out, c)
		}
	}
	return out
}

// stepResult is the aggregate of runs as one result of target, with the
// given labels and telemetry (its recording begun at telAt).
func (g *clientGroup) stepResult(run *result.Run, s *Sweep, at sweepAt, runs []*clientRun, span stepSpan, target string,
	labels map[string]string, tel *result.Telemetry, telAt time.Time) *result.Result {
	r := &result.Result{RunID: run.ID, Target: target, Round: result.SweepRound(at.clients), Repetition: 1,
		Workload: s.Workload.Name, Labels: maps.Clone(labels), Started: span.started, Finished: span.finished, Telemetry: tel}
	var out fio.Output
	logs := map[int]clientLog{}
	var failed []string
	for _, c := range runs {
		if c.out == nil || len(c.out.Final.Jobs) == 0 {
			msg := "no output"
			if c.err != nil {
				msg = c.err.Error()
			}
			failed = append(failed, fmt.Sprintf("%s: %s", c.client.Name, msg))
			continue
		}
		if out.Version == "" {
			out.Version, out.TimestampMS, out.Timestamp = c.out.Final.Version, c.out.Final.TimestampMS, c.out.Final.Timestamp
		}
		out.Jobs = append(out.Jobs, c.out.Final.Jobs...)
		logs[len(out.Jobs)] = c.log
		if c.err != nil {
			failed = append(failed, fmt.Sprintf("%s: %v", c.client.Name, c.err))
		}
	}
	var fig sweepFigures
	if len(out.Jobs) > 0 {
		fig = aggregateSweep(sweepReading{output: &out, logs: logs, interval: s.logInterval(), planned: time.Duration(s.Workload.Runtime)})
		// Pretty-printed, as fio prints it: readers split documents by
		// their opening and closing lines.
		if raw, err := json.MarshalIndent(&out, "", "  "); err == nil {
			r.RawFioJSON = raw
		}
	}
	fig.apply(r)
	result.LabelClients.Set(r.Labels, strconv.Itoa(at.clients))
	if len(failed) > 0 {
		result.LabelSweepFailed.Set(r.Labels, strings.Join(append(fig.failed, failed...), "; "))
	}
	if tel != nil {
		r.Telemetry = telemetry.Within(tel, telAt, fig.from, fig.to)
		r.Bottleneck = telemetry.Attribute(r, r.Telemetry)
	}
	if link := telemetry.LinkCap(r); link != nil {
		r.Bottleneck = link
	}
	var failure string
	switch {
	case len(failed) > 0:
		failure = "client(s) failed: " + strings.Join(failed, "; ")
	case len(fig.failed) > 0:
		failure = "client(s) failed: " + strings.Join(fig.failed, "; ")
	case fig.clients < len(runs):
		failure = fmt.Sprintf("fio reported %d of %d clients", fig.clients, len(runs))
	}
	if failure != "" {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("sweep step of %d clients on %s: %s", at.clients, target, failure)
	}
	return r
}

// commonLabels are the labels every target of the group shares: the
// class's facts, not one node's.
func (g *clientGroup) commonLabels() map[string]string {
	out := maps.Clone(g.members[0].rt.labels)
	for _, m := range g.members[1:] {
		for k, v := range out {
			if m.rt.labels[k] != v {
				delete(out, k)
			}
		}
	}
	return out
}

// groupBottleneck names what limited a group's step from its targets'
// own: the first that telemetry could name, with its target.
func groupBottleneck(rs []*result.Result) *result.Attribution {
	for _, r := range rs {
		if b := r.Bottleneck; b != nil && b.LimitedBy != telemetry.LimitedByUnclear && b.LimitedBy != "" {
			out := *b
			out.Evidence = r.Target + ": " + b.Evidence
			return &out
		}
	}
	return nil
}

// clientJob is client index's own fio job: one job of the sweep's on
// clientFile(index), logging to clientLogFile(index, …), so clients that
// share a directory (a shared volume) keep apart.
func (s *Sweep) clientJob(index int, size int64, ioEngine string) fio.Job {
	job := s.sweepJob(1, size, ioEngine)
	prefix := clientLogPrefix(index)
	for i, o := range job.Global {
		if o.Key == "write_iops_log" || o.Key == "write_bw_log" {
			job.Global[i].Value = prefix
		}
	}
	sec := &job.Sections[0]
	sec.Name = strings.TrimSuffix(sec.Name, ".client1") + ".client" + strconv.Itoa(index)
	for i, o := range sec.Options {
		if o.Key == "filename" {
			sec.Options[i].Value = clientFile(index)
		}
	}
	return job
}

func clientLogPrefix(index int) string { return fmt.Sprintf("%s-%d", sweepLogPrefix, index) }

// clientLogFile is the log fio writes for a client's one job.
func clientLogFile(index int, kind string) string {
	return fmt.Sprintf("%s_%s.1.log", clientLogPrefix(index), kind)
}

// clientPath is file in dir, or as it is where dir is the Cmder's own.
func clientPath(dir, file string) string {
	if dir == "" {
		return file
	}
	return dir + "/" + file
}
