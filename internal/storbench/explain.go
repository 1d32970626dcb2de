package storbench

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// explain adds the network round's matrices and the breakdowns of
// network-backed or replicated results to a view. They need whole results
// (latency distributions), so these are read only when some figure is of
// the network round or names replicas.
func explain(ctx context.Context, st store.Reader, runIDs []string, figs []result.Figures, v *analysis.View) error {
	needed := false
	for _, f := range figs {
		if f.Round == result.RoundNetwork || result.LabelReplicaNodes.Of(f.Labels) != "" || result.LabelReplicas.Of(f.Labels) != "" ||
			result.ClassParameter("numberOfReplicas").Of(f.Labels) != "" || result.LabelVolumeServer.Of(f.Labels) != "" {
			needed = true
			break
		}
	}
	if !needed {
		return nil
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: runIDs})
	if err != nil {
		return fmt.Errorf("reading results: %w", err)
	}
	v.Links = analysis.LinkMatrices(results)
	v.Breakdowns = append(analysis.Breakdowns(results, v.Links), analysis.ServerBreakdowns(results, v.Links)...)
	return nil
}
