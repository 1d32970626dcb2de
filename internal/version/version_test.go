package version

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

func TestFillKeepsLinkerValues(t *testing.T) {
	v, c, d := "v1.2.3", "0123456789abcdef0123456789abcdef01234567", "2026-11-24T12:00:00Z"
	fill(&v, &c, &d)
	if v != "v1.2.3" || c != "0123456789abcdef0123456789abcdef01234567" || d != "2026-11-24T12:00:00Z" {
		t.Errorf("fill changed what the linker set: %q %q %q", v, c, d)
	}
}

func TestGet(t *testing.T) {
	i := Get()
	if i.Version == "" || i.GoVersion != runtime.Version() || !strings.HasPrefix(i.Platform, runtime.GOOS+"/"+runtime.GOARCH) {
		t.Errorf("Get() = %+v", i)
	}
}

// A binary linked with -X carries those values: the variables have no
// initialiser the linker's value would lose to.
func TestLinkerFlags(t *testing.T) {
	dir := t.TempDir()
	const p = "github.com/storbench/storbench/internal/version."
	bin := filepath.Join(dir, "v")
	build := exec.Command(filepath.Join(runtime.GOROOT(), "bin", "go"), "build", "-o", bin,
		"-ldflags", "-X "+p+"Version=v9.8.7 -X "+p+"Commit=abc -X "+p+"CommitDate=2026-01-02T03:04:05Z", "./testdata/printversion")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := string(out); got != "v9.8.7 abc 2026-01-02T03:04:05Z" {
		t.Errorf("the binary says %q", got)
	}
}
