package classcheck_test

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// EnvAppFitCluster set to 1 runs the app-fit checks on the test cluster.
const EnvAppFitCluster = "STORBENCH_APPFIT_CLUSTER"

// appFit runs the app-fit check alone on class with the storbench built
// from this tree copied into the pods, and returns its check and the
// outcome of each semantic.
func appFit(t *testing.T, class string) (*classcheck.Check, map[string]result.Result) {
	t.Helper()
	if testing.Short() {
		t.Skip("the test cluster")
	}
	if os.Getenv(EnvAppFitCluster) != "1" {
		// Not yet in the cluster tier: on the harness's netfs class both pods
		// reached one sshfs mount (locks shared, not the two mounts the test
		// expects), each check took about 5 minutes, and a Released PV was
		// left behind (docs/appfit.md, "On the test cluster").
		t.Skipf("on demand: %s=1", EnvAppFitCluster)
	}
	var bins testenv.Binaries
	t.Cleanup(func() {
		if err := bins.Remove(); err != nil {
			t.Error(err)
		}
	})
	bin := bins.Build(t, "github.com/storbench/storbench/cmd/storbench")
	start := time.Now()
	rep := qualify(t, class, classcheck.Options{Only: []string{classcheck.CheckAppFit}, AppBinary: bin})
	t.Logf("app-fit on %s: %s wall", class, time.Since(start).Round(time.Second))
	ch := rep.Check(classcheck.CheckAppFit)
	if ch == nil {
		t.Fatal("no app-fit check")
	}
	t.Logf("%s: %s", ch.Outcome, ch.Reason)
	got := map[string]result.Result{}
	for _, r := range rep.Results() {
		if r.Round == result.RoundApp {
			got[r.Workload] = r
			t.Logf("%s: %s %s %s", r.Workload, result.LabelCheckOutcome.Of(r.Labels), result.LabelCheckReason.Of(r.Labels), result.LabelAppClients.Of(r.Labels))
		}
	}
	return ch, got
}

// netfs mounts its export once per node (sshfs): two pods on two nodes
// share the files but not the locks.
func TestClusterAppFitNetfsLocksNotShared(t *testing.T) {
	ch, got := appFit(t, "netfs")
	lock := got["appfit:fcntl-lock"]
	if result.LabelCheckOutcome.Of(lock.Labels) != "broken" || !strings.Contains(result.LabelCheckReason.Of(lock.Labels), "both clients held the same write lock") ||
		!strings.HasPrefix(result.LabelAppClients.Of(lock.Labels), "one client on ") {
		t.Errorf("fcntl-lock on netfs: %v", lock.Labels)
	}
	if !strings.Contains(ch.Reason, "file locks are not shared between nodes") {
		t.Errorf("app-fit on netfs: %s %q", ch.Outcome, ch.Reason)
	}
}

// local-path is ReadWriteOnce: two processes in one pod, whose locks work.
func TestClusterAppFitLocalPathLocksWork(t *testing.T) {
	ch, got := appFit(t, "local-path")
	lock := got["appfit:fcntl-lock"]
	if result.LabelCheckOutcome.Of(lock.Labels) != "works" || !strings.HasPrefix(result.LabelAppClients.Of(lock.Labels), "two processes on ") {
		t.Errorf("fcntl-lock on local-path: %v", lock.Labels)
	}
	if ch.Outcome != classcheck.Works || !strings.Contains(ch.Reason, "locks work") {
		t.Errorf("app-fit on local-path: %s %q", ch.Outcome, ch.Reason)
	}
	if _, ok := got["sqlite:wal-full"]; !ok {
		t.Error("no SQLite WAL/FULL result")
	}
}

// The test driver's no-fsync mode publishes its volume through an overlay
// mounted volatile: fsync returns without writing; the check catches it.
func TestClusterAppFitTestCSINoFsync(t *testing.T) {
	ch, got := appFit(t, "testcsi-no-fsync")
	f := got["appfit:fsync-read-back"]
	if result.LabelCheckOutcome.Of(f.Labels) != "broken" || ch.Outcome != classcheck.Failed {
		t.Errorf("fsync on testcsi-no-fsync: %v; check %s %q", f.Labels, ch.Outcome, ch.Reason)
	}
}
