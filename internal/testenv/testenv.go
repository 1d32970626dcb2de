// Package testenv decides what a test does when something it needs is
// missing from the machine: skip with the reason, or, when the prerequisite
// is named in STORBENCH_REQUIRE (comma-separated, or "all"), fail. CI sets
// STORBENCH_REQUIRE so that nothing important is skipped in silence.
//
// It also keeps the tiers apart: under go test -short (the unit tier: no
// root, no fio, no namespaces, no cluster) every check here but the shell's
// skips the test before looking, whatever STORBENCH_REQUIRE says, so the
// unit tier stays fast and needs nothing but Go. The host tier (the same
// tests without -short) runs them.
//
// Prerequisite names: fio, root, loop, chromium, k8s, sshd, prometheus,
// mkfs (filesystem tools), and any tool name passed to Tool.
package testenv

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
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

// HostTier skips the test under go test -short: it needs prereq, which
// belongs to the host tier (real fio, root, loop devices, sshd, Chromium,
// a cluster). It never fails: the unit tier leaves these tests out by
// design, and STORBENCH_REQUIRE speaks only of what a machine lacks.
func HostTier(t testing.TB, prereq string) {
	t.Helper()
	if testing.Short() {
		t.Skipf("needs %s: a host-tier test, left out of the unit tier (go test -short)", prereq)
	}
}

// HostTierExamples leaves the named runnable examples out of the unit tier
// (they run fio or need root): an Example cannot skip itself, so the
// package's TestMain calls this after flag.Parse. Without -short it does
// nothing.
func HostTierExamples(names ...string) error {
	if !testing.Short() || len(names) == 0 {
		return nil
	}
	skip := "^(" + strings.Join(names, "|") + ")$"
	if cur := flag.Lookup("test.skip").Value.String(); cur != "" {
		if strings.Contains(cur, "/") {
			return fmt.Errorf("-skip %q names subtests: cannot add the host-tier examples %s to it", cur, skip)
		}
		skip = cur + "|" + skip
	}
	return flag.Set("test.skip", skip)
}

// unitTools are the programs the unit tier may run: every machine that
// builds Go has them.
var unitTools = map[string]bool{"sh": true}

// Tool returns the path of an executable, or skips (fails when required)
// naming the Debian package that provides it. The prerequisite name is
// prereq when given, else the tool's own name. Under -short it skips
// (HostTier) unless the tool is the shell.
func Tool(t testing.TB, name, debianPackage string, prereq ...string) string {
	t.Helper()
	pr := name
	if len(prereq) > 0 {
		pr = prereq[0]
	}
	if !unitTools[name] {
		HostTier(t, pr)
	}
	p, err := exec.LookPath(name)
	if err != nil {
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
	HostTier(t, "root")
	if os.Geteuid() != 0 {
		Missing(t, "root", "needs root (loop devices, mounts, namespaces); run the tests as root")
	}
}

// Loop needs root, losetup and the loop driver.
func Loop(t testing.TB) {
	t.Helper()
	HostTier(t, "loop")
	Root(t)
	Tool(t, "losetup", "mount", "loop")
	if _, err := os.Stat("/dev/loop-control"); err != nil {
		Missing(t, "loop", "no loop device support here: /dev/loop-control is missing (modprobe loop)")
	}
}

// Chromium returns the path of Debian's headless Chromium.
func Chromium(t testing.TB) string {
	t.Helper()
	HostTier(t, "chromium")
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
// it when the test ends, or when the test binary is interrupted first
// (OnInterrupt): a loop device outlives the process that made it. The
// interrupt's undo is there before the device is: until losetup has said
// which device it took, it finds the image's devices by their backing
// file (the image is the test's own).
func AttachLoop(t testing.TB, img string, losetupArgs ...string) string {
	t.Helper()
	Loop(t)
	var mu sync.Mutex
	var dev string
	done := OnInterrupt("loop device of "+img, func() {
		var devs []string
		for i := 0; len(devs) == 0 && i < 20; i++ { // losetup may be attaching it now
			mu.Lock()
			if dev != "" {
				devs = []string{dev}
			}
			mu.Unlock()
			if len(devs) == 0 {
				if devs = associatedLoops(img); len(devs) == 0 {
					time.Sleep(100 * time.Millisecond)
				}
			}
		}
		for _, d := range devs {
			Retry(func() error { return exec.Command("losetup", "--detach", d).Run() })
		}
	})
	args := append([]string{"--find", "--show"}, losetupArgs...)
	out, err := exec.Command("losetup", append(args, img)...).CombinedOutput()
	if err != nil {
		done()
		Missing(t, "loop", "no loop device available: losetup: %v %s", err, out)
	}
	mu.Lock()
	dev = strings.TrimSpace(string(out))
	mu.Unlock()
	t.Cleanup(func() {
		done() // first: once detached, the number may be another's
		if out, err := exec.Command("losetup", "--detach", dev).CombinedOutput(); err != nil {
			t.Errorf("losetup --detach %s: %v %s", dev, err, out)
		}
	})
	return dev
}

// associatedLoops lists the loop devices whose backing file is img.
func associatedLoops(img string) []string {
	out, err := exec.Command("losetup", "--noheadings", "--output", "NAME", "--associated", img).Output()
	if err != nil {
		return nil
	}
	return strings.Fields(string(out))
}

// Retry calls undo until it succeeds, for at most 2 s, when a test binary
// is interrupted (OnInterrupt): a device or mount the previous undo let go
// of can stay busy a moment longer (a loop device's backing file is closed
// after its detach returns).
func Retry(undo func() error) {
	for i := 0; i < 20 && undo() != nil; i++ {
		time.Sleep(100 * time.Millisecond)
	}
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

// EnvBeside names the environment variable scripts/test.sh sets on the host
// tests it runs beside the cluster tier, at a low CPU priority: there, a
// test that measures fails (Measures).
const EnvBeside = "STORBENCH_TEST_BESIDE"

// Measures marks a test whose outcome another process's load could move:
// it asserts a measured rate, latency, round trip or a verdict drawn from
// them (the slow OSD, the knee, the cliff, the link at its limit), or that
// something ends within a deadline close to what it takes, or it orders
// events by sleeping. It must be the test's first statement, where
// scripts/test.sh finds it: the whole suite runs these tests first, with
// nothing else on the machine, and every other host test beside the
// cluster tier at a low CPU priority, where Measures fails the test (a
// marker the script did not find). A test that only runs fio or a server
// and checks what came out, with deadlines far above what the work takes,
// does not measure.
func Measures(t testing.TB) {
	t.Helper()
	if os.Getenv(EnvBeside) == "1" {
		t.Fatalf("this test measures, so it cannot run beside the cluster tier (%s=1): testenv.Measures(t) must be its first statement, where scripts/test.sh finds it", EnvBeside)
	}
}
