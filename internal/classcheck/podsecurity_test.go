package classcheck

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
)

// A check pod the namespace's Pod Security refuses (root) is made again
// under the restricted profile, and the report's notes say so once.
func TestCheckPodUnderRestrictedProfile(t *testing.T) {
	r := testRun(t, Options{RunID: "20261128-011500-ab12"}, testNode("pi-1", "192.168.1.11", nil, nil))
	client := r.c.Client.(*fake.Clientset)
	client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if sc := pod.Spec.SecurityContext; sc == nil || sc.RunAsNonRoot == nil || !*sc.RunAsNonRoot {
			return true, nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name,
				errString(`violates PodSecurity "restricted:latest": runAsNonRoot != true`))
		}
		return false, nil, nil
	})
	for _, name := range []string{"a", "b"} {
		if _, err := r.createPod(context.Background(), podSpec{name: name, claim: "c"}); err != nil {
			t.Fatal(err)
		}
	}
	pod, err := client.CoreV1().Pods("storbench").Get(context.Background(), "a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if c := pod.Spec.Containers[0].SecurityContext; c == nil || c.AllowPrivilegeEscalation == nil || *c.AllowPrivilegeEscalation {
		t.Errorf("container security context %+v", c)
	}
	if len(r.notes) != 1 || !strings.Contains(r.notes[0], "ran under the restricted profile") {
		t.Errorf("notes: %q", r.notes)
	}
}

type errString string

func (e errString) Error() string { return string(e) }
