// Package kubetest connects integration tests to the test cluster that
// scripts/k8s-integration.sh brings up (test/cluster/cluster.sh), and to nothing
// else.
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
	if os.Getenv("STORBENCH_K8S_INTEGRATION") != "1" {
		// Not a missing prerequisite: scripts/k8s-integration.sh runs these
		// tests against the loopback cluster, where nothing may skip.
		t.Skip("needs a cluster: run scripts/k8s-integration.sh (sets STORBENCH_K8S_INTEGRATION=1 and KUBECONFIG)")
	}
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
