package storbench

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// KindCleanupRequest says where to find what killed runs left on targets
// of registered kinds (a pool's images, a volume's directories).
type KindCleanupRequest struct {
	// Targets name where to look, as a run names its targets.
	Targets []string
	// Kinds recognise Targets; nil is Kinds().
	Kinds *runner.Registry
	// Getenv is the environment kinds read (CEPH_CONF...); nil is none.
	Getenv func(string) string
	// RunID cleans up only what this run left.
	RunID string
	// DryRun finds what would be removed and removes nothing.
	DryRun bool
}

// CleanupKinds finds, on every target, what runs left there through its
// kind (runner.KindLeftovers), and removes it unless DryRun. A target
// whose kind keeps no leftovers, or that cannot be reached, is named in
// the report with why; so is a leftover that could not be removed, and
// the error then counts the failures. Removing finishes even when ctx is
// cancelled. A target no kind recognises is a *RequestError.
func CleanupKinds(ctx context.Context, req KindCleanupRequest) (*result.KindCleanup, error) {
	reg := req.Kinds
	if reg == nil {
		reg = Kinds()
	}
	type found struct {
		kind runner.KindLeftovers
		spec runner.Spec
	}
	var where []found
	rep := &result.KindCleanup{DryRun: req.DryRun, Targets: []result.KindCleanupTarget{}}
	for _, t := range req.Targets {
		k, spec, ok, err := reg.Parse(t)
		switch {
		case !ok:
			return nil, refusef("%s: %s: no kind of target recognises it", FieldTargets, t)
		case err != nil:
			return nil, refuse(err)
		}
		l, _ := k.(runner.KindLeftovers)
		where = append(where, found{l, spec})
	}
	ctx = context.WithoutCancel(ctx)
	failed := 0
	for _, w := range where {
		ct := result.KindCleanupTarget{Target: w.spec.String(), Leftovers: []result.Leftover{}}
		if w.kind == nil {
			ct.Error = "this kind of target keeps nothing after a run"
			rep.Targets = append(rep.Targets, ct)
			continue
		}
		lefts, err := w.kind.FindLeftovers(ctx, w.spec, req.RunID)
		if err != nil {
			ct.Error = err.Error()
			failed++
		}
		for _, l := range lefts {
			if !req.DryRun {
				if err := w.kind.RemoveLeftover(ctx, l); err != nil {
					l.Error = err.Error()
					failed++
				} else {
					l.Removed = true
				}
			}
			ct.Leftovers = append(ct.Leftovers, l)
		}
		rep.Targets = append(rep.Targets, ct)
	}
	if failed > 0 {
		return rep, fmt.Errorf("cleanup: %d target(s) or leftover(s) failed", failed)
	}
	return rep, nil
}
