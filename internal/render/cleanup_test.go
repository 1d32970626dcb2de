package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/orphan"
	"github.com/storbench/storbench/internal/runner/kube"
)

func TestLocalCleanupText(t *testing.T) {
	runs := []orphan.Run{
		{ID: "20261122-142305-3fa9", Why: "process 4242 is gone", Marked: true, Dirs: []orphan.WorkDir{
			{Path: "/mnt/nvme/storbench-20261122-142305-3fa9", Files: []string{"storbench-test.dat", "storbench-suite.fio"}, Removed: true},
			{Path: "/srv/nfs/storbench-20261122-142305-3fa9", Files: []string{"storbench-test.dat", "precious.txt"}, Kept: "precious.txt is not storbench's"},
		}},
		{ID: "20261122-150000-\x1b[31m", Why: "host rebooted\nsince", Dirs: []orphan.WorkDir{{Path: "/mnt/usb/storbench-x", Files: []string{"reader.0.0"}}}},
	}
	for _, tc := range []struct {
		golden string
		rep    *LocalCleanup
	}{
		{"cleanup-local.txt", &LocalCleanup{Runs: runs}},
		{"cleanup-local-dry-run.txt", &LocalCleanup{DryRun: true, Runs: runs}},
		{"cleanup-local-none.txt", &LocalCleanup{Runs: []orphan.Run{}}},
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
	pod := kube.Object{Kind: "pod", Namespace: "storbench", Name: "storbench-20261122-142305-3fa9-0", RunID: "20261122-142305-3fa9", Target: "k8s:longhorn@pi4-1", Created: created}
	pvc := kube.Object{Kind: "pvc", Namespace: "storbench", Name: "storbench-20261122-142305-3fa9-0", RunID: "20261122-142305-3fa9", Created: created, Volume: "pvc-123"}
	stray := kube.Object{Kind: "pod", Namespace: "bench", Name: "fio-by-hand", Created: created}
	vol := kube.ReleasedVolume{Name: "pvc-9", Class: "local-retain", Claim: "storbench/storbench-20261120-010101-0001-0", Phase: "Released", Command: "kubectl delete pv pvc-9"}
	for _, tc := range []struct {
		golden string
		rep    *KubeCleanup
	}{
		{"cleanup-kube.txt", &KubeCleanup{Found: []kube.Object{pod, pvc, stray}, Deleted: []kube.Object{pod, stray},
			Failed:  []KubeFailure{{Object: pvc, Error: "timed out waiting for the PVC to go"}},
			Volumes: []kube.ReleasedVolume{vol}, Notes: []string{"wiping pod storbench/storbench-20261122-142305-3fa9-0: container not running"}}},
		{"cleanup-kube-dry-run.txt", &KubeCleanup{DryRun: true, Namespace: "storbench", Found: []kube.Object{pod, pvc}, Volumes: []kube.ReleasedVolume{vol}}},
		{"cleanup-kube-namespaces.txt", &KubeCleanup{Namespace: "storbench", Namespaces: []string{"storbench"}}},
	} {
		var out bytes.Buffer
		if err := Formatted(&out, "table", tc.rep, KubeCleanupText); err != nil {
			t.Fatal(err)
		}
		golden(t, tc.golden, out.Bytes())
	}
}
