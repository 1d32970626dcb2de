package engine

import (
	"context"
	"fmt"
	"maps"

	"github.com/storbench/storbench/internal/netround"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// networkRound measures the links between the nodes of the run's targets
// (internal/netround): every ordered pair of distinct nodes whose runner
// offers a network endpoint, on each network offered; the run's other
// nodes (replicas, servers) against fio's, and among themselves with
// plan.NetworkAllPairs; each measurement stored as a result of round
// "network" whose target names the pair. Targets without an endpoint are
// said and left out; fewer than two nodes is a notice, not a failure.
func (e *Engine) networkRound(ctx context.Context, run *result.Run, plan Plan, targets []*readyTarget) (failures []error) {
	var eps []runner.NetEndpoint
	for _, pt := range targets {
		if pt.prepared.Net == nil {
			e.Observer.Notice(pt.prepared.Name, "no network endpoint for the network round ("+pt.prepared.Kind+" target)")
			continue
		}
		eps = append(eps, *pt.prepared.Net)
	}
	for _, pt := range targets {
		if pt.prepared.NetPeers == nil {
			continue
		}
		more, notices := pt.prepared.NetPeers(ctx)
		eps = append(eps, more...)
		for _, n := range notices {
			e.Observer.Notice(pt.prepared.Name, n)
		}
	}
	pairs := netround.Pairs(eps, plan.NetworkAllPairs)
	if len(pairs) == 0 {
		e.Observer.Notice(result.RoundNetwork, "fewer than two nodes with a network endpoint: nothing to measure")
		return nil
	}
	// Every result carries the versions and the user's labels, as a
	// target's do; the pair's own labels come from netround.
	base := map[string]string{}
	maps.Copy(base, plan.Labels)
	for _, k := range []result.LabelKey{result.LabelFioVersion, result.LabelStorbenchVersion} {
		if v := k.Of(targets[0].labels); v != "" {
			k.Set(base, v)
		}
	}
	n := len(pairs) * len(netround.Workloads)
	for rep := 1; rep <= plan.Repeat; rep++ {
		for i, p := range pairs {
			for j, r := range netround.Measure(ctx, p, plan.Network) {
				r.RunID, r.Repetition = run.ID, rep
				l := maps.Clone(base)
				maps.Copy(l, r.Labels)
				r.Labels = l
				if err := e.Store.AddResult(ctx, &r); err != nil {
					return append(failures, err)
				}
				e.Observer.WorkloadFinished(Step{RunID: run.ID, Target: r.Target, Workload: r.Workload,
					Index: i*len(netround.Workloads) + j + 1, Count: n, Repetition: rep, Repetitions: plan.Repeat}, &r)
				if r.Status == result.StatusFailed {
					failures = append(failures, fmt.Errorf("network %s %s: %s", r.Target, r.Workload, r.Error))
				}
			}
			if ctx.Err() != nil || (plan.FailFast && len(failures) > 0) {
				return failures
			}
		}
	}
	return failures
}
