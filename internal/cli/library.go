package cli

import (
	"errors"

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

// VerdictExit is the exit code of a verdict: 0 pass, 3 warn, 4 fail.
func VerdictExit(s analysis.Status) int {
	switch s {
	case analysis.Warn:
		return ExitWarn
	case analysis.Fail:
		return ExitVerdictFail
	}
	return ExitOK
}
