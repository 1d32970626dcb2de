package storbench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/orphan"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

// RunRequest is what to run, where and how: the run command's options as
// values. Start from DefaultRunRequest, which holds the command's defaults.
// An option that may be left unset is a pointer or an empty value, so the
// request itself says whether the caller chose it. Errors name the
// request's fields (Repeat, Measure.RepeatMin: storbench.Field), which the
// command line shows as its flags.
type RunRequest struct {
	// Suite is a built-in suite name or a suite YAML file; empty is the
	// standard suite (DefaultSuite), and a suite named here is one the
	// caller chose (it may not be combined with FioJob).
	Suite string
	// SuiteSpec, when set, is the suite itself, built by the caller, used
	// instead of Suite (and never changed by the run); like a Suite the
	// caller gave, it holds the contention round's probe.
	SuiteSpec *spec.Suite
	// FioJob is a user's fio job file, run as fio runs it, instead of a
	// suite; Getenv expands its ${VAR} (nil: the process environment).
	FioJob string
	Getenv func(string) string
	// Workloads selects workloads of the suite by name; empty runs all.
	Workloads []string
	// Targets are directories, block devices, k8s:STORAGECLASS names and
	// ssh://[user@]host[:port]/path on hosts reached over SSH.
	Targets []string
	// Wrap, when set, wraps each target of Targets (the contention
	// round's noise target aside) before it runs: a bench program's
	// clock. Nil leaves them as they are.
	Wrap func(runner.Target) runner.Target
	// Labels label the run and every result.
	Labels map[string]string
	// Repeat runs the suite this many times on each target (>= 1).
	Repeat int
	// Destructive names the block devices write workloads may destroy.
	Destructive []string
	FailFast    bool
	// Round is result.RoundIsolated or result.RoundContention; Probe and
	// NoiseTarget shape the contention round.
	Round       string
	Probe       string
	NoiseTarget string
	// NoiseSize is the bulk writer's file ("256MiB"); empty: 1 GiB.
	NoiseSize string
	// Rounds are the isolated and parallel rounds, in order.
	Rounds []string
	// NetworkAllPairs: the network round measures every pair of nodes.
	NetworkAllPairs bool
	Telemetry       bool
	// LiveProgress asks fio for a status report every second, passed to
	// the observer's WorkloadProgress.
	LiveProgress bool
	Measure      MeasureRequest
	// Kinds are the target kinds that recognise Targets (after k8s: and
	// ssh://); nil is Kinds(), the built-in ones.
	Kinds *runner.Registry
	// Kube holds the options of k8s: targets; nil is DefaultKubeRequest.
	// A Kube without any k8s: target is refused.
	Kube *KubeRequest
	SSH  SSHRequest
	// Sweep, when its Clients is set, runs the saturation sweep (sweep.go).
	Sweep SweepRequest
}

// DefaultSuite is the suite a request without Suite, SuiteSpec or FioJob
// runs.
const DefaultSuite = "standard"

// MeasureRequest asks for steady state, repeat-until-precise, cache
// defeating and preconditioning (docs/measurement.md). A nil option takes
// its default (DefaultStableMax and so on); one set without the option it
// belongs to (StableMax without UntilStable, Precision without RepeatAuto)
// is refused.
type MeasureRequest struct {
	UntilStable    bool
	StableMax      *time.Duration
	StableInterval *time.Duration
	RepeatAuto     bool
	// Precision is the 95% confidence interval of the mean IOPS to reach,
	// in ± percent.
	Precision    *float64
	RepeatMin    *int
	RepeatMax    *int
	DefeatCache  bool
	Precondition bool
}

// DefaultStableMax is the longest a workload runs without settling under
// UntilStable when StableMax is nil.
var DefaultStableMax = time.Duration(spec.DefaultSteadyState.MaxRuntime)

// The other measurement options' defaults.
const (
	DefaultStableInterval = time.Second
	DefaultPrecision      = 5.0 // ± percent
	DefaultRepeatMin      = 3
	DefaultRepeatMax      = 10
)

// or is *p, or def when p is nil.
func or[T any](p *T, def T) T {
	if p == nil {
		return def
	}
	return *p
}

// DefaultRunRequest is the run command's defaults: the standard suite, once,
// isolated, with telemetry, Kubernetes targets on all nodes.
func DefaultRunRequest() RunRequest {
	return RunRequest{
		Repeat:    1,
		Round:     result.RoundIsolated,
		Rounds:    []string{result.RoundIsolated},
		Telemetry: true,
	}
}

// refuse marks err as the request's fault: nothing ran and nothing was
// stored.
func refuse(err error) error { return &RequestError{Err: err} }

// kube is the request's Kubernetes options, their defaults when none was
// set.
func (r *RunRequest) kube() KubeRequest {
	if r.Kube == nil {
		return DefaultKubeRequest()
	}
	return *r.Kube
}

// Run builds the plan from req, judges a raw fio job on every local target
// before anything runs, connects to the cluster for k8s: targets, and runs
// the plan through the engine, storing each result in st as it is known.
// st is written first only once every target has been checked, so with a
// lazily opened store a refused run creates nothing. Notices of Kubernetes
// targets reach obs.Notice, from their own goroutines during cleanup; a
// notice about no one target (a node skipped) has an empty target. A nil
// obs hears nothing.
//
// The error is a *RequestError when nothing could run as asked; the
// engine's errors otherwise (engine.ErrInterrupted, engine.ErrWorkloadFailed
// and *fio.MissingError with the stored run).
func Run(ctx context.Context, st store.Store, req RunRequest, obs engine.Observer) (_ *result.Run, err error) {
	p, err := buildRunPlan(&req, false)
	if err != nil {
		return nil, err
	}
	if obs == nil {
		obs = unheardRun{}
	}
	if p.plan.RawJob != nil {
		// Refuse before anything runs or is stored, in fio's words where
		// fio refuses; the engine judges again on the prepared target.
		if _, err := judgeLocalTargets(ctx, &req, p.plan); err != nil {
			return nil, err
		}
	}
	if !p.hasKind(kube.Kind{}) && req.Kube != nil {
		return nil, refusef("%s options apply to Kubernetes targets: add %s k8s:STORAGECLASS", FieldKube, FieldTargets)
	}
	var mems []runner.Memory
	if len(p.groups) > 0 || p.noise != nil {
		opened, err := openGroups(ctx, &req, p, runner.GroupOptions{Options: req.kindOptions(), ReadMemory: p.defeatCache, Report: obs.Notice})
		if err != nil {
			return nil, err
		}
		if p.noise != nil {
			p.plan.Contention.NoiseTarget = opened.noise
		}
		mems = append(mems, opened.memory...)
		// The sessions end with the run, after every target's cleanup.
		defer func() {
			if cerr := opened.close(); cerr != nil && err == nil {
				err = cerr
			}
		}()
		p.plan.Targets = append(p.plan.Targets, opened.targets...)
	}
	note, err := p.sizeForCache(mems)
	if err != nil {
		return nil, err
	}
	if note != "" {
		obs.Notice("", note)
	}
	r, err := (&engine.Engine{Store: st, Observer: leftoverStopper{Observer: obs, ctx: ctx, st: st}}).Run(ctx, *p.plan)
	var refused *engine.RefusedError
	if errors.As(err, &refused) {
		// fio missing on a host is the host's fault, as locally.
		return r, judgeErr(err)
	}
	return r, err
}

// leftoverStopper stops what abandoned runs left working (stopLeftovers)
// once the run has started: after every refusal, so a refused run touches
// nothing, and before fio starts.
type leftoverStopper struct {
	engine.Observer
	ctx context.Context
	st  store.Store
}

func (l leftoverStopper) RunStarted(r *result.Run) {
	l.Observer.RunStarted(r)
	stopLeftovers(l.ctx, l.st, l.Observer)
}

// stopLeftovers kills what runs whose storbench was killed outright left
// working in their work directories (fio's orphaned jobs), before a new
// run measures beside them; their files stay for cleanup. Said, not fatal.
func stopLeftovers(ctx context.Context, st store.Store, obs engine.Observer) {
	rd := proc.Reader{}
	runs, err := orphan.Find(ctx, st, rd, "")
	if err == nil {
		err = orphan.Stop(rd, runs)
	}
	for _, r := range runs {
		if len(r.Stopped) > 0 {
			obs.Notice("", fmt.Sprintf("stopped %d processes abandoned run %s left working", len(r.Stopped), r.ID))
		}
	}
	if err != nil {
		obs.Notice("", "stopping what abandoned runs left: "+err.Error())
	}
}

// RunOutcome is a finished run as stored: its results in the order they
// were stored and, for a contention round, the probe alone against under
// load. It is the run command's JSON document.
type RunOutcome struct {
	Run     *result.Run     `json:"run"`
	Results []result.Result `json:"results"`
	// Contention pairs the probe alone and under load (--round contention).
	Contention []analysis.ContentionReport `json:"contention,omitempty"`
	// Sweeps are the run's sweeps with their knees (--clients).
	Sweeps []analysis.SweepView `json:"sweeps,omitempty"`
}

// LoadRunOutcome reads what st holds of run r.
func LoadRunOutcome(ctx context.Context, st store.Reader, r *result.Run) (*RunOutcome, error) {
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{r.ID}})
	if err != nil {
		return nil, err
	}
	if results == nil {
		results = []result.Result{}
	}
	results = analysis.WithMeasuredLinks(results, analysis.LinkMatrices(results))
	return &RunOutcome{Run: r, Results: results, Contention: contention.Reports(results), Sweeps: analysis.Sweeps(results)}, nil
}

// DryRun judges req's fio job on every local target, every other kind's
// target and every grouped kind's (an SSH host: judgeGroupTargets),
// running and storing nothing: what fio would run there, as fio reads it,
// the files and devices it touches and the safety verdict.
// On an error, the targets checked before it are returned with it.
func DryRun(ctx context.Context, req RunRequest) ([]analysis.DryRun, error) {
	p, err := buildRunPlan(&req, true)
	if err != nil {
		return nil, err
	}
	judged, err := judgeLocalTargets(ctx, &req, p.plan)
	if err == nil {
		var others []JudgedTarget
		others, err = judgeKindTargets(ctx, &req, p.plan)
		judged = append(judged, others...)
	}
	if err == nil {
		var grouped []JudgedTarget
		grouped, err = judgeGroupTargets(ctx, &req, p)
		judged = append(judged, grouped...)
	}
	out := make([]analysis.DryRun, 0, len(judged))
	for _, j := range judged {
		out = append(out, j.view())
	}
	return out, err
}

// unheardRun is the observer of a caller that does not listen.
type unheardRun struct{}

func (unheardRun) RunStarted(*result.Run)                        {}
func (unheardRun) Notice(string, string)                         {}
func (unheardRun) WorkloadStarted(engine.Step)                   {}
func (unheardRun) WorkloadProgress(engine.Step, result.Progress) {}
func (unheardRun) WorkloadFinished(engine.Step, *result.Result)  {}

func wrap(req *RunRequest, t runner.Target) runner.Target {
	if req.Wrap == nil {
		return t
	}
	return req.Wrap(t)
}

// judgeErr is a raw job's judgement failing: fio missing is the host's
// fault, everything else the request's.
func judgeErr(err error) error {
	var missing *fio.MissingError
	if errors.As(err, &missing) {
		return err
	}
	return refuse(err)
}
