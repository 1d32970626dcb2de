package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// exitCodes is storbench's one map from an error to its exit code, in the
// order the rules are tried; the first that matches wins. It is the
// README's exit-code table ("Exit codes"): 2 for usage and configuration
// (a request refused as given, an unknown or ambiguous run), 130 for an
// interrupted run (app.Main turns it into 128+n for the signal n), 1 for a
// failed workload, a missing fio or nothing to compare. 3 and 4 come from a
// verdict (VerdictExit), 0 from no error at all; any other error exits 1.
var exitCodes = []struct {
	code  int
	match func(error) bool
}{
	{ExitUsage, func(err error) bool { var req *storbench.RequestError; return errors.As(err, &req) }},
	{ExitUsage, func(err error) bool { return errors.Is(err, store.ErrNotFound) }},
	{ExitUsage, func(err error) bool { var amb *store.AmbiguousError; return errors.As(err, &amb) }},
	{ExitInterrupted, func(err error) bool { return errors.Is(err, engine.ErrInterrupted) }},
	{ExitFailed, func(err error) bool { return errors.Is(err, engine.ErrWorkloadFailed) }},
	{ExitFailed, func(err error) bool { var missing *fio.MissingError; return errors.As(err, &missing) }},
	{ExitFailed, func(err error) bool { return errors.Is(err, analysis.ErrNoResults) }},
}

// FromLibrary gives an error of the storbench library its exit code from
// exitCodes; an error no rule matches, or one that already carries a code,
// is returned unchanged.
func FromLibrary(err error) error {
	var ee *ExitError
	if err == nil || errors.As(err, &ee) {
		return err
	}
	err = inFlags(err)
	for _, rule := range exitCodes {
		if rule.match(err) {
			return &ExitError{Code: rule.code, Err: err}
		}
	}
	return err
}

// RunIDArgs requires at least one run ID.
func RunIDArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return Usagef("%s: name at least one run ID (see: storbench runs)", cmd.CommandPath())
	}
	return nil
}

// VerdictExit decides qualify's exit from a verdict and the run behind
// it: the code the verdict alone gives (0 pass, 3 warn, 4 fail; the JSON
// document states it) and the error to exit with. A failed workload fails
// (1) whatever the verdict, which stands on what finished.
func VerdictExit(v *analysis.Verdict, failed error) (int, error) {
	code := ExitOK
	switch v.Status {
	case analysis.Warn:
		code = ExitWarn
	case analysis.Fail:
		code = ExitVerdictFail
	}
	switch {
	case failed != nil:
		return code, &ExitError{Code: ExitFailed, Err: failed}
	case code != ExitOK:
		return code, &ExitError{Code: code, Err: fmt.Errorf("%s verdict: %s", v.For, v.Status)}
	}
	return code, nil
}
