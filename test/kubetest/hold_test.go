package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// The cluster's lock between test binaries: shared holds go together, a
// hold alone waits for them, and once it waits, a new shared hold waits
// behind it (flock's locks belong to the open file, so two opens in one
// process stand for two binaries).
func TestLockWritersFirst(t *testing.T) {
	testenv.Measures(t)
	dir := t.TempDir()
	take := func(mode holdMode) <-chan *os.File {
		got := make(chan *os.File, 1)
		go func() {
			f, err := lockClusterFile(dir, mode)
			if err != nil {
				t.Error(err)
			}
			got <- f
		}()
		return got
	}
	given := func(c <-chan *os.File) *os.File {
		select {
		case f := <-c:
			return f
		case <-time.After(300 * time.Millisecond):
			return nil
		}
	}
	a, err := lockClusterFile(dir, holdShared)
	if err != nil {
		t.Fatal(err)
	}
	b, err := lockClusterFile(dir, holdShared)
	if err != nil {
		t.Fatal("a second shared hold waited:", err)
	}
	b.Close()
	alone := take(holdAlone)
	if given(alone) != nil {
		t.Fatal("a hold alone was given while a shared one was held")
	}
	shared := take(holdShared)
	if given(shared) != nil {
		t.Fatal("a shared hold went ahead of the hold alone that waited before it")
	}
	a.Close()
	w := given(alone)
	if w == nil {
		t.Fatal("the hold alone was not given when the shared one ended")
	}
	if given(shared) != nil {
		t.Fatal("a shared hold was given beside the hold alone")
	}
	w.Close()
	r := given(shared)
	if r == nil {
		t.Fatal("the shared hold was not given when the hold alone ended")
	}
	r.Close()
}

// A test holds the cluster once, however often it reaches it, until its
// end; asking to share it after holding it alone fails, saying what to do.
func TestHoldOncePerTest(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLUSTER_ENV", filepath.Join(dir, "cluster.env"))
	r := &holdRecorder{TB: t, name: "TestClusterX/sub"}
	holdCluster(r, 0)
	holdCluster(r, 0)
	if len(r.cleanups) != 1 || hold.tests["TestClusterX"] != holdAlone {
		t.Fatalf("after two calls: %d cleanups, held %v; want 1 cleanup, alone", len(r.cleanups), hold.tests["TestClusterX"])
	}
	if err := tryLock(dir, syscall.LOCK_SH); err == nil {
		t.Error("another binary could share the cluster held alone")
	}
	func() {
		defer func() {
			if v := recover(); v != nil && v != r {
				panic(v)
			}
		}()
		holdCluster(r, holdShared)
	}()
	if !strings.Contains(r.fatal, "kubetest.Shared must come before") {
		t.Errorf("sharing after the hold alone: %q", r.fatal)
	}
	r.cleanups[0]()
	if len(hold.tests) != 0 || hold.f != nil {
		t.Fatalf("after the test's end the binary still holds the cluster: %v", hold.tests)
	}
	if err := tryLock(dir, syscall.LOCK_EX); err != nil {
		t.Error("the cluster is still held after the test's end:", err)
	}

	s := &holdRecorder{TB: t, name: "TestClusterY"}
	holdCluster(s, holdShared)
	holdCluster(s, 0) // Cluster or Env after Shared: the hold stays shared
	if s.fatal != "" || hold.tests["TestClusterY"] != holdShared {
		t.Fatalf("Shared, then the cluster reached: %q, held %v", s.fatal, hold.tests["TestClusterY"])
	}
	if err := tryLock(dir, syscall.LOCK_SH); err != nil {
		t.Error("another binary could not share a shared hold:", err)
	}
	if err := tryLock(dir, syscall.LOCK_EX); err == nil {
		t.Error("another binary could hold alone a cluster held shared")
	}
	s.cleanups[0]()
}

// Within one binary, a shared test waits while another test holds the
// cluster alone, and a test that needs it alone waits for the shared ones
// to end; shared tests hold it together.
func TestHoldInOneBinary(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("CLUSTER_ENV", filepath.Join(dir, "cluster.env"))
	later := func(r *holdRecorder, mode holdMode) chan struct{} {
		done := make(chan struct{})
		go func() { holdCluster(r, mode); close(done) }()
		return done
	}
	waits := func(what string, done chan struct{}) {
		t.Helper()
		select {
		case <-done:
			t.Fatalf("%s was given at once", what)
		case <-time.After(200 * time.Millisecond):
		}
	}
	given := func(what string, done chan struct{}) {
		t.Helper()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Fatalf("%s was not given", what)
		}
	}
	a := &holdRecorder{TB: t, name: "TestClusterAlone"}
	holdCluster(a, 0)
	s1, s2 := &holdRecorder{TB: t, name: "TestClusterS1"}, &holdRecorder{TB: t, name: "TestClusterS2"}
	d1 := later(s1, holdShared)
	waits("a shared hold beside a hold alone", d1)
	a.cleanups[0]()
	given("the shared hold, once the hold alone ended,", d1)
	given("a second shared hold beside the first", later(s2, holdShared))
	b := &holdRecorder{TB: t, name: "TestClusterAlone2"}
	db := later(b, 0)
	waits("a hold alone beside two shared ones", db)
	s1.cleanups[0]()
	waits("a hold alone beside one shared one", db)
	s2.cleanups[0]()
	given("the hold alone, once the shared ones ended,", db)
	b.cleanups[0]()
	if len(hold.tests) != 0 || hold.f != nil {
		t.Fatalf("the binary still holds the cluster: %v", hold.tests)
	}
}

// tryLock takes dir's lock file as another binary would, without waiting,
// and lets go of it at once.
func tryLock(dir string, how int) error {
	f, err := os.OpenFile(filepath.Join(dir, "tests.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), how|syscall.LOCK_NB); err != nil {
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return errors.New("held")
		}
		return err
	}
	return nil
}

type holdRecorder struct {
	testing.TB
	name     string
	fatal    string
	cleanups []func()
}

func (r *holdRecorder) Helper()          {}
func (r *holdRecorder) Name() string     { return r.name }
func (r *holdRecorder) Cleanup(f func()) { r.cleanups = append(r.cleanups, f) }
func (r *holdRecorder) Fatalf(format string, args ...any) {
	r.fatal = fmt.Sprintf(format, args...)
	panic(r)
}

// scripts/k8s-integration.sh finds the tests that share the cluster by a
// kubetest.Shared(t) line right under their func line, and those that
// measure by a kubetest.Measures(t) line: one anywhere else would run with
// the tests that hold the cluster alone, unnoticed.
func TestSharedIsTheFirstStatement(t *testing.T) {
	root := testenv.SourcePath(t, ".")
	self := filepath.Join(root, "test", "kubetest", "hold_test.go")
	n := 0
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, "_test.go") || path == self {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		lines := strings.Split(string(b), "\n")
		for i, l := range lines {
			for _, marker := range []string{"kubetest.Shared(", "kubetest.Measures("} {
				if !strings.Contains(l, marker) {
					continue
				}
				if i == 0 || !strings.HasPrefix(lines[i-1], "func "+Prefix) || !strings.HasPrefix(l, "\t"+marker+"t)") {
					rel, _ := filepath.Rel(root, path)
					t.Errorf("%s:%d: %st) must be the first statement of a %s... function", rel, i+1, marker, Prefix)
				}
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no test calls kubetest.Shared: the walk found nothing")
	}
}
