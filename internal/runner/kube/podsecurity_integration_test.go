package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/test/kubetest"
)

// A run in a namespace whose Pod Security level is restricted (the API
// server's built-in admission, on by default) succeeds: the usual fio pod
// is refused, the same pod under the restricted profile runs (non-root,
// its volume writable through fsGroup), and the run says so; the result
// carries the label. Cost on the harness: 8 s.
func TestClusterRestrictedNamespaceRunFallsBack(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	start := time.Now()
	class := unique("sb-psa")
	e.class(t, class)
	e.realPV(t, class, t.TempDir(), "1Gi", false)
	ns := unique("sb-restricted")
	_, err := e.client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{kubekit.PodSecurityEnforce: "restricted"}}}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	db := filepath.Join(t.TempDir(), "r.db")
	suite := "name: one\nworkloads:\n  - {name: seqwrite, rw: write, bs: 1MiB, size: 8MiB, runtime: 1s, ioengine: psync}\n"
	r := storbench(context.Background(), t, "run", "--db", db, "--suite", suiteFile(t, suite), "--target", "k8s:"+class,
		"--nodes", realNode, "--namespace", ns, "--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	out := parseRun(t, r)
	if len(out.Results) != 1 || out.Results[0].Status != result.StatusComplete {
		t.Fatalf("results: %+v\nstderr: %s", out.Results, r.errOut)
	}
	if got := result.LabelPodSecurity.Of(out.Results[0].Labels); got != "restricted" {
		t.Errorf("label %s = %q", result.LabelPodSecurity, got)
	}
	for _, want := range []string{`enforces "restricted"`, "ran under the restricted profile", "no host-network sampler pods"} {
		if !strings.Contains(r.errOut, want) {
			t.Errorf("the run does not say %q:\n%s", want, r.errOut)
		}
	}
	if left := e.labelledOf(t, class); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
	os.Remove(db)
	t.Logf("restricted namespace run: %s", time.Since(start).Round(time.Second))
}
