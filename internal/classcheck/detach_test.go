package classcheck

import (
	"context"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
)

// detachFixture is a fake API server with the run's pod on node n1 using
// claim c, bound to PV pv-c, attached to n1 (a VolumeAttachment), and a
// timeline (real informers) that has seen them all.
func detachFixture(t *testing.T) (*run, *fake.Clientset) {
	t.Helper()
	const ns, runID = "storbench", "r1"
	labels := map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: runID}
	pv := "pv-c"
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "c", Namespace: ns, Labels: labels},
		Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv}, Status: corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p", Namespace: ns, Labels: labels},
		Spec: corev1.PodSpec{NodeName: "n1"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	va := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-c"},
		Spec:   storagev1.VolumeAttachmentSpec{NodeName: "n1", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}},
		Status: storagev1.VolumeAttachmentStatus{Attached: true}}
	client := fake.NewSimpleClientset(pod, claim, va, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv}})
	tl, err := startTimeline(context.Background(), client, ns, runID)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(tl.stop)
	r := &run{c: &kubekit.Cluster{Client: client}, ns: ns, runID: runID, tl: tl,
		decl: Declared{Reclaim: "Delete"}, o: Options{Timeout: 10 * time.Second}}
	if _, ok := tl.at(key("pv", pv), "attached:n1"); !ok || r.tl.volumeOf("c") != pv {
		t.Fatal("the timeline did not see the volume bound and attached to n1")
	}
	return r, client
}

// provisioner stands for the external provisioner and a driver that, as
// the test CSI driver and Ceph's do, refuses to delete a volume still
// attached: once claim c is gone it deletes PV pv-c if no
// VolumeAttachment names it, and counts each refusal.
func provisioner(ctx context.Context, client *fake.Clientset, refused *int) {
	for ctx.Err() == nil {
		time.Sleep(20 * time.Millisecond)
		if _, err := client.CoreV1().PersistentVolumeClaims("storbench").Get(ctx, "c", metav1.GetOptions{}); err == nil {
			continue
		}
		if _, err := client.StorageV1().VolumeAttachments().Get(ctx, "va-c", metav1.GetOptions{}); err == nil {
			*refused++
			continue
		}
		client.CoreV1().PersistentVolumes().Delete(ctx, "pv-c", metav1.DeleteOptions{})
		return
	}
}

// A claim is deleted only once its volume is detached from the node its
// pod ran on: the driver deletes it at the first try, and both times are
// measured, detached from the pod's deletion, pv-gone from the claim's.
func TestDeleteVolumesWaitsForTheDetach(t *testing.T) {
	r, client := detachFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refused := 0
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); provisioner(ctx, client, &refused) }()
	go func() { // the attach/detach controller, 300 ms after the pod is gone
		defer wg.Done()
		for ctx.Err() == nil {
			if _, err := client.CoreV1().Pods("storbench").Get(ctx, "p", metav1.GetOptions{}); err != nil {
				time.Sleep(300 * time.Millisecond)
				client.StorageV1().VolumeAttachments().Delete(ctx, "va-c", metav1.DeleteOptions{})
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	d, err := r.deleteVolumes(ctx, []*volume{{claim: "c", pod: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	if refused != 0 {
		t.Errorf("the driver was asked %d times to delete a volume still attached", refused)
	}
	if len(d.detached) != 1 || d.detached[0] < 300*time.Millisecond || len(d.pvGone) != 1 {
		t.Errorf("timed %+v, want one detach of at least 300ms and one pv-gone", d)
	}
}

// A volume that stays attached (a stopped node, another pod on it) delays
// the claim's deletion by detachWait at most, and is not timed as
// detached.
func TestDeleteVolumesDoesNotWaitForeverForADetach(t *testing.T) {
	defer func(w time.Duration) { detachWait = w }(detachWait)
	detachWait = 200 * time.Millisecond
	r, client := detachFixture(t)
	ctx := context.Background()
	go func() { // the provisioner gives up on the attachment after a while
		time.Sleep(time.Second)
		client.CoreV1().PersistentVolumes().Delete(ctx, "pv-c", metav1.DeleteOptions{})
	}()
	start := time.Now()
	d, err := r.deleteVolumes(ctx, []*volume{{claim: "c", pod: "p"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.detached) != 0 || len(d.pvGone) != 1 {
		t.Errorf("timed %+v, want no detach and one pv-gone", d)
	}
	if _, err := client.CoreV1().PersistentVolumeClaims("storbench").Get(ctx, "c", metav1.GetOptions{}); err == nil {
		t.Error("the claim is still there")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Errorf("took %s", took)
	}
}
