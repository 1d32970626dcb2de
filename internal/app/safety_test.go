package app

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// Safety tests use real loop devices and real filesystems; they need root.

func needRoot(t *testing.T) {
	t.Helper()
	testenv.Loop(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "mkfs")
	testenv.Tool(t, "mount", "mount", "root")
}

func sh(t *testing.T, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return strings.TrimSpace(string(out))
}

// loopDevice attaches a blank sparse file of the given size.
func loopDevice(t *testing.T, sizeMiB int) string {
	t.Helper()
	img := filepath.Join(t.TempDir(), "disk.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(int64(sizeMiB) << 20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	return testenv.AttachLoop(t, img)
}

func mounted(t *testing.T, dev string) string {
	t.Helper()
	mnt := t.TempDir()
	undo := testenv.OnInterrupt("mount "+mnt, func() { testenv.Retry(func() error { return exec.Command("umount", mnt).Run() }) })
	t.Cleanup(undo) // after the umount: an interrupt before it still finds the mount
	sh(t, "mount", dev, mnt)
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	return mnt
}

// deviceSuite's runs are refused, or checked for their labels: 500ms of
// I/O per workload will do.
const deviceSuite = `name: dev
defaults: {size: 16MiB, runtime: 500ms}
workloads:
  - {name: rr, rw: randread, bs: 4KiB, iodepth: 4}
  - {name: rw, rw: randwrite, bs: 4KiB, iodepth: 4}
`

func TestDeviceWithFilesystemIsRefusedEvenWithDestructive(t *testing.T) {
	needRoot(t)
	needFio(t)
	dev := loopDevice(t, 64)
	sh(t, "mkfs.ext4", "-q", dev)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "dev.yaml", deviceSuite)
	for _, extra := range [][]string{nil, {"--destructive", dev}} {
		inv := storbench(t, db, append([]string{"run", "--suite", suite, "--target", dev}, extra...)...)
		if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "refusing to write") || !strings.Contains(inv.stderr, "ext4") {
			t.Errorf("%v: exit %d: %s", extra, inv.code, inv.stderr)
		}
	}
	// The filesystem is intact.
	if out := sh(t, "blkid", "-p", "-o", "value", "-s", "TYPE", dev); out != "ext4" {
		t.Errorf("blkid says %q after the refusals", out)
	}
	// Mounted: refused, and the mount named.
	sh(t, "wipefs", "-q", "-a", dev)
	sh(t, "mkfs.ext4", "-q", dev)
	mnt := mounted(t, dev)
	inv := storbench(t, db, "run", "--suite", suite, "--target", dev, "--destructive", dev)
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "mounted") || !strings.Contains(inv.stderr, mnt) {
		t.Errorf("mounted device: exit %d: %s", inv.code, inv.stderr)
	}
	if runs := runsJSON(t, db); len(runs) != 0 {
		t.Errorf("refusals stored runs: %v", runs)
	}
}

func TestBlankDeviceNeedsDestructiveNamingIt(t *testing.T) {
	needRoot(t)
	needFio(t)
	dev := loopDevice(t, 64)
	other := loopDevice(t, 16)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "dev.yaml", deviceSuite)

	inv := storbench(t, db, "run", "--suite", suite, "--target", dev)
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "pass --destructive "+dev) || !strings.Contains(inv.stderr, "rw write") {
		t.Errorf("without --destructive: exit %d: %s", inv.code, inv.stderr)
	}
	inv = storbench(t, db, "run", "--suite", suite, "--target", dev, "--destructive", other)
	if inv.code != cli.ExitUsage {
		t.Errorf("--destructive naming another device: exit %d: %s", inv.code, inv.stderr)
	}
	// Read workloads alone need no permission.
	inv = storbench(t, db, "run", "--suite", suite, "--workloads", "rr", "--target", dev)
	if inv.code != 0 {
		t.Errorf("read-only on a blank device: exit %d: %s", inv.code, inv.stderr)
	}
	// A raw fio job that names the device is held to the same rule.
	job := writeFile(t, dir, "dev.fio", "[w]\nfilename="+dev+"\nrw=randwrite\nbs=4k\nsize=4m\nruntime=1\ntime_based\n")
	inv = storbench(t, db, "run", "--fio-job", job, "--target", t.TempDir())
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "pass --destructive "+dev) {
		t.Errorf("raw job writing to the device: exit %d: %s", inv.code, inv.stderr)
	}
	inv = storbench(t, db, "run", "--suite", suite, "--target", dev, "--destructive", dev, "--output", "json")
	if inv.code != 0 {
		t.Fatalf("with --destructive: exit %d: %s", inv.code, inv.stderr)
	}
	if !strings.Contains(inv.stdout, `"target_kind": "device"`) || !strings.Contains(inv.stdout, `"device": "loop`) {
		t.Errorf("device labels missing:\n%s", inv.stdout)
	}
}

func TestTinyFilesystemReducesOrRefuses(t *testing.T) {
	needRoot(t)
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "big.yaml", `name: big
defaults: {size: 64MiB, runtime: 1s}
workloads:
  - {name: sw, rw: write, bs: 1MiB, iodepth: 4}
`)

	// 48 MiB: 90% leaves room for a reduced file above the 32 MiB floor.
	devA := loopDevice(t, 48)
	sh(t, "mkfs.ext4", "-q", "-m", "0", devA)
	mntA := mounted(t, devA)
	inv := storbench(t, db, "run", "--suite", suite, "--target", mntA)
	if inv.code != 0 || !strings.Contains(inv.stderr, "test file reduced from 64.0 MiB") {
		t.Fatalf("reduced size: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	assertEmptyDir(t, mntA+"/lost+found")
	entries, _ := os.ReadDir(mntA)
	for _, e := range entries {
		if e.Name() != "lost+found" {
			t.Errorf("left behind: %s", e.Name())
		}
	}

	// 16 MiB: below the floor, a clear error and nothing written.
	devB := loopDevice(t, 16)
	sh(t, "mkfs.ext4", "-q", devB)
	mntB := mounted(t, devB)
	inv = storbench(t, db, "run", "--suite", suite, "--target", mntB)
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "not enough free space") || !strings.Contains(inv.stderr, "90% full") {
		t.Errorf("tiny fs: exit %d: %s", inv.code, inv.stderr)
	}
}

// TestHostileDevicesRefusedThroughTheCLI runs storbench on every device of
// the hostile corpus with --destructive naming it, through a suite and a
// raw fio job, with blkid on PATH and hidden from it: each is refused
// (exit 2) and the device's sha256 is unchanged.
func TestHostileDevicesRefusedThroughTheCLI(t *testing.T) {
	needRoot(t)
	fioPath := testenv.Fio(t)
	// A PATH holding fio alone: storbench must then rely on its own check.
	noBlkid := t.TempDir()
	if err := os.Symlink(fioPath, filepath.Join(noBlkid, "fio")); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "dev.yaml", deviceSuite)
	cases := safetytest.Cases()
	ran, refused := 0, 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			ran++
			dev := c.Device(t)
			before := safetytest.Sum(t, dev)
			job := writeFile(t, t.TempDir(), "dev.fio", "[w]\nfilename="+dev+"\nrw=randwrite\nbs=4k\nsize=4m\nruntime=1\ntime_based\n")
			path := os.Getenv("PATH")
			for _, p := range []struct{ name, path string }{{"blkid", path}, {"built-in check", noBlkid}} {
				t.Setenv("PATH", p.path)
				for _, args := range [][]string{
					{"run", "--suite", suite, "--target", dev, "--destructive", dev},
					{"run", "--fio-job", job, "--target", t.TempDir(), "--destructive", dev},
				} {
					inv := storbench(t, db, args...)
					if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "refusing to write") {
						t.Errorf("%s: %v: exit %d: %s", p.name, args[1], inv.code, inv.stderr)
					}
				}
			}
			t.Setenv("PATH", path)
			if after := safetytest.Sum(t, dev); after != before {
				t.Errorf("device changed: sha256 %s -> %s", before, after)
			}
			if !t.Failed() {
				refused++
			}
		})
	}
	if runs := runsJSON(t, db); len(runs) != 0 {
		t.Errorf("refusals stored runs: %v", runs)
	}
	t.Logf("hostile device corpus through the CLI: %d cases, %d run, %d refused with the device unchanged", len(cases), ran, refused)
}

// TestDeviceHeldElsewhereIsRefusedByTheExclusiveOpen: a filesystem mounted
// in another mount namespace, its superblock magic erased, looks blank to
// every check storbench reads; the exclusive open refuses it before the run
// (exit 2) and nothing is written or stored.
func TestDeviceHeldElsewhereIsRefusedByTheExclusiveOpen(t *testing.T) {
	needRoot(t)
	needFio(t)
	dev := testenv.LoopDevice(t, 64<<20)
	safetytest.MountHiddenAndUnsigned(t, dev)
	before := safetytest.Sum(t, dev)
	dir := t.TempDir()
	suite := writeFile(t, dir, "dev.yaml", deviceSuite)
	db := filepath.Join(dir, "r.db")
	inv := storbench(t, db, "run", "--suite", suite, "--target", dev, "--destructive", dev)
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "exclusive open (EBUSY)") {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
	if runs := runsJSON(t, db); len(runs) != 0 {
		t.Errorf("the refusal stored runs: %v", runs)
	}
	if after := safetytest.Sum(t, dev); after != before {
		t.Errorf("device changed: sha256 %s -> %s", before, after)
	}
}

// TestReadOnlyDirectoryIsRefusedBeforeTheRun: exit 2, the reason, nothing
// stored.
func TestReadOnlyDirectoryIsRefusedBeforeTheRun(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	mnt := t.TempDir()
	sh(t, "mount", "-t", "tmpfs", "-o", "ro,size=16m", "tmpfs", mnt)
	t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	db := filepath.Join(dir, "r.db")
	inv := storbench(t, db, "run", "--suite", writeFile(t, dir, "dev.yaml", deviceSuite), "--target", mnt)
	if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "mounted read-only") {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
	if runs := runsJSON(t, db); len(runs) != 0 {
		t.Errorf("the refusal stored runs: %v", runs)
	}
}

// A raw job that writes a blank device the user named holds the device
// exclusively while it runs, as a device target does: a device some other
// holder has opened exclusively (the kernel's sign of a mount, RAID or LVM
// that no other check may see) is refused and left unchanged, and the
// same job runs once the other holder lets go.
func TestRawJobClaimsTheDeviceItWrites(t *testing.T) {
	needRoot(t)
	needFio(t)
	dev := loopDevice(t, 16)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	job := writeFile(t, dir, "dev.fio", "[w]\nfilename="+dev+"\nrw=write\nbs=64k\nsize=4m\ndirect=1\n")
	before := safetytest.Sum(t, dev)

	hold, err := safety.HoldExclusive(dev)
	if err != nil {
		t.Fatal(err)
	}
	inv := storbench(t, db, "run", "--fio-job", job, "--target", t.TempDir(), "--destructive", dev)
	if inv.code == cli.ExitOK || !strings.Contains(inv.stdout+inv.stderr, "in use") {
		t.Errorf("held device: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	if after := safetytest.Sum(t, dev); after != before {
		t.Errorf("held device changed: sha256 %s -> %s", before, after)
	}
	if err := hold.Release(); err != nil {
		t.Fatal(err)
	}
	if inv := storbench(t, db, "run", "--fio-job", job, "--target", t.TempDir(), "--destructive", dev); inv.code != cli.ExitOK {
		t.Errorf("released device: exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
}
