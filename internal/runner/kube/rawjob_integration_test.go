package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/test/kubetest"
)

// kbench's job file, includes and all, runs unchanged in a real pod: the
// job file is written into the pod, fio's reading judged there, one result
// per job report, nothing left on the volume.
func TestClusterRealNodeKbenchJob(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-job")
	dir := t.TempDir()
	e.class(t, class)
	e.realPV(t, class, dir, "2Gi", false)
	db := filepath.Join(t.TempDir(), "r.db")
	job, err := filepath.Abs("../../fio/testdata/corpus/kbench/iops-quick.fio")
	if err != nil {
		t.Fatal(err)
	}
	r := storbench(context.Background(), t, "run", "--db", db, "--fio-job", job, "--target", "k8s:"+class,
		"--nodes", realNode, "--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	out := parseRun(t, r)
	var names []string
	for _, res := range out.Results {
		names = append(names, res.Workload)
		if res.Status != result.StatusComplete || len(res.Directions()) == 0 {
			t.Errorf("result %s: %s %s", res.Workload, res.Status, res.Error)
		}
	}
	if got := strings.Join(names, ","); got != "rand-read-iops,rand-write-iops,seq-read-iops,seq-write-iops" {
		t.Errorf("results %s", got)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left on the volume: %v", entries)
	}
	if left := e.labelledOf(t, class); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
}
