package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/storbench"
)

// FromLibrary gives an error of the storbench library its exit code: a
// request the library cannot carry out as given is bad usage, an
// interrupted run an interruption, nothing left to compare a failure.
func FromLibrary(err error) error {
	var req *storbench.RequestError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &req):
		return Usage(err)
	case errors.Is(err, engine.ErrInterrupted):
		return &ExitError{Code: ExitInterrupted, Err: err}
	case errors.Is(err, analysis.ErrNoResults):
		return &ExitError{Code: ExitFailed, Err: err}
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
