package kubekit_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
)

// setAside reads testdata/pod-set-aside-unbound-claim.json: a pod as
// kube-scheduler 1.33.13 left it on the test cluster, its claim (class "",
// no volume) unbound.
func setAside(t *testing.T) *corev1.Pod {
	t.Helper()
	data, err := os.ReadFile("testdata/pod-set-aside-unbound-claim.json")
	if err != nil {
		t.Fatal(err)
	}
	var p corev1.Pod
	if err := json.Unmarshal(data, &p); err != nil {
		t.Fatal(err)
	}
	return &p
}

func TestSetAsideForUnboundClaim(t *testing.T) {
	if !kubekit.SetAsideForUnboundClaim(setAside(t)) {
		t.Fatal("the scheduler's own set-aside pod is not recognized")
	}
	cases := map[string]func(p *corev1.Pod){
		"scheduled": func(p *corev1.Pod) { p.Spec.NodeName = "kreal-node" },
		"another reason": func(p *corev1.Pod) {
			p.Status.Conditions[0].Message = "0/4 nodes are available: 4 Insufficient cpu."
		},
		"condition true": func(p *corev1.Pod) { p.Status.Conditions[0].Status = corev1.ConditionTrue },
		"not unschedulable": func(p *corev1.Pod) {
			p.Status.Conditions[0].Reason = corev1.PodReasonSchedulingGated
		},
		"no condition yet": func(p *corev1.Pod) { p.Status.Conditions = nil },
	}
	for name, change := range cases {
		p := setAside(t)
		change(p)
		if kubekit.SetAsideForUnboundClaim(p) {
			t.Errorf("%s: recognized as set aside for an unbound claim", name)
		}
	}
	if kubekit.SetAsideForUnboundClaim(nil) {
		t.Error("no pod: recognized")
	}
}

// TestBindingNudgeDue walks one pod's wait: the claim not yet bound, bound
// for less than the grace (the scheduler may be backing the pod off), past
// it (touch), again before Every (no), after it (touch), and a pod the
// scheduler placed meanwhile (no).
func TestBindingNudgeDue(t *testing.T) {
	pod := setAside(t)
	t0 := time.Date(2026, 11, 30, 4, 0, 0, 0, time.UTC)
	var n kubekit.BindingNudge
	steps := []struct {
		name    string
		boundAt time.Time
		now     time.Time
		pod     *corev1.Pod
		want    bool
	}{
		{"claim unbound", time.Time{}, t0.Add(time.Minute), pod, false},
		{"bound within the grace", t0, t0.Add(kubekit.NudgeGrace - time.Second), pod, false},
		{"bound past the grace", t0, t0.Add(kubekit.NudgeGrace), pod, true},
		{"again too soon", t0, t0.Add(kubekit.NudgeGrace + kubekit.NudgeEvery - time.Second), pod, false},
		{"again after Every", t0, t0.Add(kubekit.NudgeGrace + kubekit.NudgeEvery), pod, true},
		{"placed meanwhile", t0, t0.Add(time.Hour), func() *corev1.Pod { p := pod.DeepCopy(); p.Spec.NodeName = "n"; return p }(), false},
	}
	for _, s := range steps {
		if got := n.Due(s.pod, s.boundAt, s.now); got != s.want {
			t.Errorf("%s: Due = %t, want %t", s.name, got, s.want)
		}
	}
	if n.Touches != 2 {
		t.Errorf("Touches = %d, want 2", n.Touches)
	}
	custom := kubekit.BindingNudge{Grace: time.Second, Every: time.Second}
	if !custom.Due(pod, t0, t0.Add(time.Second)) || custom.Due(pod, t0, t0.Add(1500*time.Millisecond)) || !custom.Due(pod, t0, t0.Add(2*time.Second)) {
		t.Error("Grace and Every of 1 s not kept")
	}
}

// TestTouchClaim sets the annotation and only it, and says which claim a
// failed touch was for.
func TestTouchClaim(t *testing.T) {
	claim := &corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "data", Namespace: "storbench",
		Annotations: map[string]string{"keep": "me"}, Labels: map[string]string{kubekit.LabelRunID: "r1"}}}
	client := fake.NewSimpleClientset(claim)
	at := time.Date(2026, 11, 30, 4, 19, 53, 5e8, time.UTC)
	if err := kubekit.TouchClaim(context.Background(), client, "storbench", "data", at); err != nil {
		t.Fatal(err)
	}
	got, err := client.CoreV1().PersistentVolumeClaims("storbench").Get(context.Background(), "data", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Annotations[kubekit.AnnotationRequeued] != "2026-11-30T04:19:53.5Z" || got.Annotations["keep"] != "me" || got.Labels[kubekit.LabelRunID] != "r1" {
		t.Errorf("after the touch: annotations %v, labels %v", got.Annotations, got.Labels)
	}
	err = kubekit.TouchClaim(context.Background(), client, "storbench", "gone", at)
	if err == nil || !strings.Contains(err.Error(), "claim storbench/gone") || !strings.Contains(err.Error(), "not found") {
		t.Errorf("touching a claim that is not there: %v", err)
	}
}
