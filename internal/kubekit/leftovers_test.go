package kubekit

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/storbench/storbench/internal/result"
)

// leftoverFixture: a killed run's pod p on node n1 using claim c, bound to
// PV pv-c, attached to n1.
func leftoverFixture() (*fake.Clientset, []result.KubeObject) {
	pv := "pv-c"
	client := fake.NewSimpleClientset(
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: "storbench"}, Spec: corev1.PodSpec{NodeName: "n1"}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: "storbench"}, Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}},
		&corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv}},
		&storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-c"},
			Spec: storagev1.VolumeAttachmentSpec{NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}})
	return client, []result.KubeObject{{Kind: "pod", Namespace: "storbench", Name: "p"}, {Kind: "pvc", Namespace: "storbench", Name: "c"}}
}

// A claim is deleted only once its pod is gone and its volume detached:
// the driver is never asked to delete an attached volume.
func TestDeleteObjectsDetachedWaitsForTheDetach(t *testing.T) {
	client, objs := leftoverFixture()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var early atomic.Int32 // claim deletions while the volume was attached
	client.PrependReactor("delete", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		if _, err := client.Tracker().Get(schema.GroupVersionResource{Group: "storage.k8s.io", Version: "v1", Resource: "volumeattachments"}, "", "va-c"); err == nil {
			early.Add(1)
		}
		return false, nil, nil
	})
	go func() { // the attach/detach controller: 300 ms after the pod is gone
		for ctx.Err() == nil {
			if _, err := client.CoreV1().Pods("storbench").Get(ctx, "p", metav1.GetOptions{}); apierrors.IsNotFound(err) {
				time.Sleep(300 * time.Millisecond)
				client.StorageV1().VolumeAttachments().Delete(ctx, "va-c", metav1.DeleteOptions{})
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	start := time.Now()
	out := DeleteObjectsDetached(ctx, client, objs, 10*time.Second)
	if err := out.Err(); err != nil || len(out.Deleted) != 2 {
		t.Fatalf("deleted %v, %v", out.Deleted, err)
	}
	if n := early.Load(); n != 0 {
		t.Errorf("the claim was deleted %d times while its volume was attached", n)
	}
	if took := time.Since(start); took < 300*time.Millisecond {
		t.Errorf("took %s: it did not wait for the detach", took)
	}
}

// A volume that stays attached (a stopped node) holds the claim back for
// DetachWait at most; where attachments cannot be listed, not at all.
func TestDeleteObjectsDetachedBoundedWait(t *testing.T) {
	defer func(w time.Duration) { DetachWait = w }(DetachWait)
	DetachWait = 300 * time.Millisecond
	for _, forbidden := range []bool{false, true} {
		client, objs := leftoverFixture()
		if forbidden {
			client.PrependReactor("list", "volumeattachments", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, apierrors.NewForbidden(schema.GroupResource{Group: "storage.k8s.io", Resource: "volumeattachments"}, "", nil)
			})
		}
		start := time.Now()
		out := DeleteObjectsDetached(context.Background(), client, objs, 10*time.Second)
		took := time.Since(start)
		if err := out.Err(); err != nil || len(out.Deleted) != 2 {
			t.Fatalf("forbidden %v: deleted %v, %v", forbidden, out.Deleted, err)
		}
		switch {
		case !forbidden && (took < DetachWait || took > 5*time.Second):
			t.Errorf("attached throughout: took %s, want about %s", took, DetachWait)
		case forbidden && took > 200*time.Millisecond:
			t.Errorf("attachments forbidden: took %s, want no wait", took)
		}
	}
}
