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
		if vas, err := client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{}); err != nil || len(vas.Items) > 0 {
			*refused++
			continue
		}
		client.CoreV1().PersistentVolumes().Delete(ctx, "pv-c", metav1.DeleteOptions{})
		return
	}
}

// detacher stands for the attach/detach controller: delay after pod is
// gone, it deletes the VolumeAttachment va.
func detacher(ctx context.Context, client *fake.Clientset, pod, va string, delay time.Duration) {
	for ctx.Err() == nil {
		if _, err := client.CoreV1().Pods("storbench").Get(ctx, pod, metav1.GetOptions{}); err != nil {
			time.Sleep(delay)
			client.StorageV1().VolumeAttachments().Delete(ctx, va, metav1.DeleteOptions{})
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A claim is deleted only once its volume is detached from the node its
// pod ran on: the driver deletes it at the first try, and both times are
// measured, detached from the pod's deletion, pv-gone from the claim's.
func TestDeleteVolumesWaitsForTheDetach(t *testing.T) {
	r, client := detachFixture(t)
	deleteWithControllers(t, r, client, []*volume{{claim: "c", pod: "p"}}, map[string]string{"p": "va-c"},
		map[string]time.Duration{"p": 300 * time.Millisecond}, 300*time.Millisecond)
}

// deleteWithControllers deletes vols with a provisioner and, for each pod,
// a detacher of its VolumeAttachment (vas) after its delay running; the
// driver must never be asked while an attachment is left, and the one
// claim must be timed detached after at least minDetach, and its PV gone.
func deleteWithControllers(t *testing.T, r *run, client *fake.Clientset, vols []*volume, vas map[string]string, delays map[string]time.Duration, minDetach time.Duration) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refused := 0
	var wg sync.WaitGroup
	wg.Add(1 + len(vas))
	go func() { defer wg.Done(); provisioner(ctx, client, &refused) }()
	for pod, va := range vas {
		go func() { defer wg.Done(); detacher(ctx, client, pod, va, delays[pod]) }()
	}
	d, err := r.deleteVolumes(ctx, vols)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	wg.Wait()
	if refused != 0 {
		t.Errorf("the driver was asked %d times to delete a volume still attached", refused)
	}
	if len(d.detached) != 1 || d.detached[0] < minDetach || len(d.pvGone) != 1 {
		t.Errorf("timed %+v, want the claim detached after at least %s, and its PV gone", d, minDetach)
	}
}

// A volume that stays attached (a stopped node, another pod on it) delays
// the claim's deletion by kubekit.DetachWait at most, and is not timed as
// detached.
func TestDeleteVolumesDoesNotWaitForeverForADetach(t *testing.T) {
	defer func(w time.Duration) { kubekit.DetachWait = w }(kubekit.DetachWait)
	kubekit.DetachWait = 200 * time.Millisecond
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

// A claim two pods used, on two nodes (a failover's writer and its
// replacement), is deleted once both pods are gone and the volume is
// detached from both nodes: the later detach decides, and the driver is
// never asked while an attachment is left.
func TestDeleteVolumesSharedClaimWaitsForEveryDetach(t *testing.T) {
	r, client := detachFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pv := "pv-c"
	p2 := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p2", Namespace: "storbench", Labels: map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: "r1"}},
		Spec: corev1.PodSpec{NodeName: "n2"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	va2 := &storagev1.VolumeAttachment{ObjectMeta: metav1.ObjectMeta{Name: "va-c2"},
		Spec: storagev1.VolumeAttachmentSpec{NodeName: "n2", Source: storagev1.VolumeAttachmentSource{PersistentVolumeName: &pv}}}
	if _, err := client.CoreV1().Pods("storbench").Create(ctx, p2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.StorageV1().VolumeAttachments().Create(ctx, va2, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.tl.wait(ctx, waitSpec{key: key("pod", "p2"), milestone: msRunning, timeout: 5 * time.Second}); err != nil {
		t.Fatal(err)
	}
	deleteWithControllers(t, r, client, []*volume{{claim: "c", pod: "p"}, {claim: "c", pod: "p2"}}, map[string]string{"p": "va-c", "p2": "va-c2"},
		map[string]time.Duration{"p": 100 * time.Millisecond, "p2": 600 * time.Millisecond}, 600*time.Millisecond)
}

// A check's volumes go in the background (release): it returns while the
// volume is still attached, and settle returns only once the claim and
// its PV are gone, so that a check that times a failure, and the run's
// cleanup, start with nothing of an earlier check still going.
func TestReleaseDeletesInTheBackgroundUntilSettled(t *testing.T) {
	r, client := detachFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	refused := 0
	detach := make(chan struct{})
	go provisioner(ctx, client, &refused)
	go func() {
		<-detach
		client.StorageV1().VolumeAttachments().Delete(ctx, "va-c", metav1.DeleteOptions{})
	}()
	start := time.Now()
	r.release(ctx, []*volume{{claim: "c", pod: "p"}})
	if took := time.Since(start); took > time.Second {
		t.Fatalf("release took %s: it waited for the deletion", took)
	}
	settled := make(chan struct{})
	go func() { r.settle(); close(settled) }()
	select {
	case <-settled:
		t.Fatal("settled while the volume was still attached")
	case <-time.After(500 * time.Millisecond):
	}
	close(detach)
	select {
	case <-settled:
	case <-time.After(10 * time.Second):
		t.Fatal("not settled 10 s after the detach")
	}
	if _, err := client.CoreV1().PersistentVolumeClaims("storbench").Get(ctx, "c", metav1.GetOptions{}); err == nil {
		t.Error("settled with the claim still there")
	}
	if _, err := client.CoreV1().PersistentVolumes().Get(ctx, "pv-c", metav1.GetOptions{}); err == nil {
		t.Error("settled with the PV still there")
	}
	if refused != 0 {
		t.Errorf("the driver was asked %d times to delete a volume still attached", refused)
	}
}
