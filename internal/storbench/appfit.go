package storbench

import (
	"context"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/appfit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
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

// appVerdict adds the sqlite verdict to a report when its runs hold
// app-fitness results; asked for (--for sqlite) and absent, it is a
// *analysis.MissingError.
func appVerdict(ctx context.Context, st store.Reader, cmp *Comparison, asked bool) error {
	var ids []string
	for _, r := range cmp.Runs {
		ids = append(ids, r.ID)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: ids, Round: result.RoundApp})
	if err != nil {
		return err
	}
	v, err := analysis.SQLiteVerdict(results)
	switch {
	case err == nil:
		cmp.Verdicts = append(cmp.Verdicts, v)
	case asked:
		return err
	}
	return nil
}
