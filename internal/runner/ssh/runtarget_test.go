package ssh

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

func writeNeed(id string) runner.Need {
	return runner.Need{RunID: id, FileSize: 8 << 20, Writers: []string{"w"}, Direct: true}
}

// sshSubject is path on this machine reached through h's sshd; leftovers
// are entries of a directory that were not there before.
func sshSubject(t *testing.T, h host, path string, need runner.Need, destructive bool) runnertest.Subject {
	c := dial(t, h.options(t))
	name := TargetName(h.srv.Addr(), path)
	var opts TargetOptions
	if destructive {
		opts.Destructive = []string{name}
	}
	sub := runnertest.Subject{Target: NewTarget(name, c, path, opts), Need: need, Leftovers: func() []string { return nil }}
	if fi, err := os.Stat(path); err == nil && fi.IsDir() {
		before := runnertest.Listing(path)
		sub.Leftovers = func() []string {
			var left []string
			for _, e := range strings.Split(runnertest.Listing(path), "\n") {
				if e != "" && !strings.Contains("\n"+before+"\n", "\n"+e+"\n") {
					left = append(left, e)
				}
			}
			return left
		}
		sub.State = func() string { return runnertest.Listing(path) }
	} else if err == nil {
		sub.State = func() string { return safetytest.Sum(t, path) }
		// A device something else holds (mounted, swap) stays held.
		if fd, err := unix.Open(path, unix.O_RDONLY|unix.O_EXCL, 0); err == nil {
			unix.Close(fd)
			sub.Leftovers = func() []string { return heldOpen(path) }
		}
	}
	return sub
}

// heldOpen says whether anything holds dev exclusively (the host's hold
// left behind, a mount): it tries for a second, as the wrapper needs a
// moment to stop the hold once its session ends.
func heldOpen(dev string) []string {
	var err error
	for range 10 {
		var fd int
		if fd, err = unix.Open(dev, unix.O_RDONLY|unix.O_EXCL, 0); err == nil {
			unix.Close(fd)
			return nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	return []string{"exclusive hold on " + dev + ": " + err.Error()}
}

// TestDeviceMountedBetweenCheckAndPrepare: Check passes on a blank
// device, then the host mounts it where no fact shows it (another mount
// namespace, magic erased); Prepare's exclusive hold on the host refuses
// it, leaving it unchanged and unheld.
func TestDeviceMountedBetweenCheckAndPrepare(t *testing.T) {
	testenv.Loop(t)
	h := newHost(t)
	dev := testenv.LoopDevice(t, 64<<20)
	sub := sshSubject(t, h, dev, writeNeed("race"), true)
	tgt := sub.Target.(*Target)
	if err := tgt.Check(context.Background(), sub.Need); err != nil {
		t.Fatalf("blank device: %v", err)
	}
	safetytest.MountHiddenAndUnsigned(t, dev)
	before := sub.State()
	p, err := tgt.Prepare(context.Background(), sub.Need)
	if err == nil {
		p.Cleanup(context.Background())
		t.Fatal("Prepare accepted a device mounted since Check")
	}
	var refusal *safety.Refusal
	if !errors.As(err, &refusal) || !strings.Contains(err.Error(), "exclusive open (EBUSY)") || !strings.Contains(err.Error(), tgt.Name()) {
		t.Errorf("Prepare: want the safety owner's EBUSY refusal naming the target, got %v", err)
	}
	if after := sub.State(); after != before {
		t.Errorf("device changed: sha256 %s -> %s", before, after)
	}
}

// TestDeviceHeldWhilePrepared: between Prepare and Cleanup the host holds
// the device, so mounting it there fails; after Cleanup it is free.
func TestDeviceHeldWhilePrepared(t *testing.T) {
	testenv.Loop(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "mkfs")
	h := newHost(t)
	dev := testenv.LoopDevice(t, 64<<20)
	sub := sshSubject(t, h, dev, writeNeed("held"), true)
	p, err := sub.Target.Prepare(context.Background(), sub.Need)
	if err != nil {
		t.Fatal(err)
	}
	if held := heldOpen(dev); len(held) == 0 {
		t.Error("the device is not held while prepared")
	}
	// mkfs itself opens the device exclusively, as mount does.
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err == nil {
		t.Errorf("mkfs.ext4 wrote a filesystem on the held device: %s", out)
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if left := sub.Leftovers(); len(left) > 0 {
		t.Errorf("after Cleanup: %v", left)
	}
}

func TestDirectoryTargetConformance(t *testing.T) {
	testenv.Fio(t)
	h := newHost(t)
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject { return sshSubject(t, h, t.TempDir(), writeNeed("conf"), false) },
		Unsafe: []runnertest.Unsafe{
			{Name: "missing directory", Want: "does not exist on 127.0.0.1", Make: func(t *testing.T) runnertest.Subject {
				return sshSubject(t, h, filepath.Join(t.TempDir(), "missing"), writeNeed("r"), false)
			}},
			{Name: "a regular file", Want: "neither a directory nor a block device", Make: func(t *testing.T) runnertest.Subject {
				f := filepath.Join(t.TempDir(), "file")
				if err := os.WriteFile(f, []byte("keep"), 0o644); err != nil {
					t.Fatal(err)
				}
				return sshSubject(t, h, f, writeNeed("r"), false)
			}},
			{Name: "not enough space", Want: "not enough free space", Make: func(t *testing.T) runnertest.Subject {
				testenv.Root(t)
				dir := t.TempDir()
				safetytest.Run(t, "mount", "-t", "tmpfs", "-o", "size=16m", "tmpfs", dir)
				t.Cleanup(func() { safetytest.Run(t, "umount", dir) })
				need := writeNeed("r")
				need.FileSize = 64 << 20
				return sshSubject(t, h, dir, need, false)
			}},
			{Name: "read-only bind mount", Want: "mounted read-only", Make: func(t *testing.T) runnertest.Subject {
				testenv.Root(t)
				src, dir := t.TempDir(), t.TempDir()
				safetytest.Run(t, "mount", "--bind", src, dir)
				t.Cleanup(func() { safetytest.Run(t, "umount", dir) })
				safetytest.Run(t, "mount", "-o", "remount,bind,ro", dir)
				return sshSubject(t, h, dir, writeNeed("r"), false)
			}},
			{Name: "work directory exists", Want: "File exists", PrepareOnly: true, Make: func(t *testing.T) runnertest.Subject {
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "storbench-r", "keep"), 0o755); err != nil {
					t.Fatal(err)
				}
				return sshSubject(t, h, dir, writeNeed("r"), false)
			}},
		},
	})
}

// TestDeviceTargetConformance reaches loop devices of this machine through
// sshd: every fact the safety owner judges is read over SSH.
func TestDeviceTargetConformance(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	h := newHost(t)
	unsafe := []runnertest.Unsafe{
		{Name: "blank but not named", Want: "pass --destructive", Make: func(t *testing.T) runnertest.Subject {
			return sshSubject(t, h, testenv.LoopDevice(t, 16<<20), writeNeed("r"), false)
		}},
	}
	for _, c := range safetytest.Cases() {
		switch c.Name {
		case "ext4", "xfs", "lvm2-pv", "luks2", "gpt-4096", "two-signatures", "mounted-ext4", "active-swap", "read-only-blank",
			"loop-at-offset-mounted", "loop-file-on-lazily-unmounted-fs", "loop-sharing-backing-file-mounted":
		default:
			continue
		}
		want := "refusing to write"
		switch {
		case c.Name == "two-signatures":
			// The built-in check names both; the ambivalence is blkid's.
			want = "XFS superblock at byte 0 (built-in check)"
		case c.Refusal != "":
			want = c.Refusal
		}
		// Named with --destructive or not, a device holding data is refused;
		// ext4 is tried both ways, the others named.
		nameds := []bool{true}
		if c.Name == "ext4" {
			nameds = []bool{false, true}
		}
		for _, named := range nameds {
			unsafe = append(unsafe, runnertest.Unsafe{Name: c.Name + map[bool]string{true: " named"}[named], Want: want, Make: func(t *testing.T) runnertest.Subject {
				return sshSubject(t, h, c.Device(t), writeNeed("r"), named)
			}})
		}
	}
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject {
			return sshSubject(t, h, testenv.LoopDevice(t, 32<<20), writeNeed("conf"), true)
		},
		Unsafe: unsafe,
	})
}

// TestTargetLabels: the labels say what the host says of itself.
func TestTargetLabels(t *testing.T) {
	h := newHost(t)
	dir := t.TempDir()
	sub := sshSubject(t, h, dir, writeNeed("labels"), false)
	p, err := sub.Target.Prepare(context.Background(), sub.Need)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup(context.Background())
	host, _ := os.Hostname()
	if p.Local || p.Kind != "directory" || p.Dir != filepath.Join(dir, "storbench-labels") {
		t.Errorf("prepared %+v", p)
	}
	if fi, err := os.Stat(p.Dir); err != nil || !fi.IsDir() {
		t.Errorf("work directory %s: %v", p.Dir, err)
	}
	kernel := strings.TrimSpace(output(t, p.Cmder, "uname", "-r"))
	for k, want := range map[result.LabelKey]string{result.LabelHostname: host, result.LabelKernel: kernel} {
		if got := k.Of(p.Labels); got != want {
			t.Errorf("label %s = %q, want %q", k, got, want)
		}
	}
	for _, k := range []result.LabelKey{result.LabelArch, result.LabelCPUModel, result.LabelFSType, result.LabelMountPoint} {
		if k.Of(p.Labels) == "" {
			t.Errorf("no label %s in %v", k, p.Labels)
		}
	}
}

// TestTargetTelemetry: the host is sampled through one streaming session
// while fio writes there: CPU time and the writes on the target's disk are
// seen, and Cleanup ends the session and removes the local copy.
func TestTargetTelemetry(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	h := newHost(t)
	dir := t.TempDir()
	// Mirrors other runs left (a run killed outright cannot remove its
	// own) are not this test's.
	// The runner's copies go under TMPDIR: a directory of this test's own,
	// so other packages' SSH runs, going on meanwhile, are not counted.
	t.Setenv("TMPDIR", t.TempDir())
	before, _ := filepath.Glob(filepath.Join(os.TempDir(), "storbench-ssh-telemetry-*"))
	streams := func() int { return streamsBelow(t, h) }
	sub := sshSubject(t, h, dir, writeNeed("tel"), false)
	p, err := sub.Target.Prepare(context.Background(), sub.Need)
	if err != nil {
		t.Fatal(err)
	}
	if p.Telemetry == nil {
		t.Fatal("no telemetry offered")
	}
	sampler, err := p.Telemetry()
	if err != nil || sampler == nil {
		t.Fatalf("no sampler made: %v", err)
	}
	if streams() == 0 {
		t.Error("no streaming session on the host")
	}
	rec := sampler.Start()
	out := output(t, p.Cmder, "fio", "--name=w", "--rw=write", "--bs=64k", "--size=32m", "--direct=1", "--time_based", "--runtime=2", "--filename="+filepath.Join(p.Dir, TestFileName))
	tel := rec.Stop()
	if tel == nil {
		t.Fatalf("nothing recorded (fio said %s)", out)
	}
	t.Logf("device %q, missing %v, totals %+v", tel.Device, tel.Missing, tel.Totals)
	if tel.Totals.Elapsed < 2*time.Second || tel.Totals.CPUBusy <= 0 {
		t.Errorf("recorded %+v", tel.Totals)
	}
	if dev := result.LabelDevice.Of(p.Labels); dev != "" && tel.Totals.DiskWriteBytes < 32<<20 {
		t.Errorf("%s: %d bytes written seen on %s, fio wrote at least 32 MiB", dir, tel.Totals.DiskWriteBytes, dev)
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	mirrors, _ := filepath.Glob(filepath.Join(os.TempDir(), "storbench-ssh-telemetry-*"))
	for _, m := range mirrors {
		if !slices.Contains(before, m) {
			t.Errorf("telemetry copy left: %s", m)
		}
	}
	waitFor(t, "the streaming session to end", 10*time.Second, func() bool { return streams() == 0 })
}

// streamsBelow counts the processes running stream.sh below h's sshd
// (other tests' hosts may stream at the same time).
func streamsBelow(t *testing.T, h host) int {
	n := 0
	for _, pid := range h.srv.Processes(t) {
		if b, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil && strings.Contains(string(b), "stream.sh INTERVAL") {
			n++
		}
	}
	return n
}
