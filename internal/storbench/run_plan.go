package storbench

import (
	"cmp"
	"fmt"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/units"
)

// DefaultProbe is the contention round's probe when none is named: etcd's
// own disk check, the workload most hurt by a bulk copy.
const DefaultProbe = "etcd-fdatasync"

// runPlan is a request turned into the engine's plan, with the targets of
// grouped kinds (Kubernetes classes, SSH hosts) still to be opened.
type runPlan struct {
	plan *engine.Plan
	// groups are the targets of grouped kinds (runner.KindGroup: SSH
	// hosts), to be opened together, each kind's at once.
	groups []*kindGroup
	// noise is the contention round's --noise-target of a grouped kind, to
	// be opened with its kind's group; the engine's
	// Contention.NoiseTarget once it is.
	noise *groupedSpec
	// defeatCache sizes the suite beyond the memory that can cache it
	// once the Kubernetes nodes are known (their memory, not this host's);
	// localCache is this host's part when local targets run too.
	defeatCache bool
	localCache  int64
}

// refusef refuses the request; Field arguments name request fields.
func refusef(format string, args ...any) error { return refuse(fieldErrorf(format, args...)) }

// buildRunPlan checks req and turns it into a plan of its local targets,
// in the order the run command always checked its flags.
func buildRunPlan(req *RunRequest, dryRun bool) (*runPlan, error) {
	if len(req.Targets) == 0 && req.SSH.Inventory == "" {
		return nil, refusef("no target: give %s DIR or %s /dev/DEVICE", FieldTargets, FieldTargets)
	}
	if req.Repeat < 1 {
		return nil, refusef("%s %d: must be at least 1", FieldRepeat, req.Repeat)
	}
	plan := &engine.Plan{Repeat: req.Repeat, Labels: req.Labels, FailFast: req.FailFast, Round: result.RoundIsolated,
		Policy: safety.Policy{Destructive: req.Destructive}, LiveProgress: req.LiveProgress}
	if dryRun && req.FioJob == "" {
		return nil, refusef("%s applies to %s", FieldDryRun, FieldFioJob)
	}
	suiteSet := req.Suite != "" || req.SuiteSpec != nil
	switch {
	case req.FioJob != "" && suiteSet:
		return nil, refusef("%s and %s are alternatives: give one", FieldSuite, FieldFioJob)
	case req.FioJob != "":
		if len(req.Workloads) > 0 {
			return nil, refusef("%s selects suite workloads; it does not apply to %s", FieldWorkloads, FieldFioJob)
		}
		var opts fio.ReadOptions
		if req.Getenv != nil {
			opts.Getenv = func(k string) (string, bool) { v := req.Getenv(k); return v, v != "" }
		}
		jf, err := fio.ReadJobFile(req.FioJob, opts)
		if err != nil {
			return nil, refuse(err)
		}
		plan.RawJob = &engine.RawJob{Path: req.FioJob, File: jf}
	case req.SuiteSpec != nil:
		s := *req.SuiteSpec
		s.Workloads = slices.Clone(s.Workloads)
		plan.Suite = &s
	default:
		s, err := spec.Resolve(cmp.Or(req.Suite, DefaultSuite))
		if err != nil {
			return nil, refuse(err)
		}
		plan.Suite = s
	}
	if plan.Suite != nil {
		if err := plan.Suite.Select(req.Workloads); err != nil {
			return nil, refuse(err)
		}
	}
	p := &runPlan{plan: plan}
	seen := map[string]bool{}
	for _, t := range req.Targets {
		if seen[t] {
			return nil, refusef("%s: %s is given twice", FieldTargets, t)
		}
		seen[t] = true
		if k, spec, _, err := req.kinds().Parse(t); err == nil {
			if g, ok := k.(runner.KindGroup); ok {
				p.addToGroup(g, spec, true)
				continue
			}
		}
		target, _, err := kindTarget(req, t)
		if err != nil {
			return nil, err
		}
		plan.Targets = append(plan.Targets, wrap(req, target))
	}
	hosts, locals, err := inventoryHosts(req, seen)
	if err != nil {
		return nil, err
	}
	for _, path := range locals {
		plan.Targets = append(plan.Targets, wrap(req, localTarget(req, path)))
	}
	for _, h := range hosts {
		p.addToGroup(req.sshKind(), h, false)
	}
	if err := applyMeasurement(p, req); err != nil {
		return nil, err
	}
	if err := applyRound(p, req, suiteSet); err != nil {
		return nil, err
	}
	if err := applySweep(p, req, suiteSet); err != nil { // sweep.go
		return nil, err
	}
	sshGroup, sshNoise := p.group(req.sshKind().Name()), p.noise != nil && p.noise.kind.Name() == req.sshKind().Name()
	if req.SSH.AcceptNewHostKeys && sshGroup == nil && !sshNoise {
		return nil, refusef("%s applies to ssh:// targets and %s hosts", FieldSSHAcceptNew, FieldSSHInventory)
	}
	if req.SSH.Become && (sshGroup == nil || sshGroup.named == 0) && !sshNoise {
		return nil, refusef("%s applies to ssh:// targets (inventory hosts use ansible_become)", FieldSSHBecome)
	}
	if err := applyRounds(plan, req.Rounds); err != nil {
		return nil, err
	}
	plan.NetworkAllPairs = req.NetworkAllPairs
	return p, nil
}

func localTarget(req *RunRequest, path string) runner.Target {
	return local.NewTarget(path, local.Options{Destructive: req.Destructive})
}

// applyMeasurement puts the measurement checks into the plan.
func applyMeasurement(p *runPlan, req *RunRequest) error {
	plan, m := p.plan, req.Measure
	// Repeating until precise and preconditioning are per target, one at a
	// time; the checks (cache, CPU, steady state) and --defeat-cache apply
	// in every round. The contention round's probe is a sync write that no
	// cache answers, so --defeat-cache has nothing to do there.
	if m.RepeatAuto || m.Precondition {
		if req.Round == result.RoundContention || slices.Contains(req.Rounds, result.RoundParallel) {
			return refusef("%s and %s apply to the isolated round: run the contention or parallel round separately", FieldRepeatAuto, FieldPrecondition)
		}
	}
	if m.DefeatCache && req.Round == result.RoundContention {
		return refusef("%s applies to suite workloads; the contention round's probe is a sync write no cache answers", FieldDefeatCache)
	}
	if m.RepeatAuto {
		precision, lo, hi := or(m.Precision, DefaultPrecision), or(m.RepeatMin, DefaultRepeatMin), or(m.RepeatMax, DefaultRepeatMax)
		if precision <= 0 || precision >= 100 {
			return refusef("%s %g: give a percentage between 0 and 100", FieldPrecision, precision)
		}
		if lo < 2 || hi < lo {
			return refusef("%s %d, %s %d: a confidence interval needs at least 2 runs, and the most must not be below the fewest", FieldRepeatMin, lo, FieldRepeatMax, hi)
		}
		plan.Measurement.RepeatAuto = &engine.RepeatAuto{Precision: precision / 100, Min: lo, Max: hi}
	} else {
		for _, o := range []struct {
			field Field
			set   bool
		}{{FieldPrecision, m.Precision != nil}, {FieldRepeatMin, m.RepeatMin != nil}, {FieldRepeatMax, m.RepeatMax != nil}} {
			if o.set {
				return refusef("%s belongs to %s", o.field, FieldRepeatAuto)
			}
		}
	}
	if !m.UntilStable && (m.StableMax != nil || m.StableInterval != nil) {
		return refusef("%s and %s belong to %s", FieldStableMax, FieldStableInterval, FieldUntilStable)
	}
	if plan.Suite == nil && (m.UntilStable || m.DefeatCache) {
		return refusef("%s and %s shape suite workloads; a %s runs as written", FieldUntilStable, FieldDefeatCache, FieldFioJob)
	}
	if m.UntilStable {
		most, every := or(m.StableMax, DefaultStableMax), or(m.StableInterval, DefaultStableInterval)
		if every <= 0 {
			return refusef("%s %s: must be positive", FieldStableInterval, every)
		}
		ss := spec.SteadyState{MaxRuntime: spec.Duration(most), Interval: spec.Duration(every)}.WithDefaults()
		if time.Duration(ss.Window)%every != 0 {
			return refusef("%s %s: the %s window must be a whole number of intervals", FieldStableInterval, every, ss.Window)
		}
		if most < time.Duration(ss.Window+ss.Ramp) {
			return refusef("%s %s: leaves no time for the %s ramp and %s window", FieldStableMax, most, ss.Ramp, ss.Window)
		}
		plan.Suite.UntilStable(ss)
	}
	if m.DefeatCache {
		plan.Measurement.DropCaches = true
		_, labelled := result.LabelMemBytes.In(plan.Labels)
		if len(p.groups) > 0 && !labelled {
			// The nodes' and hosts' memory decides, once they are chosen
			// and reached (sizeForCache); this host's counts only if it
			// runs targets too.
			p.defeatCache = true
			if len(plan.Targets) > 0 {
				bytes, err := cacheBytes(plan.Labels)
				if err != nil {
					return err
				}
				p.localCache = bytes
			}
			return applyPrecondition(plan, req)
		}
		bytes, err := cacheBytes(plan.Labels)
		if err != nil {
			return err
		}
		plan.Suite.DefeatCache(defeatSpan(bytes))
	}
	return applyPrecondition(plan, req)
}

// defeatSpan is a quarter beyond the memory, in whole MiB: a span the
// cache can no longer hold whole.
func defeatSpan(cache int64) int64 { return (cache + cache/4 + 1<<20 - 1) &^ (1<<20 - 1) }

// sizeForCache sizes the suite for --defeat-cache once the Kubernetes
// nodes are chosen and the SSH hosts reached: beyond the largest memory
// that can cache a target (a node's, a host's, or this host's when local
// targets run too). Each PVC grows to fit (kube.FitSize) unless --size
// fixed it, which the target then refuses with the size it needs.
func (p *runPlan) sizeForCache(mems []runner.Memory) (string, error) {
	if !p.defeatCache {
		return "", nil
	}
	if p.localCache > 0 {
		mems = append(mems, runner.Memory{Whose: "this host's memory", Bytes: p.localCache})
	}
	var big runner.Memory
	for _, m := range mems {
		if m.Err != nil {
			return "", refusef("%s: %v: give %s %s=BYTES", FieldDefeatCache, m.Err, FieldLabels, result.LabelMemBytes)
		}
		if m.Bytes > big.Bytes {
			big = m
		}
	}
	if big.Bytes == 0 {
		return "", nil
	}
	span := defeatSpan(big.Bytes)
	resized := p.plan.Suite.DefeatCache(span)
	if len(resized) == 0 {
		return "", nil
	}
	return fmt.Sprintf("--defeat-cache: %s sized to %s, beyond %s (%s)", strings.Join(resized, ", "), units.Bytes(span), big.Whose, units.Bytes(big.Bytes)), nil
}

func applyPrecondition(plan *engine.Plan, req *RunRequest) error {
	m := req.Measure
	if m.Precondition {
		if len(req.Destructive) == 0 {
			return refusef("%s writes whole devices: it needs %s naming them", FieldPrecondition, FieldDestructive)
		}
		plan.Measurement.Precondition = true
	}
	return nil
}

// cacheBytes is the memory that can cache the targets: the label mem_bytes,
// else this host's RAM.
func cacheBytes(labels map[string]string) (int64, error) {
	if v := result.LabelMemBytes.Of(labels); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, refusef("%s %s=%s: give the memory in bytes", FieldLabels, result.LabelMemBytes, v)
		}
		return n, nil
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fieldErrorf("%s: reading this host's memory size: %w", FieldDefeatCache, err)
	}
	if n := engine.MemTotal(data); n > 0 {
		return n, nil
	}
	return 0, fieldErrorf("%s: /proc/meminfo has no MemTotal", FieldDefeatCache)
}

// applyRound turns on telemetry and, for the contention round, replaces
// the suite by the probe and its bulk writer.
func applyRound(p *runPlan, req *RunRequest, suiteSet bool) error {
	plan := p.plan
	plan.Telemetry = req.Telemetry
	switch req.Round {
	case result.RoundIsolated:
		if req.Probe != "" || req.NoiseTarget != "" || req.NoiseSize != "" {
			return refusef("%s, %s and %s belong to the contention round: set %s contention", FieldProbe, FieldNoiseTarget, FieldNoiseSize, FieldRound)
		}
		return nil
	case result.RoundContention:
	default:
		return refusef("%s %q: choose isolated (the suite, one target at a time) or contention (a latency probe alone, then beside a bulk writer)", FieldRound, req.Round)
	}
	if plan.RawJob != nil {
		return refusef("%s contention runs a probe workload: choose it with %s instead of %s", FieldRound, FieldProbe, FieldFioJob)
	}
	if len(req.Workloads) > 0 && !suiteSet {
		return refusef("%s contention measures one workload: choose it with %s instead of %s", FieldRound, FieldProbe, FieldWorkloads)
	}
	probe, err := resolveProbe(plan.Suite, req.Probe, suiteSet)
	if err != nil {
		return err
	}
	c := &engine.Contention{Probe: probe}
	if req.NoiseSize != "" {
		n, err := units.ParseSize(req.NoiseSize)
		if err != nil || n < MinNoiseSize || n > MaxNoiseSize {
			return refusef("%s %q: give a size from 1MiB to 1TiB, such as 256MiB", FieldNoiseSize, req.NoiseSize)
		}
		c.NoiseSize = n
	}
	if req.NoiseTarget != "" {
		if slices.Contains(req.Targets, req.NoiseTarget) {
			return refusef("%s %s is also in %s: leave it out to put the bulk writer on the probe's own target", FieldNoiseTarget, req.NoiseTarget, FieldTargets)
		}
		k, spec, _, err := req.kinds().Parse(req.NoiseTarget)
		if g, ok := k.(runner.KindGroup); ok {
			// Opened with its kind's group (Run): on a host, a connection
			// of its own or the probe host's.
			if err != nil {
				return refusef("%s: %w", FieldNoiseTarget, err)
			}
			p.noise = &groupedSpec{kind: g, spec: spec}
		} else {
			t, _, err := kindTarget(req, req.NoiseTarget)
			if err != nil {
				return err
			}
			c.NoiseTarget = t
		}
	}
	plan.Suite, plan.Contention, plan.Round = nil, c, result.RoundContention
	return nil
}

// The bulk writer's file, when the request sizes it: at least one of its
// 1 MiB writes, at most what any disk storbench meets holds.
const (
	MinNoiseSize = 1 << 20
	MaxNoiseSize = 1 << 40
)

// resolveProbe finds the probe: a workload of the suite the caller chose,
// else any built-in workload by name, or a built-in suite of one workload.
func resolveProbe(suite *spec.Suite, name string, suiteSet bool) (spec.Workload, error) {
	if suiteSet {
		if name == "" {
			if len(suite.Workloads) == 1 {
				return suite.Workloads[0], nil
			}
			return spec.Workload{}, refusef("suite %s has %d workloads: choose the probe with %s (%s)", suite.Name, len(suite.Workloads), FieldProbe, strings.Join(suiteWorkloadNames(suite), ", "))
		}
		if w, ok := suite.Workload(name); ok {
			return w, nil
		}
		return spec.Workload{}, refusef("%s %s: suite %s has no such workload (it has %s)", FieldProbe, name, suite.Name, strings.Join(suiteWorkloadNames(suite), ", "))
	}
	if name == "" {
		name = DefaultProbe
	}
	if s, err := spec.Builtin(name); err == nil && len(s.Workloads) == 1 {
		return s.Workloads[0], nil
	}
	seen := map[string]bool{}
	for _, sn := range spec.BuiltinNames {
		s, err := spec.Builtin(sn)
		if err != nil {
			return spec.Workload{}, err
		}
		if w, ok := s.Workload(name); ok {
			return w, nil
		}
		for _, w := range s.Workloads {
			seen[w.Name] = true
		}
	}
	var all []string
	for n := range seen {
		all = append(all, n)
	}
	sort.Strings(all)
	return spec.Workload{}, refusef("%s %s: no built-in workload has that name (built-in: %s; or give %s a suite file with your own)", FieldProbe, name, strings.Join(all, ", "), FieldSuite)
}

func suiteWorkloadNames(s *spec.Suite) []string {
	var n []string
	for _, w := range s.Workloads {
		n = append(n, w.Name)
	}
	return n
}

// applyRounds checks the network, isolated and parallel rounds into the plan.
func applyRounds(plan *engine.Plan, rounds []string) error {
	seen := map[string]bool{}
	for _, r := range rounds {
		switch r {
		case result.RoundIsolated, result.RoundParallel, result.RoundNetwork:
		default:
			return refusef("%s %q: choose from network, isolated and parallel, in the order to run them (network,isolated,parallel)", FieldRounds, r)
		}
		if seen[r] {
			return refusef("%s names %s twice", FieldRounds, r)
		}
		seen[r] = true
	}
	if !seen[result.RoundParallel] && !seen[result.RoundNetwork] {
		return nil
	}
	if plan.Contention != nil {
		return refusef("%s %s and %s contention are separate experiments: run them one at a time", FieldRounds, strings.Join(rounds, ","), FieldRound)
	}
	plan.Rounds = rounds
	return nil
}
