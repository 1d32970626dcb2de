package version

import (
	"os/exec"
	"path/filepath"
	"regexp"
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
	build := exec.Command("go", // go test puts its own toolchain first on PATH
		"build", "-o", bin,
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

// RELEASE holds one release version, vMAJOR.MINOR.PATCH.
func TestRelease(t *testing.T) {
	if !regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`).MatchString(Release) {
		t.Errorf("RELEASE says %q, want vMAJOR.MINOR.PATCH", Release)
	}
}

// A build from source says which release it is at, and uses that
// release's images; a release (or any version set when building) uses
// its own.
func TestImageTag(t *testing.T) {
	for _, tc := range []struct{ name, version, tag string }{
		{"source build", Release + "-dev", Release},
		{"source build with commit", Release + "-dev-0123456789ab", Release},
		{"dirty source build", Release + "-dev-0123456789ab-dirty", Release},
		{"release", "v9.8.7", "v9.8.7"},
		{"go install at a tag", "v1.2.3", "v1.2.3"},
		{"release tool pseudo-version", "v0.0.0-20261124120000-0123456789ab", "v0.0.0-20261124120000-0123456789ab"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := imageTag(tc.version); got != tc.tag {
				t.Errorf("imageTag(%q) = %q, want %q", tc.version, got, tc.tag)
			}
		})
	}
}

func TestFillFromSource(t *testing.T) {
	var v, c, d string
	fill(&v, &c, &d)
	if !strings.HasPrefix(v, Release+"-dev") && v != Release {
		t.Errorf("a test binary (built from source) says version %q, want %s-dev...", v, Release)
	}
}
