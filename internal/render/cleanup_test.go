package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestLocalCleanupText(t *testing.T) {
	runs := []result.OrphanedRun{
		{ID: "20261122-142305-3fa9", Why: "process 4242 is gone", Marked: true, Dirs: []result.OrphanedDir{
			{Path: "/mnt/nvme/storbench-20261122-142305-3fa9", Files: []string{"storbench-test.dat", "storbench-suite.fio"}, Removed: true},
			{Path: "/srv/nfs/storbench-20261122-142305-3fa9", Files: []string{"storbench-test.dat", "precious.txt"}, Kept: "precious.txt is not storbench's"},
		}},
		{ID: "20261122-150000-\x1b[31m", Why: "host rebooted\nsince", Dirs: []result.OrphanedDir{{Path: "/mnt/usb/storbench-x", Files: []string{"reader.0.0"}}}},
	}
	for _, tc := range []struct {
		golden string
		rep    *result.LocalCleanup
	}{
		{"cleanup-local.txt", &result.LocalCleanup{Runs: runs}},
		{"cleanup-local-dry-run.txt", &result.LocalCleanup{DryRun: true, Runs: runs}},
		{"cleanup-local-none.txt", &result.LocalCleanup{Runs: []result.OrphanedRun{}}},
	} {
		var out bytes.Buffer
		if err := Formatted(&out, "table", tc.rep, LocalCleanupText); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.golden, out.Bytes())
	}
}

func TestKubeCleanupText(t *testing.T) {
	created := time.Date(2026, 11, 22, 14, 23, 0, 0, time.UTC)
	pod := result.KubeObject{Kind: "pod", Namespace: "storbench", Name: "storbench-20261122-142305-3fa9-0", RunID: "20261122-142305-3fa9", Target: "k8s:longhorn@pi4-1", Created: created}
	pvc := result.KubeObject{Kind: "pvc", Namespace: "storbench", Name: "storbench-20261122-142305-3fa9-0", RunID: "20261122-142305-3fa9", Created: created, Volume: "pvc-123"}
	stray := result.KubeObject{Kind: "pod", Namespace: "bench", Name: "fio-by-hand", Created: created}
	vol := result.ReleasedVolume{Name: "pvc-9", Class: "local-retain", Claim: "storbench/storbench-20261120-010101-0001-0", Phase: "Released", Command: "kubectl delete pv pvc-9"}
	for _, tc := range []struct {
		golden string
		rep    *result.KubeCleanup
	}{
		{"cleanup-kube.txt", &result.KubeCleanup{Found: []result.KubeObject{pod, pvc, stray}, Deleted: []result.KubeObject{pod, stray},
			Failed:  []result.KubeFailure{{KubeObject: pvc, Error: "timed out waiting for the PVC to go"}},
			Volumes: []result.ReleasedVolume{vol}, Notes: []string{"wiping pod storbench/storbench-20261122-142305-3fa9-0: container not running"}}},
		{"cleanup-kube-dry-run.txt", &result.KubeCleanup{DryRun: true, Namespace: "storbench", Found: []result.KubeObject{pod, pvc}, Volumes: []result.ReleasedVolume{vol}}},
		{"cleanup-kube-namespaces.txt", &result.KubeCleanup{Namespace: "storbench", Namespaces: []string{"storbench"}}},
	} {
		var out bytes.Buffer
		if err := Formatted(&out, "table", tc.rep, KubeCleanupText); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.golden, out.Bytes())
	}
}
