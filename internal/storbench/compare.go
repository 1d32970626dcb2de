package storbench

import (
	"context"
	"errors"
	"fmt"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// CompareRequest names the runs to compare and how.
type CompareRequest struct {
	// RunIDs are run IDs or unique prefixes; a run named twice counts once.
	RunIDs []string
	// GroupBy, Baseline and Round shape the comparison (analysis.Options).
	GroupBy  string
	Baseline string
	Round    string
}

// Comparison is what compare, report and qualify work on: the runs named,
// their results compared and completed for display and, for a report, the
// verdicts on them.
type Comparison struct {
	Runs     []result.Run
	View     *analysis.View
	Verdicts []*analysis.Verdict
}

// Compare reads the named runs' figures and compares them. A run that is
// not stored (or an ambiguous prefix) and an impossible option (a baseline
// no target matches) are RequestErrors; runs holding no completed result
// give an error wrapping analysis.ErrNoResults.
func Compare(ctx context.Context, st store.Reader, req CompareRequest) (*Comparison, error) {
	if len(req.RunIDs) == 0 {
		return nil, badRequest("name at least one run ID (see: storbench runs)")
	}
	out := &Comparison{}
	var runIDs []string
	seen := map[string]bool{}
	for _, id := range req.RunIDs {
		run, err := st.Run(ctx, id)
		if err != nil {
			return nil, notFound(err)
		}
		if seen[run.ID] {
			continue
		}
		seen[run.ID] = true
		out.Runs = append(out.Runs, *run)
		runIDs = append(runIDs, run.ID)
	}
	figs, err := st.Figures(ctx, store.ResultFilter{RunIDs: runIDs})
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	c, err := analysis.Compare(figs, analysis.Options{GroupBy: req.GroupBy, Baseline: req.Baseline, Round: req.Round})
	if errors.Is(err, analysis.ErrNoResults) {
		return nil, fmt.Errorf("run(s) %v: %w", runIDs, err)
	}
	if err != nil {
		return nil, &RequestError{err}
	}
	out.View = analysis.NewView(c)
	out.View.Sweeps = analysis.SweepsOf(figs)
	if err := explain(ctx, st, runIDs, figs, out.View); err != nil {
		return nil, err
	}
	analysis.BoundBy(out.View.Sweeps, out.View.Breakdowns)
	return out, nil
}

// notFound makes a store's not-found (or ambiguous prefix) a RequestError.
func notFound(err error) error {
	var amb *store.AmbiguousError
	if errors.Is(err, store.ErrNotFound) || errors.As(err, &amb) {
		return &RequestError{err}
	}
	return err
}
