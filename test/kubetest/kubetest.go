// Package kubetest connects integration tests to the test cluster that
// scripts/k8s-integration.sh brings up (test/cluster/cluster.sh), and to nothing
// else. The cluster tier is chosen by name: every test that reaches the
// cluster is called TestCluster... (Prefix), which k8s-integration.sh runs
// (go test -run '^TestCluster'); a test of another name that asks for the
// cluster fails at once, in every tier, so the tier cannot drift from a list.
// Each test holds the cluster alone or, having called Shared, shared with
// one test of another package (hold.go); k8s-integration.sh runs the
// tests that share it first, two packages at a time.
package kubetest

import (
	"os"
	"strings"
	"testing"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Cluster returns a client of the loopback cluster and its kubeconfig's
// path; it skips when the test does not run under k8s-integration.sh, and
// fails on a cluster anywhere but 127.0.0.1.
func Cluster(t *testing.T) (kubernetes.Interface, string) {
	t.Helper()
	ClusterTier(t, "KUBECONFIG")
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		t.Fatal("STORBENCH_K8S_INTEGRATION=1 but KUBECONFIG is not set")
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(cfg.Host, "127.0.0.1") && !strings.Contains(cfg.Host, "localhost") {
		t.Fatalf("refusing to test against %s: integration tests only talk to 127.0.0.1", cfg.Host)
	}
	c, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, kc
}

// Prefix starts the name of every test that uses the cluster.
const Prefix = "TestCluster"

// ClusterTier checks that the test is named as a cluster test (Prefix),
// then skips it outside scripts/k8s-integration.sh (which sets
// STORBENCH_K8S_INTEGRATION=1 and the variable sets) and always in the
// unit tier (go test -short). The skip is not a missing prerequisite:
// k8s-integration.sh runs these tests where nothing may skip. In the tier,
// the test then holds the cluster to its end: alone, unless it called
// Shared first (hold.go).
func ClusterTier(t testing.TB, sets string) {
	t.Helper()
	clusterTier(t, sets, 0)
}

func clusterTier(t testing.TB, sets string, mode holdMode) {
	t.Helper()
	if top, _, _ := strings.Cut(t.Name(), "/"); !strings.HasPrefix(top, Prefix) {
		t.Fatalf("%s uses the test cluster, so its name must start with %s: scripts/k8s-integration.sh picks the cluster tier by that name", top, Prefix)
	}
	if testing.Short() {
		t.Skip("needs the test cluster: the cluster tier (scripts/k8s-integration.sh), left out of the unit tier (-short)")
	}
	if os.Getenv("STORBENCH_K8S_INTEGRATION") != "1" {
		t.Skipf("needs a cluster: run scripts/k8s-integration.sh (sets STORBENCH_K8S_INTEGRATION=1 and %s)", sets)
	}
	holdCluster(t, mode)
}
