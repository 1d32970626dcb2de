package storbench

import (
	"context"

	"github.com/storbench/storbench/internal/appfit"
)

// AppProbeRequest is one run of the hidden appfit-probe command: one
// client of the app-fitness probe, as storbench runs it on a host, in a
// pod or over SSH.
type AppProbeRequest = appfit.Job

// AppProbe runs one client's job and returns its answer, which the command
// prints as JSON for the storbench that started it.
func AppProbe(ctx context.Context, req AppProbeRequest) (any, error) { return appfit.Do(ctx, req) }

// The probe's defaults, for the command's flags.
const (
	AppProbeCommand     = appfit.ProbeCommand
	AppProbeJournal     = appfit.JournalWAL
	AppProbeSynchronous = appfit.SyncFull
)
