package local

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
	"golang.org/x/sys/unix"
)

func writeNeed(id string) runner.Need {
	return runner.Need{RunID: id, FileSize: 8 << 20, Writers: []string{"w"}, Direct: true}
}

// dirSubject is a directory target; leftovers are entries that were not
// there before.
func dirSubject(t *testing.T, dir string, need runner.Need) runnertest.Subject {
	before := runnertest.Listing(dir)
	return runnertest.Subject{
		Target: NewTarget(dir, Options{}),
		Need:   need,
		Leftovers: func() []string {
			var left []string
			for _, e := range strings.Split(runnertest.Listing(dir), "\n") {
				if e != "" && !strings.Contains("\n"+before+"\n", "\n"+e+"\n") {
					left = append(left, e)
				}
			}
			return left
		},
		State: func() string { return runnertest.Listing(dir) },
	}
}

func TestDirectoryTargetConformance(t *testing.T) {
	testenv.Fio(t)
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject { return dirSubject(t, t.TempDir(), writeNeed("conf")) },
		Unsafe: []runnertest.Unsafe{
			{Name: "missing directory", Want: "no such file", Make: func(t *testing.T) runnertest.Subject {
				return dirSubject(t, filepath.Join(t.TempDir(), "missing"), writeNeed("r"))
			}},
			{Name: "not enough space", Want: "not enough free space", Make: func(t *testing.T) runnertest.Subject {
				testenv.Root(t)
				dir := t.TempDir()
				if err := unix.Mount("tmpfs", dir, "tmpfs", 0, "size=16m"); err != nil {
					t.Fatalf("mounting a tmpfs: %v", err)
				}
				t.Cleanup(func() { unix.Unmount(dir, 0) })
				need := writeNeed("r")
				need.FileSize = 64 << 20
				return dirSubject(t, dir, need)
			}},
			{Name: "read-only mount", Want: "mounted read-only", Make: func(t *testing.T) runnertest.Subject {
				testenv.Root(t)
				dir := t.TempDir()
				if err := unix.Mount("tmpfs", dir, "tmpfs", unix.MS_RDONLY, "size=16m"); err != nil {
					t.Fatalf("mounting a read-only tmpfs: %v", err)
				}
				t.Cleanup(func() { unix.Unmount(dir, 0) })
				return dirSubject(t, dir, writeNeed("r"))
			}},
			{Name: "read-only bind mount", Want: "mounted read-only", Make: func(t *testing.T) runnertest.Subject {
				testenv.Root(t)
				src, dir := t.TempDir(), t.TempDir()
				safetytest.Run(t, "mount", "--bind", src, dir)
				t.Cleanup(func() { safetytest.Run(t, "umount", dir) })
				safetytest.Run(t, "mount", "-o", "remount,bind,ro", dir)
				return dirSubject(t, dir, writeNeed("r"))
			}},
			{Name: "work directory exists", Want: "file exists", PrepareOnly: true, Make: func(t *testing.T) runnertest.Subject {
				// Another run's directory: Prepare must fail and remove
				// nothing of it.
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "storbench-r", "keep"), 0o755); err != nil {
					t.Fatal(err)
				}
				return dirSubject(t, dir, writeNeed("r"))
			}},
		},
	})
}

// deviceSubject is a device target; leftovers are exclusive holds this
// process still has on it.
func deviceSubject(t *testing.T, dev string, destructive bool) runnertest.Subject {
	var opts Options
	if destructive {
		opts.Destructive = []string{dev}
	}
	return runnertest.Subject{
		Target:    NewTarget(dev, opts),
		Need:      writeNeed("conf"),
		Leftovers: func() []string { return openFDs(dev) },
		State:     func() string { return safetytest.Sum(t, dev) },
	}
}

// openFDs lists this process's open descriptors of dev.
func openFDs(dev string) []string {
	entries, _ := os.ReadDir("/proc/self/fd")
	var out []string
	for _, e := range entries {
		if l, err := os.Readlink("/proc/self/fd/" + e.Name()); err == nil && l == dev {
			out = append(out, "fd "+e.Name()+" on "+dev)
		}
	}
	return out
}

func TestDeviceTargetConformance(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	unsafe := []runnertest.Unsafe{
		{Name: "blank but not named", Want: "pass --destructive", Make: func(t *testing.T) runnertest.Subject {
			return deviceSubject(t, testenv.LoopDevice(t, 16<<20), false)
		}},
		{Name: "held in another mount namespace", Want: "exclusive open (EBUSY)", Make: func(t *testing.T) runnertest.Subject {
			dev := testenv.LoopDevice(t, 64<<20)
			safetytest.MountHiddenAndUnsigned(t, dev)
			return deviceSubject(t, dev, true)
		}},
		{Name: "mounted between Check and Prepare", Want: "exclusive open (EBUSY)", PrepareOnly: true, Make: func(t *testing.T) runnertest.Subject {
			dev := testenv.LoopDevice(t, 64<<20)
			safetytest.MountHiddenAndUnsigned(t, dev)
			return deviceSubject(t, dev, true)
		}},
	}
	for _, c := range safetytest.Cases() {
		switch c.Name {
		case "ext4", "xfs", "lvm2-pv", "zfs", "luks2", "gpt-4096", "two-signatures", "mounted-ext4", "active-swap", "loop-at-offset-mounted", "read-only-blank":
		default:
			continue
		}
		want := "refusing to write"
		if c.Refusal != "" {
			want = c.Refusal
		}
		unsafe = append(unsafe, runnertest.Unsafe{Name: c.Name, Want: want, Make: func(t *testing.T) runnertest.Subject {
			return deviceSubject(t, c.Device(t), true)
		}})
	}
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject {
			return deviceSubject(t, testenv.LoopDevice(t, 32<<20), true)
		},
		Unsafe: unsafe,
	})
}
