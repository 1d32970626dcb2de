package kubetest

import (
	"os"
	"testing"
	"time"
)

// EnvBeside names the file that exists while scripts/test.sh runs work
// beside the cluster tier (the other host tests, the tools module, the
// fuzz runs, the race tier): its lanes share the CPU with the cluster's
// tests.
const EnvBeside = "STORBENCH_BESIDE_RUNNING"

// besideWait bounds how long Measures waits for that work to end.
var besideWait = 30 * time.Minute

// Measures holds the test cluster alone, as a test that asks for nothing
// does, for a test that judges what the CPU, a disk or a link limits (a
// sweep's knee, a breakdown): another process's load would change its
// verdict. It is the test's first statement: scripts/k8s-integration.sh
// runs such tests after the others that hold the cluster alone, and here
// each first waits until the work beside the cluster tier has ended (the
// file EnvBeside names is gone), saying how long it waited. Outside the
// cluster tier it skips as ClusterTier does.
func Measures(t testing.TB) {
	t.Helper()
	clusterTier(t, "KUBECONFIG", holdAlone)
	waitBesideEnded(t, os.Getenv(EnvBeside), time.Second)
}

// waitBesideEnded waits, polling every poll, until the file mark is gone;
// "" is no work beside.
func waitBesideEnded(t testing.TB, mark string, poll time.Duration) {
	t.Helper()
	if mark == "" {
		return
	}
	start := time.Now()
	for {
		_, err := os.Stat(mark)
		switch {
		case os.IsNotExist(err):
			if d := time.Since(start); d >= poll {
				t.Logf("waited %s for the work beside the cluster tier to end (%s)", d.Round(time.Second), mark)
			}
			return
		case err != nil:
			t.Fatalf("the work beside the cluster tier: %v", err)
		case time.Since(start) > besideWait:
			t.Fatalf("the work beside the cluster tier (%s) still runs after %s: this test judges what limits a run and needs the machine's CPU to itself", mark, besideWait)
		}
		time.Sleep(poll)
	}
}
