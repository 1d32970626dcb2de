package kubetest

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Two test packages may run at a time on the one test cluster (go test
// -p 2: scripts/k8s-integration.sh runs the tests that call Shared so, and
// any tests a -run flag chooses). Every cluster test holds the cluster
// from the moment it first reaches it (ClusterTier, through Cluster or
// Env) to its end, its cleanups included:
//
//   - alone, by default: a test that stops a node, shapes or cuts a link,
//     brings Ceph or GlusterFS up, measures a disk, a link or the CPU, or
//     checks that nothing of storbench's is left anywhere needs the cluster
//     to itself;
//   - shared with the other shared tests, of its package and of one other
//     package, when its first statement is kubetest.Shared(t)
//     (k8s-integration.sh finds it so): a test that changes nothing another
//     test sees, asserts no rate or timing another test's load could move,
//     and looks only at the objects of its own run. Shared makes it a
//     parallel test (t.Parallel), so it runs beside its package's other
//     shared tests, go test's -parallel at a time.
//
// The hold is a read-write lock (flock(2)) on a file in the running
// cluster's directory, so a test binary that dies lets go of it with its
// last file. A test waiting to hold it alone goes first: it takes a
// turnstile file that every new hold passes through, so that the other
// package's shared tests cannot keep it waiting one after another. The
// shared tests of one binary that run at the same time share its hold; one
// that needs the cluster alone waits for them to end, and a shared one
// waits while a test of its binary holds it alone.

type holdMode int

const (
	holdShared holdMode = iota + 1
	holdAlone
)

func (m holdMode) String() string {
	if m == holdShared {
		return "shared"
	}
	return "alone"
}

var hold = struct {
	mu    sync.Mutex
	ended *sync.Cond // broadcast when the binary's last holding test ends
	mode  holdMode
	tests map[string]holdMode // the binary's holding tests, by top-level name
	f     *os.File            // the locked file while any test holds it
}{tests: map[string]holdMode{}}

func init() { hold.ended = sync.NewCond(&hold.mu) }

// Shared holds the test cluster shared with the other shared tests for the
// rest of the test (see above for what such a test may do), and makes the
// test parallel (t.Parallel: it sets no environment variable and changes
// no working directory), so that it waits for its binary's other tests and
// runs beside its package's other shared tests. It is the test's first
// statement: scripts/k8s-integration.sh finds the tests that share the
// cluster by that line, and a test that holds the cluster alone already
// fails here, since the call would otherwise say nothing. Outside the
// cluster tier it skips as ClusterTier does.
func Shared(t testing.TB) {
	t.Helper()
	if p, ok := t.(interface{ Parallel() }); ok {
		p.Parallel() // before the hold: a paused test must hold nothing
	}
	clusterTier(t, "KUBECONFIG", holdShared)
}

// holdCluster gives the test its hold of the cluster, in the mode it asks
// for (alone when it asks for none), unless the test (or its top-level
// test) holds it already. Without
// a running cluster's directory there is no other package to share with,
// and nothing is held.
func holdCluster(t testing.TB, want holdMode) {
	t.Helper()
	dir := runDir()
	if dir == "" {
		return
	}
	top, _, _ := strings.Cut(t.Name(), "/")
	hold.mu.Lock()
	defer hold.mu.Unlock()
	if have, ok := hold.tests[top]; ok {
		if have == holdAlone && want == holdShared {
			t.Fatalf("%s holds the test cluster alone and then asks to share it: kubetest.Shared must come before the test first reaches the cluster", top)
		}
		return
	}
	if want == 0 {
		want = holdAlone
	}
	for len(hold.tests) > 0 && (want == holdAlone || hold.mode == holdAlone) {
		hold.ended.Wait()
	}
	if len(hold.tests) == 0 {
		start := time.Now()
		f, err := lockClusterFile(dir, want)
		if err != nil {
			t.Fatalf("holding the test cluster %s: %v", want, err)
		}
		if waited := time.Since(start); waited > time.Second {
			t.Logf("waited %.1f s to hold the test cluster %s (another package's test held it)", waited.Seconds(), want)
		}
		hold.f, hold.mode = f, want
	}
	hold.tests[top] = want
	t.Cleanup(func() {
		hold.mu.Lock()
		defer hold.mu.Unlock()
		delete(hold.tests, top)
		if len(hold.tests) == 0 {
			hold.f.Close() // lets go of the lock
			hold.f, hold.mode = nil, 0
			hold.ended.Broadcast()
		}
	})
}

// runDir is the running cluster's directory (that of CLUSTER_ENV, else of
// KUBECONFIG), which cluster.sh down removes with the lock files.
func runDir() string {
	for _, v := range []string{"CLUSTER_ENV", "KUBECONFIG"} {
		if p := os.Getenv(v); p != "" {
			return filepath.Dir(p)
		}
	}
	return ""
}

// lockClusterFile locks dir's tests.lock shared or exclusively, through the
// turnstile tests.turnstile, waiting as long as it takes.
func lockClusterFile(dir string, mode holdMode) (*os.File, error) {
	turn, err := os.OpenFile(filepath.Join(dir, "tests.turnstile"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	defer turn.Close() // lets the next one through
	if err := flock(turn, syscall.LOCK_EX); err != nil {
		return nil, fmt.Errorf("%s: %w", turn.Name(), err)
	}
	f, err := os.OpenFile(filepath.Join(dir, "tests.lock"), os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	how := syscall.LOCK_EX
	if mode == holdShared {
		how = syscall.LOCK_SH
	}
	if err := flock(f, how); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", f.Name(), err)
	}
	return f, nil
}

func flock(f *os.File, how int) error {
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if !errors.Is(err, syscall.EINTR) {
			return err
		}
	}
}
