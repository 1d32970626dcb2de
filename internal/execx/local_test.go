package execx_test

import (
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/runner/runnertest"
)

func TestLocalConformance(t *testing.T) {
	runnertest.Conformance(t, func(t *testing.T) runnertest.Env {
		return runnertest.Env{Cmder: execx.Local{}, Dir: t.TempDir(), ExitCodeKnown: true}
	})
}
