package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func TestFromLibrary(t *testing.T) {
	failed := fmt.Errorf("fio: %w", engine.ErrWorkloadFailed)
	for _, tt := range []struct {
		name string
		err  error
		code int // 0: passed through unchanged
	}{
		{"bad request", &storbench.RequestError{Err: errors.New("baseline x")}, ExitUsage},
		{"bad request behind a failed workload", errors.Join(failed, &storbench.RequestError{Err: errors.New("no")}), ExitUsage},
		{"interrupted", fmt.Errorf("run: %w", engine.ErrInterrupted), ExitInterrupted},
		{"nothing to compare", fmt.Errorf("run(s) [a]: %w", analysis.ErrNoResults), ExitFailed},
		{"failed workload", failed, ExitFailed},
		{"fio missing", fmt.Errorf("run: %w", &fio.MissingError{}), ExitFailed},
		{"unknown run", fmt.Errorf("run x: %w", store.ErrNotFound), ExitUsage},
		{"ambiguous run", &store.AmbiguousError{Prefix: "a", Matches: []string{"ab", "ac"}}, ExitUsage},
		{"interrupted after a failed workload", errors.Join(failed, engine.ErrInterrupted), ExitInterrupted},
		{"anything else", errors.New("disk on fire"), 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := FromLibrary(tt.err)
			var ee *ExitError
			switch {
			case tt.code == 0 && got != tt.err:
				t.Errorf("got %v, want the error unchanged", got)
			case tt.code != 0 && (!errors.As(got, &ee) || ee.Code != tt.code || got.Error() != tt.err.Error()):
				t.Errorf("got %#v, want exit code %d with the same message", got, tt.code)
			}
		})
	}
	if FromLibrary(nil) != nil {
		t.Error("nil became an error")
	}
}

func TestVerdictExit(t *testing.T) {
	failed := fmt.Errorf("fio: %w", engine.ErrWorkloadFailed)
	for _, tt := range []struct {
		status   analysis.Status
		failed   error
		code     int // the verdict's
		exitCode int // the process's; 0: no error
	}{
		{analysis.Pass, nil, ExitOK, 0},
		{analysis.Info, nil, ExitOK, 0},
		{analysis.Warn, nil, ExitWarn, ExitWarn},
		{analysis.Fail, nil, ExitVerdictFail, ExitVerdictFail},
		{analysis.Pass, failed, ExitOK, ExitFailed},
		{analysis.Fail, failed, ExitVerdictFail, ExitFailed},
	} {
		t.Run(fmt.Sprintf("%s, failed %v", tt.status, tt.failed != nil), func(t *testing.T) {
			code, err := VerdictExit(&analysis.Verdict{For: analysis.ForEtcd, Status: tt.status}, tt.failed)
			var ee *ExitError
			if code != tt.code || (err == nil) != (tt.exitCode == 0) || (err != nil && (!errors.As(err, &ee) || ee.Code != tt.exitCode)) {
				t.Errorf("code %d, error %v; want %d and exit %d", code, err, tt.code, tt.exitCode)
			}
		})
	}
}
