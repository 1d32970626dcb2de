package appfit

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

func probe(t *testing.T, a, b Client) *Report {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	rep, err := Probe(ctx, ProbeOptions{First: a, Second: b, ID: "t" + strconv.Itoa(os.Getpid()), Timeout: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for _, an := range rep.Answers {
		t.Logf("%s: %s: %s %q", an.Name, an.Outcome, an.Seen, an.Evidence)
	}
	for _, c := range []Client{a, b} {
		leftovers(t, c.Dir)
	}
	return rep
}

// leftovers fails the test when the probe left anything in dir.
func leftovers(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), WorkDirPrefix) {
			t.Errorf("left behind: %s", filepath.Join(dir, e.Name()))
		}
	}
}

func want(t *testing.T, rep *Report, name string, o Outcome, seen string) {
	t.Helper()
	a := rep.Answer(name)
	switch {
	case a == nil:
		t.Errorf("%s: no answer", name)
	case a.Outcome != o:
		t.Errorf("%s: %s (%s), want %s", name, a.Outcome, a.Seen, o)
	case !strings.Contains(a.Seen, seen):
		t.Errorf("%s: seen %q, want it to say %q", name, a.Seen, seen)
	}
}

// On a disk filesystem every semantic works, and fsync's write is counted
// on the loop device under it.
func TestProbeExt4(t *testing.T) {
	if testing.Short() {
		t.Skip("loop device, mounts and two storbench processes")
	}
	dir := ext4(t)
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	for _, n := range Semantics {
		want(t, rep, n, Works, "")
	}
	if f := rep.Answer(FsyncReadBack); f != nil && !strings.Contains(strings.Join(f.Evidence, " "), "disk loop") {
		t.Errorf("fsync's evidence does not name the loop device: %q", f.Evidence)
	}
}

// An overlay mounted volatile drops fsync: the disk under it wrote nothing
// while fsync returned.
func TestProbeDroppedFsync(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("loop device, mounts and two storbench processes")
	}
	dir := mountVolatileOverlay(t, ext4(t))
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	want(t, rep, FsyncReadBack, Broken, "fsync returned after")
	want(t, rep, FcntlLock, Works, "")
}

// Two sshfs mounts of one export, as the netfs class is mounted on each
// node: each FUSE mount keeps its own locks, so neither client sees the
// other's.
func TestProbeTwoMounts(t *testing.T) {
	if testing.Short() {
		t.Skip("sshfs mounts and two storbench processes")
	}
	a, b := sshfsPair(t, t.TempDir())
	rep := probe(t, localClient(t, a), localClient(t, b))
	want(t, rep, FcntlLock, Broken, "both clients held the same write lock")
	want(t, rep, Flock, Broken, "both clients held the same write lock")
	want(t, rep, FsyncReadBack, Works, "cannot be counted")
	// and through one mount the kernel sees both clients' locks
	one := probe(t, localClient(t, a), localClient(t, a))
	want(t, one, FcntlLock, Works, "refused to the second client")
}

// The work directory is removed when a client fails and when the probe
// is cancelled.
func TestProbeCleansUp(t *testing.T) {
	if testing.Short() {
		t.Skip("two storbench processes")
	}
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir")
	_, err := Probe(context.Background(), ProbeOptions{First: localClient(t, dir), Second: localClient(t, missing), ID: "fail", Timeout: 2 * time.Second})
	if err == nil {
		t.Error("a second client that never saw the work directory gave no error")
	}
	leftovers(t, dir)
	ctx, cancel := context.WithTimeout(context.Background(), 150*time.Millisecond)
	defer cancel()
	_, err = Probe(ctx, ProbeOptions{First: localClient(t, dir), Second: localClient(t, missing), ID: "cancel", Timeout: time.Minute})
	if err == nil {
		t.Error("a cancelled probe gave no error")
	}
	leftovers(t, dir)
}

// Where no disk can be counted (the upper directory on tmpfs here, out of
// a container's sight on a cluster), a volatile overlay is known by its
// mount options.
func TestProbeVolatileOverlayWithoutDisk(t *testing.T) {
	if testing.Short() {
		t.Skip("mounts and two storbench processes")
	}
	dir := mountVolatileOverlay(t, tmpfs(t))
	rep := probe(t, localClient(t, dir), localClient(t, dir))
	want(t, rep, FsyncReadBack, Broken, "overlay mounted volatile")
}
