package deploytest

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// buildStorbench builds a static storbench binary (no cgo: it runs in any
// container image) into a temporary folder and returns its path.
func buildStorbench(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "storbench")
	cmd := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin, "github.com/storbench/storbench/cmd/storbench")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building storbench: %v\n%s", err, out)
	}
	return bin
}
