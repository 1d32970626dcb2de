package cli

import (
	"errors"
	"fmt"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/storbench"
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
		{"anything else", failed, 0},
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
