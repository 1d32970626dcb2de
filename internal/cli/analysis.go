package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// Compared is what compare, report and qualify work on: the runs named on
// the command line and the comparison of their results.
type Compared struct {
	Runs       []result.Run
	Comparison *analysis.Comparison
}

// LoadComparison resolves run IDs (or unique prefixes), reads their
// results' figures and compares them. Unknown runs and impossible options
// (a baseline no target matches) are usage errors.
func LoadComparison(ctx context.Context, st store.Reader, ids []string, opts analysis.Options) (*Compared, error) {
	if len(ids) == 0 {
		return nil, Usagef("name at least one run ID (see: storbench runs)")
	}
	out := &Compared{}
	var runIDs []string
	seen := map[string]bool{}
	for _, id := range ids {
		run, err := st.Run(ctx, id)
		if err != nil {
			return nil, NotFound(err)
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
	c, err := analysis.Compare(figs, opts)
	if errors.Is(err, analysis.ErrNoResults) {
		return nil, &ExitError{Code: ExitFailed, Err: fmt.Errorf("run(s) %v: %w", runIDs, err)}
	}
	if err != nil {
		return nil, Usage(err)
	}
	out.Comparison = c
	return out, nil
}
