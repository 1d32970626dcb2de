package kubekit_test

import (
	"context"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
)

// A node the node-failure check stops carries the run and its start
// command before the stop runs; FindNodeMarks reads both back, another
// run cannot remove the record, and undoing it removes both annotations.
func TestStoppedNodeMark(t *testing.T) {
	ctx := context.Background()
	f := kubekittest.NewFake(t)
	start := kubekit.NodeStart{Command: "bash up.sh node-a", Inventory: "/home/me/hosts.ini", Host: "node-a"}
	if err := kubekit.SetStopped(ctx, f.Client, "node-a", "run-1", start, true); err != nil {
		t.Fatal(err)
	}
	marks, err := kubekit.FindNodeMarks(ctx, f.Client, "run-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(marks) != 1 || marks[0].What != kubekit.MarkStopped || marks[0].Start == nil || *marks[0].Start != start {
		t.Fatalf("marks: %+v", marks)
	}
	if got, want := marks[0].String(), "node node-a: stopped by run run-1"; got != want {
		t.Errorf("mark %q, want %q", got, want)
	}
	if err := kubekit.SetStopped(ctx, f.Client, "node-a", "run-9", kubekit.NodeStart{}, false); err != nil {
		t.Fatal(err)
	}
	if left, _ := kubekit.FindNodeMarks(ctx, f.Client, ""); len(left) != 1 {
		t.Fatalf("another run removed the record: %v", left)
	}
	if err := kubekit.UndoNodeMark(ctx, f.Client, marks[0]); err != nil {
		t.Fatal(err)
	}
	n, err := f.Client.CoreV1().Nodes().Get(ctx, "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := n.Annotations[kubekit.AnnotationStoppedBy]; ok {
		t.Errorf("annotations left: %v", n.Annotations)
	}
	if _, ok := n.Annotations[kubekit.AnnotationStartWith]; ok {
		t.Errorf("annotations left: %v", n.Annotations)
	}
}
