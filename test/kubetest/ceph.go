package kubetest

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

// CephUp brings Ceph with CephFS up in the test cluster for the test
// (test/cluster/ceph.sh cluster up, CEPH_FS=1: class cephfs), and down
// again at its end, checking that nothing of it is left; with a Ceph up
// already (CLUSTER_CEPH=1, or scripts/k8s-integration.sh's step for the
// tests named TestClusterCeph..., which brings one up for them all) it
// only points CEPH_CONF at it. It returns the
// ceph.conf's path. It needs Ceph's daemons, CLIs and ceph-fuse here
// (testenv.Tool: a skip, a failure in CI) and skips a cluster with fewer
// than 3 real nodes (a size-3 pool across hosts).
func CephUp(t *testing.T) string {
	t.Helper()
	for _, tool := range []string{"ceph-mon", "ceph-osd", "ceph-mgr", "ceph", "rbd"} {
		testenv.Tool(t, tool, "ceph-mon ceph-osd ceph-mgr ceph-common", "ceph")
	}
	testenv.Tool(t, "ceph-mds", "ceph-mds", "ceph")
	testenv.Tool(t, "ceph-fuse", "ceph-fuse", "ceph")
	if n := len(Env(t).Nodes()); n < 3 {
		t.Skipf("a size-3 pool across hosts needs 3 real nodes, the cluster has %d", n)
	}
	run := filepath.Dir(os.Getenv("CLUSTER_ENV"))
	conf := filepath.Join(run, "ceph", "ceph.conf")
	t.Setenv("CEPH_CONF", conf)
	if _, err := os.Stat(filepath.Join(run, "ceph", "ceph.env")); err == nil {
		t.Log("Ceph is up already (CLUSTER_CEPH=1): using it")
		return conf
	}
	script := testenv.SourcePath(t, "test/cluster/ceph.sh")
	start := time.Now()
	up := exec.Command("bash", script, "cluster", "up")
	up.Env = append(os.Environ(), "CEPH_FS=1")
	out, err := up.CombinedOutput()
	t.Cleanup(func() {
		start := time.Now()
		if out, err := exec.Command("bash", script, "cluster", "down").CombinedOutput(); err != nil {
			t.Errorf("ceph.sh cluster down: %v: %s", err, out)
		}
		t.Logf("Ceph down in %.1f s", time.Since(start).Seconds())
		if out, err := exec.Command("bash", script, "check-clean", "cluster").CombinedOutput(); err != nil {
			t.Errorf("ceph.sh check-clean cluster: %v: %s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("ceph.sh cluster up: %v: %s", err, out)
	}
	t.Logf("Ceph with CephFS up in the cluster in %.1f s", time.Since(start).Seconds())
	return conf
}
