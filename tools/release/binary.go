package release

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// Platform is one target of a release.
type Platform struct {
	// OS and Arch as Go names them; Variant is the ARM version ("7") for
	// 32-bit ARM, "" otherwise.
	OS, Arch, Variant string
}

// Platforms are the release's targets: 64-bit PCs, 64-bit ARM (Raspberry
// Pi 3 and later on a 64-bit OS) and 32-bit ARMv7 (Raspberry Pi OS 32-bit).
var Platforms = []Platform{{"linux", "amd64", ""}, {"linux", "arm64", ""}, {"linux", "arm", "7"}}

// Name is how file names say the platform: linux-amd64, linux-arm64,
// linux-armv7.
func (p Platform) Name() string {
	if p.Variant != "" {
		return p.OS + "-" + p.Arch + "v" + p.Variant
	}
	return p.OS + "-" + p.Arch
}

// OCI is the platform as an image index says it: linux/arm/v7.
func (p Platform) OCI() string {
	if p.Variant != "" {
		return p.OS + "/" + p.Arch + "/v" + p.Variant
	}
	return p.OS + "/" + p.Arch
}

const versionPackage = "github.com/storbench/storbench/internal/version"

// BuildBinary builds the static storbench binary for p into out. The
// build records no paths (-trimpath) nor VCS state (-buildvcs=false): the
// version, commit and date go in as linker flags instead.
func BuildBinary(src Source, p Platform, out string) error {
	ldflags := fmt.Sprintf("-s -w -X %s.Version=%s -X %s.Commit=%s -X %s.CommitDate=%s",
		versionPackage, src.Version, versionPackage, src.Commit, versionPackage, src.CommitDate.Format(time.RFC3339))
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	unlock, err := oneBuildAtATime()
	if err != nil {
		return err
	}
	defer unlock()
	cmd := exec.Command(goTool(), "build", "-trimpath", "-buildvcs=false", "-ldflags", ldflags, "-o", abs, "./cmd/storbench")
	cmd.Dir = src.Dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS="+p.OS, "GOARCH="+p.Arch, "GOFLAGS=", "GOARM="+p.Variant)
	var outb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &outb, &outb
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build for %s: %w\n%s", p.Name(), err, outb.String())
	}
	return nil
}

// oneBuildAtATime holds a lock shared by this user's release builds while
// one compiles: two at once (two release builds, or the tools module's
// release and images tests, which go test runs side by side) would compile
// the same packages twice over on a cold build cache; one after the other,
// the second finds them in the user's Go build cache and only links. The
// lock is an economy, not a guard: without a cache folder there is none.
// It is released by unlock, or by the process's end.
func oneBuildAtATime() (unlock func(), err error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return func() {}, nil
	}
	path := filepath.Join(dir, "storbench-release", "build.lock")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("the release build lock: %w", err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("the release build lock: %w", err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("the release build lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// goTool is the go command of the toolchain that built this program, so
// that the release is built by one known Go; a program built with
// -trimpath knows no GOROOT (unless the environment names one), and then
// it is the go on PATH, which go run and go test put their own first on.
func goTool() string {
	if root := runtime.GOROOT(); root != "" {
		return filepath.Join(root, "bin", "go")
	}
	return "go"
}
