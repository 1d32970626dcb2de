package storbench

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// ShowRequest names one stored run.
type ShowRequest struct {
	// RunID is a run ID or a unique prefix.
	RunID string
}

// RunDetail is one run with its results.
type RunDetail struct {
	// Run's status is worked out now: a run stored as running whose
	// storbench process is gone is abandoned.
	Run     *result.Run     `json:"run"`
	Results []result.Result `json:"results"`
	// Contention pairs each probe alone and under load.
	Contention []analysis.ContentionReport `json:"contention,omitempty"`
	// Links lays out the network round node by node; Breakdowns explain
	// each network-backed or replicated result.
	Links      []analysis.LinkMatrix `json:"links,omitempty"`
	Breakdowns []analysis.Breakdown  `json:"breakdowns,omitempty"`
	// Sweeps are the run's sweeps with their knees (run --clients).
	Sweeps []analysis.SweepView `json:"sweeps,omitempty"`
	// Apps is the run's app fitness (round app), judged for SQLite apps.
	Apps *analysis.AppReport `json:"apps,omitempty"`
	// OSDs name the Ceph OSDs that held an RBD target's pool back.
	OSDs []analysis.ResultOSDVerdict `json:"osds,omitempty"`
	// Bricks name the GlusterFS bricks that held a FUSE-mounted target back.
	Bricks []analysis.BrickVerdict `json:"bricks,omitempty"`
}

// Show reads a run and its results. A run that is not stored (or an
// ambiguous prefix) is a RequestError.
func Show(ctx context.Context, st store.Reader, req ShowRequest) (*RunDetail, error) {
	run, err := st.Run(ctx, req.RunID)
	if err != nil {
		return nil, notFound(err)
	}
	proc.Reader{}.Abandon(run)
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		return nil, fmt.Errorf("reading the results of run %s: %w", run.ID, err)
	}
	if results == nil {
		results = []result.Result{}
	}
	links := analysis.LinkMatrices(results)
	results = analysis.WithMeasuredLinks(results, links)
	d := &RunDetail{Run: run, Results: results, Contention: contention.Reports(results), Links: links,
		Breakdowns: append(analysis.Breakdowns(results, links), analysis.ServerBreakdowns(results, links)...),
		Sweeps:     analysis.Sweeps(results), Apps: analysis.AppReportOf(results), OSDs: analysis.OSDVerdicts(results), Bricks: analysis.BrickVerdicts(results)}
	analysis.BoundBy(d.Sweeps, d.Breakdowns)
	return d, nil
}
