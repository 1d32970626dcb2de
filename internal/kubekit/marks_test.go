package kubekit_test

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
)

// A cordon and a taint storbench sets carry the run's annotation, so a run
// killed outright leaves marks cleanup finds and lifts; the node's own
// taints stay, and a cordon that is not the run's is never lifted.
func TestNodeMarks(t *testing.T) {
	ctx := context.Background()
	userTainted := kubekittest.Node("node-b", nil)
	userTainted.Spec.Taints = []corev1.Taint{{Key: "dedicated", Value: "db", Effect: corev1.TaintEffectNoSchedule}}
	userCordoned := kubekittest.Node("node-c", nil)
	userCordoned.Spec.Unschedulable = true
	f := kubekittest.NewFake(t, userCordoned)
	if _, err := f.Client.CoreV1().Nodes().Update(ctx, userTainted, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	get := func(name string) *corev1.Node {
		n, err := f.Client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	if err := kubekit.SetCordon(ctx, f.Client, "node-a", "run-1", true); err != nil {
		t.Fatal(err)
	}
	if err := kubekit.SetOutOfService(ctx, f.Client, "node-b", "run-2", true); err != nil {
		t.Fatal(err)
	}
	if n := get("node-a"); !n.Spec.Unschedulable || n.Annotations[kubekit.AnnotationCordonedBy] != "run-1" {
		t.Errorf("cordon: unschedulable %v, annotations %v", n.Spec.Unschedulable, n.Annotations)
	}
	if n := get("node-b"); len(n.Spec.Taints) != 2 || n.Annotations[kubekit.AnnotationTaintedBy] != "run-2" {
		t.Errorf("taint: %v, annotations %v", n.Spec.Taints, n.Annotations)
	}

	all, err := kubekit.FindNodeMarks(ctx, f.Client, "")
	if err != nil {
		t.Fatal(err)
	}
	if got := markStrings(all); got != "node node-a: cordon by run run-1; node node-b: out-of-service taint by run run-2" {
		t.Errorf("marks: %s", got)
	}
	one, err := kubekit.FindNodeMarks(ctx, f.Client, "run-2")
	if err != nil || len(one) != 1 || one[0].Node != "node-b" {
		t.Fatalf("marks of run-2: %v %v", one, err)
	}

	// Another run's uncordon changes nothing; the user's cordon is never lifted.
	if err := kubekit.SetCordon(ctx, f.Client, "node-a", "run-9", false); err != nil {
		t.Fatal(err)
	}
	if err := kubekit.SetCordon(ctx, f.Client, "node-c", "run-1", false); err != nil {
		t.Fatal(err)
	}
	if !get("node-a").Spec.Unschedulable || !get("node-c").Spec.Unschedulable {
		t.Error("a cordon that was not the run's was lifted")
	}
	for _, m := range all {
		if err := kubekit.UndoNodeMark(ctx, f.Client, m); err != nil {
			t.Fatal(err)
		}
	}
	if n := get("node-a"); n.Spec.Unschedulable || n.Annotations[kubekit.AnnotationCordonedBy] != "" {
		t.Errorf("cordon not lifted: %v %v", n.Spec.Unschedulable, n.Annotations)
	}
	if n := get("node-b"); len(n.Spec.Taints) != 1 || n.Spec.Taints[0].Key != "dedicated" || n.Annotations[kubekit.AnnotationTaintedBy] != "" {
		t.Errorf("taint not lifted, or the node's own taint lost: %v %v", n.Spec.Taints, n.Annotations)
	}
	if left, _ := kubekit.FindNodeMarks(ctx, f.Client, ""); len(left) != 0 {
		t.Errorf("marks left: %v", left)
	}
}

func markStrings(ms []kubekit.NodeMark) string {
	var s []string
	for _, m := range ms {
		s = append(s, m.String())
	}
	return strings.Join(s, "; ")
}

// The snapshot class is the driver's default or the one named, never one
// whose parameters make a backup (Longhorn's type: bak, the first class
// its API lists).
func TestChooseSnapshotClass(t *testing.T) {
	const lh = "driver.longhorn.io"
	bak := kubekit.SnapshotClass{Name: "longhorn", Driver: lh, Parameters: map[string]string{"type": "bak"}}
	snap := kubekit.SnapshotClass{Name: "longhorn-snapshot", Driver: lh, Parameters: map[string]string{"type": "snap"}}
	other := kubekit.SnapshotClass{Name: "csi-hostpath", Driver: "hostpath.csi.k8s.io", Default: true}
	withDefault := func(c kubekit.SnapshotClass) kubekit.SnapshotClass { c.Default = true; return c }
	cases := []struct {
		name    string
		classes []kubekit.SnapshotClass
		named   string
		want    string
		wantErr string
	}{
		{"backup class beside a snapshot class", []kubekit.SnapshotClass{bak, snap, other}, "", "longhorn-snapshot", ""},
		{"backup class marked default", []kubekit.SnapshotClass{withDefault(bak), snap}, "", "longhorn-snapshot", ""},
		{"default wins", []kubekit.SnapshotClass{snap, withDefault(kubekit.SnapshotClass{Name: "fast", Driver: lh})}, "", "fast", ""},
		{"named", []kubekit.SnapshotClass{snap, {Name: "fast", Driver: lh}}, "fast", "fast", ""},
		{"named backup refused", []kubekit.SnapshotClass{bak, snap}, "longhorn", "", "makes backups"},
		{"named for another driver", []kubekit.SnapshotClass{snap, other}, "csi-hostpath", "", "is for driver hostpath.csi.k8s.io"},
		{"named missing", []kubekit.SnapshotClass{snap}, "nope", "", "no such VolumeSnapshotClass"},
		{"only backups", []kubekit.SnapshotClass{bak, {Name: "b2", Driver: lh, Parameters: map[string]string{"backupTarget": "s3://x"}}}, "", "", "every VolumeSnapshotClass for driver.longhorn.io makes backups"},
		{"several, none default", []kubekit.SnapshotClass{snap, {Name: "fast", Driver: lh}}, "", "", "name one with SnapshotClass"},
		{"none", []kubekit.SnapshotClass{other}, "", "", "no VolumeSnapshotClass for driver.longhorn.io"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, why, err := kubekit.ChooseSnapshotClass(tc.classes, lh, tc.named)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want || !strings.Contains(why, tc.want) {
				t.Errorf("got %q (%s), %v; want %s", got, why, err, tc.want)
			}
		})
	}
}
