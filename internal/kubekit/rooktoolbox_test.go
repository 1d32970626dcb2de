package kubekit

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
)

// TestRookToolbox: the first running, ready pod labelled app=rook-ceph-tools
// in the namespace, in its container rook-ceph-tools or its only one; pods
// not running, not ready, being deleted, in another namespace or without
// such a container are passed over, and the error says why each was.
func TestRookToolbox(t *testing.T) {
	pod := func(name, ns string, phase corev1.PodPhase, ready corev1.ConditionStatus, containers ...string) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: map[string]string{"app": "rook-ceph-tools"}},
			Status: corev1.PodStatus{Phase: phase, Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: ready}}}}
		for _, c := range containers {
			p.Spec.Containers = append(p.Spec.Containers, corev1.Container{Name: c})
		}
		return p
	}
	for _, tc := range []struct {
		name           string
		pods           []runtime.Object
		pod, container string
		err            string
	}{
		{name: "the ready one", pods: []runtime.Object{
			pod("a", "rook-ceph", corev1.PodRunning, corev1.ConditionFalse, "rook-ceph-tools"),
			pod("b", "rook-ceph", corev1.PodRunning, corev1.ConditionTrue, "sidecar", "rook-ceph-tools"),
			pod("c", "rook-ceph", corev1.PodRunning, corev1.ConditionTrue, "rook-ceph-tools")},
			pod: "b", container: "rook-ceph-tools"},
		{name: "its only container", pods: []runtime.Object{pod("a", "rook-ceph", corev1.PodRunning, corev1.ConditionTrue, "toolbox")},
			pod: "a", container: "toolbox"},
		{name: "none usable", pods: []runtime.Object{
			pod("a", "rook-ceph", corev1.PodPending, corev1.ConditionFalse, "rook-ceph-tools"),
			pod("b", "rook-ceph", corev1.PodRunning, corev1.ConditionTrue, "x", "y"),
			pod("c", "other", corev1.PodRunning, corev1.ConditionTrue, "rook-ceph-tools")},
			err: "no running, ready pod of Rook's toolbox in namespace rook-ceph: a (Pending, not ready), b (no container rook-ceph-tools)"},
		{name: "none", err: "no pod labelled app=rook-ceph-tools in namespace rook-ceph: deploy Rook's toolbox"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := NewClusterForClient(fake.NewClientset(tc.pods...), nil, "storbench")
			p, err := RookToolbox(context.Background(), c, "rook-ceph")
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("%+v, %v: want an error saying %q", p, err, tc.err)
				}
				return
			}
			if err != nil || p.Namespace != "rook-ceph" || p.Pod != tc.pod || p.Container != tc.container {
				t.Fatalf("%+v, %v: want pod %s, container %s", p, err, tc.pod, tc.container)
			}
		})
	}
}
