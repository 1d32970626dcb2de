package local

import (
	"testing"

	"github.com/storbench/storbench/internal/runner/runnertest"
)

// The local kind takes any path; its targets pass TargetConformance in
// TestDirectoryTargetConformance and the device tests.
func TestKindConformance(t *testing.T) {
	dir := t.TempDir()
	runnertest.KindConformance(t, runnertest.KindSuite{
		Kind:  Kind{},
		Valid: []string{dir, "/dev/null", "relative/dir"},
	})
	if got := (spec(dir)).Describe(); got == "" || got[:13] != "a directory o" {
		t.Errorf("a directory describes itself as %q", got)
	}
}
