// Package testenv decides what a test does when something it needs is
// missing from the machine: skip with the reason, or, when the prerequisite
// is named in STORBENCH_REQUIRE (comma-separated, or "all"), fail. CI sets
// STORBENCH_REQUIRE so that nothing important is skipped in silence.
//
// Prerequisite names: fio, root, loop, chromium, k8s, sshd, prometheus,
// mkfs (filesystem tools), and any tool name passed to Tool.
package testenv

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// EnvRequire names the environment variable listing required prerequisites.
const EnvRequire = "STORBENCH_REQUIRE"

// Required reports whether the prerequisite must be present.
func Required(prereq string) bool {
	for _, p := range strings.Split(os.Getenv(EnvRequire), ",") {
		p = strings.TrimSpace(p)
		if p == "all" || p == prereq {
			return true
		}
	}
	return false
}

// Missing skips the test because prereq is missing, or fails it when
// prereq is required.
func Missing(t testing.TB, prereq, format string, args ...any) {
	t.Helper()
	if Required(prereq) {
		t.Fatalf("required prerequisite %q missing ("+EnvRequire+"): "+format, append([]any{prereq}, args...)...)
	}
	t.Skipf(format, args...)
}

// Tool returns the path of an executable, or skips (fails when required)
// naming the Debian package that provides it. The prerequisite name is
// prereq when given, else the tool's own name.
func Tool(t testing.TB, name, debianPackage string, prereq ...string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		pr := name
		if len(prereq) > 0 {
			pr = prereq[0]
		}
		Missing(t, pr, "%s is not installed (apt-get install %s)", name, debianPackage)
	}
	return p
}

// Fio returns fio's path.
func Fio(t testing.TB) string {
	t.Helper()
	return Tool(t, "fio", "fio", "fio")
}

// Root needs the test to run as root.
func Root(t testing.TB) {
	t.Helper()
	if os.Geteuid() != 0 {
		Missing(t, "root", "needs root (loop devices, mounts, namespaces); run the tests as root")
	}
}

// Loop needs root, losetup and the loop driver.
func Loop(t testing.TB) {
	t.Helper()
	Root(t)
	Tool(t, "losetup", "mount", "loop")
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		Missing(t, "loop", "no loop device support here: /dev/loop-control is missing (modprobe loop)")
	}
}

// Chromium returns the path of Debian's headless Chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/chromium", "/usr/bin/chromium-browser"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	Missing(t, "chromium", "headless Chromium is not installed (apt-get install chromium)")
	return ""
}

// LoopDevice attaches a new sparse file of size bytes as a loop device and
// detaches it when the test ends. The backing file lives in a fresh
// temporary directory.
func LoopDevice(t testing.TB, size int64) string {
	t.Helper()
	Loop(t)
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return AttachLoop(t, img)
}

// AttachLoop attaches an existing image file as a loop device and detaches
// it when the test ends.
func AttachLoop(t testing.TB, img string, losetupArgs ...string) string {
	t.Helper()
	Loop(t)
	args := append([]string{"--find", "--show"}, losetupArgs...)
	out, err := exec.Command("losetup", append(args, img)...).CombinedOutput()
	if err != nil {
		Missing(t, "loop", "no loop device available: losetup: %v %s", err, out)
	}
	dev := strings.TrimSpace(string(out))
	t.Cleanup(func() {
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v %s", dev, err, out)
		}
	})
	return dev
}

// Buffer collects a process's output while it runs: safe for the process's
// writer and the test's reader at once.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}
