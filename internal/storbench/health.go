package storbench

import (
	"context"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// HealthRequest selects stored device health records.
type HealthRequest struct {
	// Runs are run IDs or unique prefixes; none means every run.
	Runs []string
	// Target keeps only this target's records; "" keeps all.
	Target string
	// All keeps every record; otherwise, without Runs, only the newest of
	// each target.
	All bool
}

// Health returns the device health (SMART) records imports stored, oldest
// first; never nil. A run that is not stored is the store's
// store.ErrNotFound or *store.AmbiguousError, unwrapped.
func Health(ctx context.Context, st store.Reader, req HealthRequest) ([]result.Health, error) {
	filter := store.HealthFilter{Target: req.Target, Latest: !req.All && len(req.Runs) == 0}
	for _, id := range req.Runs {
		run, err := st.Run(ctx, id)
		if err != nil {
			return nil, err
		}
		filter.RunIDs = append(filter.RunIDs, run.ID)
	}
	hs, err := st.Health(ctx, filter)
	if err != nil {
		return nil, err
	}
	if hs == nil {
		hs = []result.Health{}
	}
	return hs, nil
}
