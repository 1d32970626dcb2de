package storbench

import (
	"context"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// RunsRequest filters the stored runs.
type RunsRequest struct {
	// Limit keeps the newest Limit runs; 0 keeps all.
	Limit int
	Suite string
	// Status keeps runs of this status (judged now: see Runs); empty
	// keeps all.
	Status result.Status
}

// Runs lists stored runs, newest first. Whether a run stored as running
// is abandoned (its storbench process is gone) is judged now, so both
// statuses are read from the running runs and filtered here. An unknown
// status is a RequestError (its message names the option as the command
// line does).
func Runs(ctx context.Context, st store.Reader, req RunsRequest) ([]result.Run, error) {
	switch req.Status {
	case "", result.StatusComplete, result.StatusFailed, result.StatusInterrupted, result.StatusRunning, result.StatusAbandoned:
	default:
		return nil, badRequest("--status %q: choose complete, failed, interrupted, running or abandoned", req.Status)
	}
	filter := store.RunFilter{Limit: req.Limit, Suite: req.Suite, Status: req.Status}
	judged := req.Status == result.StatusRunning || req.Status == result.StatusAbandoned
	if judged {
		filter.Limit, filter.Status = 0, ""
	}
	all, err := st.Runs(ctx, filter)
	if err != nil {
		return nil, err
	}
	runs := []result.Run{}
	for _, r := range all {
		proc.Reader{}.Abandon(&r)
		if judged && (r.Status != req.Status || (req.Limit > 0 && len(runs) == req.Limit)) {
			continue
		}
		runs = append(runs, r)
	}
	return runs, nil
}
