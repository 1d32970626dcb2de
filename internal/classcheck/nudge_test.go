package classcheck

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
)

// TestNudgeSchedulerTouchesOnlyItsBoundClaims: a pod the scheduler sets
// aside for an unbound claim, as kube-scheduler words it, on two bound
// claims, one this run created and one it did not, and an unbound one of
// its own. The timeline (real informers on a fake API server) sees them;
// only the run's bound claim is touched, with a progress line saying why,
// and a failed wait then says where each claim stood.
func TestNudgeSchedulerTouchesOnlyItsBoundClaims(t *testing.T) {
	const ns, runID = "storbench", "r1"
	labels := map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: runID}
	claim := func(name string, bound bool) *corev1.PersistentVolumeClaim {
		c := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns, Labels: labels}}
		if bound {
			c.Spec.VolumeName, c.Status.Phase = "pv-"+name, corev1.ClaimBound
		}
		return c
	}
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "sbq-pod", Namespace: ns, Labels: labels}}
	for _, c := range []string{"ours", "theirs", "ours-unbound"} {
		pod.Spec.Volumes = append(pod.Spec.Volumes, corev1.Volume{Name: c, VolumeSource: corev1.VolumeSource{
			PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: c}}})
	}
	pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
		Message: "0/6 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/6 nodes are available: 6 Preemption is not helpful for scheduling."}}
	client := fake.NewSimpleClientset(pod, claim("ours", true), claim("theirs", true), claim("ours-unbound", false))
	ctx := context.Background()
	tl, err := startTimeline(ctx, client, ns, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer tl.stop()
	var progress []string
	r := &run{c: &kubekit.Cluster{Client: client}, ns: ns, runID: runID, tl: tl,
		claims: map[string]bool{"ours": true, "ours-unbound": true},
		o:      Options{Class: "testcsi-shared", Progress: func(s string) { progress = append(progress, s) }}}
	if _, ok := tl.at(key("pvc", "ours"), msBound); !ok {
		t.Fatal("the timeline did not see claim ours bound")
	}
	nudges := map[string]*kubekit.BindingNudge{}
	r.nudgeScheduler(ctx, "sbq-pod", nudges)
	if len(progress) != 0 {
		t.Fatalf("touched within the grace: %q", progress)
	}
	for _, c := range []string{"ours", "theirs", "ours-unbound"} {
		nudges[c] = &kubekit.BindingNudge{Grace: time.Nanosecond}
	}
	r.nudgeScheduler(ctx, "sbq-pod", nudges)
	for _, c := range []string{"ours", "theirs", "ours-unbound"} {
		got, err := client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, c, metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if touched := got.Annotations[kubekit.AnnotationRequeued] != ""; touched != (c == "ours") {
			t.Errorf("claim %s touched: %t", c, touched)
		}
	}
	if len(progress) != 1 || !strings.Contains(progress[0], "claim storbench/ours bound") || !strings.Contains(progress[0], "still sets pod sbq-pod aside") {
		t.Errorf("progress %q, want one line on claim ours", progress)
	}
	err = r.claimsOf(errors.New("pod/sbq-pod not running within 1m30s"), "sbq-pod", nudges)
	for _, want := range []string{"pod/sbq-pod not running within 1m30s (", "claim ours bound ", "touched 1 times", "claim theirs bound ", "claim ours-unbound not bound"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("failed wait %q does not say %q", err, want)
		}
	}
}
