package storbench

import (
	"context"
	"time"

	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// RunsRequest filters the stored runs.
type RunsRequest struct {
	// Limit keeps the newest Limit runs after skipping Offset; 0 keeps all.
	Limit  int
	Offset int
	Suite  string
	// Target, Labels, Since and Until narrow the runs as store.RunFilter
	// says.
	Target       string
	Labels       map[string]string
	Since, Until time.Time
	// Status keeps runs of this status (as worked out now: see Runs); empty
	// keeps all.
	Status result.Status
}

// Runs lists stored runs, newest first. Whether a run stored as running
// is abandoned (its storbench process is gone) is found out now, so both
// statuses are read from the running runs and filtered here. An unknown
// status is a RequestError (its message names the option as the command
// line does).
func Runs(ctx context.Context, st store.Reader, req RunsRequest) ([]result.Run, error) {
	switch req.Status {
	case "", result.StatusComplete, result.StatusFailed, result.StatusInterrupted, result.StatusRunning, result.StatusAbandoned:
	default:
		return nil, badRequest("%s %q: choose complete, failed, interrupted, running or abandoned", FieldStatus, req.Status)
	}
	if req.Limit < 0 || req.Offset < 0 {
		return nil, badRequest("a limit or offset below 0")
	}
	filter := store.RunFilter{Limit: req.Limit, Offset: req.Offset, Suite: req.Suite, Status: req.Status,
		Target: req.Target, Labels: req.Labels, Since: req.Since, Until: req.Until}
	judged := req.Status == result.StatusRunning || req.Status == result.StatusAbandoned
	if judged {
		// A run counts as abandoned here when its process is gone, or was
		// stored so by cleanup: only running ones can be running.
		filter.Limit, filter.Offset, filter.Status = 0, 0, ""
		if req.Status == result.StatusRunning {
			filter.Status = result.StatusRunning
		}
	}
	all, err := st.Runs(ctx, filter)
	if err != nil {
		return nil, err
	}
	runs := []result.Run{}
	skip := req.Offset
	for _, r := range all {
		proc.Reader{}.Abandon(&r)
		if judged {
			if r.Status != req.Status || (req.Limit > 0 && len(runs) == req.Limit) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
		}
		runs = append(runs, r)
	}
	return runs, nil
}
