package deploytest

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// buildStorbench builds storbench into a temporary folder, as go build
// does here by default (not CGO_ENABLED=0 as a release: the suite's own
// build has compiled every package so already, where a static build
// compiled them all again, 157 s of a cold run's host tier), and returns
// its path.
func buildStorbench(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "storbench")
	cmd := exec.Command("go", // go test puts its own toolchain first on PATH
		"build", "-o", bin, "github.com/storbench/storbench/cmd/storbench")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building storbench: %v\n%s", err, out)
	}
	return bin
}
