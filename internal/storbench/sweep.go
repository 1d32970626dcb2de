package storbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

// SweepRequest asks for the saturation sweep (docs/sweep.md): one workload
// on N clients at once, for several N, on every target.
type SweepRequest struct {
	// Clients is the steps, "1,2,4,8", or "auto": doubling from one until
	// the knee is known or MaxClients is reached. Empty runs no sweep.
	Clients string
	// MaxClients caps an automatic sweep; 0 is engine.DefaultMaxClients.
	MaxClients int
	// MaxSize caps each client's file ("1GiB"); empty keeps the workload's
	// size. The target's free space, shared by the most clients, may cap
	// it further.
	MaxSize string
}

// DefaultSweepWorkload is the workload a sweep runs when the request
// chooses none: one outstanding I/O per client, so the clients, not a
// queue inside each, load the storage.
const DefaultSweepWorkload = "rand-read-4k-qd1"

// applySweep replaces the suite by the sweep of its one workload.
func applySweep(p *runPlan, req *RunRequest, suiteSet bool) error {
	s := req.Sweep
	if s.Clients == "" {
		if s.MaxSize != "" || s.MaxClients != 0 {
			return refusef("%s belongs to the sweep: add %s 1,2,4,8 or %s auto", FieldSweepMaxSize, FieldSweepClients, FieldSweepClients)
		}
		return nil
	}
	plan := p.plan
	switch {
	case req.Round != result.RoundIsolated || !sweepRounds(req.Rounds):
		return refusef("%s is an experiment of its own: run it without %s, and with %s only network (the links first, on Kubernetes)", FieldSweepClients, FieldRound, FieldRounds)
	case plan.Suite == nil:
		return refusef("%s sweeps a suite workload: choose it with %s instead of %s", FieldSweepClients, FieldWorkloads, FieldFioJob)
	case req.Repeat > 1 || req.Measure != (MeasureRequest{}):
		return refusef("%s runs each step once: leave out %s and the measurement options", FieldSweepClients, FieldRepeat)
	}
	if !suiteSet && len(req.Workloads) == 0 {
		if err := plan.Suite.Select([]string{DefaultSweepWorkload}); err != nil {
			return refuse(err)
		}
	}
	if len(plan.Suite.Workloads) != 1 {
		return refusef("%s sweeps one workload; the suite has %d: choose one with %s", FieldSweepClients, len(plan.Suite.Workloads), FieldWorkloads)
	}
	sw := &engine.Sweep{Workload: plan.Suite.Workloads[0], MaxClients: s.MaxClients}
	if s.Clients != "auto" {
		for _, f := range strings.Split(s.Clients, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil {
				return refusef("%s %s: give client counts (1,2,4,8) or auto", FieldSweepClients, s.Clients)
			}
			sw.Clients = append(sw.Clients, n)
		}
	}
	if s.MaxSize != "" {
		n, err := units.ParseSize(s.MaxSize)
		if err != nil || n <= 0 {
			return refusef("%s %s: give a size such as 1GiB", FieldSweepMaxSize, s.MaxSize)
		}
		sw.ClientSize = n
	}
	if err := sw.Validate(); err != nil {
		return refusef("%s: %w", FieldSweepClients, err)
	}
	plan.Suite, plan.Sweep, plan.Round = nil, sw, engine.RoundSweep
	return nil
}

// sweepRounds are the rounds a sweep takes: its own, after the network
// round where asked (the links of the nodes its pods run on, which the
// knee's limit is read against).
func sweepRounds(rounds []string) bool {
	for _, ok := range [][]string{{result.RoundIsolated}, {result.RoundNetwork}, {result.RoundNetwork, result.RoundIsolated}} {
		if slices.Equal(rounds, ok) {
			return true
		}
	}
	return false
}

// Sweeps reads the sweeps of the given runs (all when none are named),
// each with its steps and knee.
func Sweeps(ctx context.Context, st store.Reader, runIDs []string) ([]analysis.SweepView, error) {
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: runIDs})
	if err != nil {
		return nil, fmt.Errorf("reading the sweeps' results: %w", err)
	}
	return analysis.Sweeps(rs), nil
}
