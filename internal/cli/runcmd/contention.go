package runcmd

import (
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
)

// DefaultProbe is the contention round's probe when --probe is not given:
// etcd's own disk check, the workload most hurt by a bulk copy.
const DefaultProbe = "etcd-fdatasync"

// applyRound turns on telemetry and, for --round contention, replaces the
// suite by the probe and its bulk writer.
func applyRound(plan *engine.Plan, f *flags, suiteSet bool) error {
	plan.Telemetry = f.telemetry
	switch f.round {
	case result.RoundIsolated:
		if f.probe != "" || f.noiseTarget != "" {
			return cli.Usagef("--probe and --noise-target belong to the contention round: add --round contention")
		}
		return nil
	case result.RoundContention:
	default:
		return cli.Usagef("--round %q: choose isolated (the suite, one target at a time) or contention (a latency probe alone, then beside a bulk writer)", f.round)
	}
	if plan.RawJob != nil {
		return cli.Usagef("--round contention runs a probe workload: choose it with --probe instead of --fio-job")
	}
	if len(f.workloads) > 0 && !suiteSet {
		return cli.Usagef("--round contention measures one workload: choose it with --probe instead of --workloads")
	}
	probe, err := resolveProbe(plan.Suite, f.probe, suiteSet)
	if err != nil {
		return err
	}
	c := &engine.Contention{Probe: probe}
	if f.noiseTarget != "" {
		for _, t := range f.targets {
			if t == f.noiseTarget {
				return cli.Usagef("--noise-target %s is also a --target: leave it out to put the bulk writer on the probe's own target", t)
			}
		}
		c.NoiseTarget = targetFor(f.noiseTarget, f)
	}
	plan.Suite, plan.Contention, plan.Round = nil, c, result.RoundContention
	return nil
}

// resolveProbe finds the probe: a workload of --suite when one was given,
// else any built-in workload by name, or a built-in suite of one workload.
func resolveProbe(suite *spec.Suite, name string, suiteSet bool) (spec.Workload, error) {
	if suiteSet {
		if name == "" {
			if len(suite.Workloads) == 1 {
				return suite.Workloads[0], nil
			}
			return spec.Workload{}, cli.Usagef("suite %s has %d workloads: choose the probe with --probe (%s)", suite.Name, len(suite.Workloads), strings.Join(workloadNames(suite), ", "))
		}
		if w, ok := suite.Workload(name); ok {
			return w, nil
		}
		return spec.Workload{}, cli.Usagef("--probe %s: suite %s has no such workload (it has %s)", name, suite.Name, strings.Join(workloadNames(suite), ", "))
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
	return spec.Workload{}, cli.Usagef("--probe %s: no built-in workload has that name (built-in: %s; or pass --suite FILE with your own)", name, strings.Join(all, ", "))
}

func workloadNames(s *spec.Suite) []string {
	var n []string
	for _, w := range s.Workloads {
		n = append(n, w.Name)
	}
	return n
}
