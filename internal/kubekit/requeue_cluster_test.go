package kubekit_test

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/test/kubetest"
)

// TestClusterTouchedClaimRequeuesASetAsidePod shows, on the test cluster's
// real kube-scheduler, what BindingNudge relies on: a pod whose claim is
// unbound (class "", no volume) is set aside, and SetAsideForUnboundClaim
// reads the scheduler's condition so; the scheduler does not try it again
// by itself; TouchClaim makes it try again at once. A try is seen in the
// scheduler's FailedScheduling event: the second becomes a series of 2.
//
// The test holds the cluster alone: any PersistentVolume's change also
// wakes such a pod, and a shared test's volumes change all the time. Even
// alone, a volume another test deleted can still be changing; a pod tried
// again before the touch is replaced by a fresh one (at most 3).
func TestClusterTouchedClaimRequeuesASetAsidePod(t *testing.T) {
	client, _ := kubetest.Cluster(t)
	ctx := context.Background()
	ns := namespace(t, client, "sb-requeue")
	none := ""
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data"}, Spec: corev1.PersistentVolumeClaimSpec{
		StorageClassName: &none, AccessModes: []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
		Resources: corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Mi")}}}}
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for try := 1; ; try++ {
		pod := setAsidePod(t, ctx, client, ns, try)
		time.Sleep(3 * time.Second) // the scheduler's first backoff is 1 s: a try of its own would show by now
		if tries := schedulerTries(t, ctx, client, ns, pod); tries != 1 {
			if try == 3 {
				t.Fatalf("pod %s tried %d times before the claim was touched, in 3 pods: something keeps waking set-aside pods", pod, tries)
			}
			t.Logf("pod %s tried %d times before the touch (a volume changed); a fresh pod", pod, tries)
			continue
		}
		touched := time.Now()
		if err := kubekit.TouchClaim(ctx, client, ns, claim.Name, touched); err != nil {
			t.Fatal(err)
		}
		for schedulerTries(t, ctx, client, ns, pod) < 2 {
			if time.Since(touched) > 15*time.Second {
				t.Fatalf("pod %s not tried again within 15 s of its claim's touch", pod)
			}
			time.Sleep(200 * time.Millisecond)
		}
		t.Logf("pod %s tried again %s after its claim was touched", pod, time.Since(touched).Round(time.Millisecond))
		c, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
		if err != nil || c.Annotations[kubekit.AnnotationRequeued] == "" {
			t.Errorf("the claim after the touch: annotations %v (%v), want %s", c.GetAnnotations(), err, kubekit.AnnotationRequeued)
		}
		return
	}
}

// setAsidePod creates a pod on claim "data" and waits until the scheduler
// sets it aside for the unbound claim.
func setAsidePod(t *testing.T, ctx context.Context, client kubernetes.Interface, ns string, n int) string {
	t.Helper()
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "waits-" + string(rune('0'+n))}, Spec: corev1.PodSpec{
		Containers: []corev1.Container{{Name: "c", Image: "storbench.invalid/never-runs"}},
		Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "data"}}}}}}
	if _, err := client.CoreV1().Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := client.CoreV1().Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if kubekit.SetAsideForUnboundClaim(p) {
			return pod.Name
		}
		if time.Now().After(deadline) {
			t.Fatalf("pod %s not set aside for its unbound claim within 30 s: conditions %+v", pod.Name, p.Status.Conditions)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// schedulerTries counts the scheduler's tries of a pod from its
// FailedScheduling event: 1 for the event alone, its series' count after
// (the scheduler sends the second try at once, later ones every 30 min).
func schedulerTries(t *testing.T, ctx context.Context, client kubernetes.Interface, ns, pod string) int {
	t.Helper()
	list, err := client.EventsV1().Events(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, e := range list.Items {
		switch {
		case e.Regarding.Name != pod || e.Reason != "FailedScheduling":
		case e.Series != nil:
			n += int(e.Series.Count)
		default:
			n++
		}
	}
	return n
}
