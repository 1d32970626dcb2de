package kube

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/result"
)

func TestOtherNodes(t *testing.T) {
	for _, c := range []struct {
		labels map[string]string
		want   []string
	}{
		{map[string]string{}, nil},
		{map[string]string{string(result.LabelReplicaNodes): "b, c,a,b"}, []string{"b", "c"}},
		{map[string]string{string(result.LabelVolumeNode): "a"}, nil},
		{map[string]string{string(result.LabelVolumeNode): "d", string(result.LabelReplicaNodes): "b"}, []string{"b", "d"}},
	} {
		if got := otherNodes("a", c.labels); !slices.Equal(got, c.want) {
			t.Errorf("otherNodes(a, %v) = %v, want %v", c.labels, got, c.want)
		}
	}
}

// TestSamplerCheck: doctor judges the namespace's Pod Security level as
// Pod Security admission does for a hostNetwork pod, and names the label
// that would allow the sampler and its cost.
func TestSamplerCheck(t *testing.T) {
	for level, want := range map[string]result.CheckStatus{
		"": result.CheckOK, "privileged": result.CheckOK, "baseline": result.CheckInfo, "restricted": result.CheckInfo,
	} {
		ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench", Labels: map[string]string{}}}
		if level != "" {
			ns.Labels[kubekit.PodSecurityEnforce] = level
		}
		c := samplerCheck(context.Background(), kubekittest.NewFake(t, ns).Cluster())
		if c.Status != want {
			t.Errorf("level %q: %s %s, want %s", level, c.Status, c.Detail, want)
		}
		if want == result.CheckInfo && !strings.Contains(c.Fix, kubekit.PodSecurityEnforce+"=privileged") {
			t.Errorf("level %q: fix %q does not name the label", level, c.Fix)
		}
		if ok, why := HostNetworkAllowed(context.Background(), kubekittest.NewFake(t, ns).Cluster(), "bench"); ok != (want == result.CheckOK) {
			t.Errorf("level %q: HostNetworkAllowed %v (%s)", level, ok, why)
		}
	}
	if c := samplerCheck(context.Background(), kubekittest.NewFake(t).Cluster()); c.Status != result.CheckOK || !strings.Contains(c.Detail, "does not exist yet") {
		t.Errorf("no namespace: %+v", c)
	}
}

// A sampler pod takes the user's pod overrides as the fio pod does, keeps
// tolerating every taint, and is pinned by the node's hostname label,
// which may differ from its name.
func TestSamplerSpecOverridesAndHostname(t *testing.T) {
	n := kubekittest.Node("node-a", nil)
	n.Labels[corev1.LabelHostname] = "node-a.lan"
	f := kubekittest.NewFake(t)
	if _, err := f.Client.CoreV1().Nodes().Update(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	patch := []byte(`{"spec":{"imagePullSecrets":[{"name":"regcred"}],"tolerations":[{"key":"gpu","operator":"Exists"}],
		"containers":[{"name":"fio","resources":{"limits":{"memory":"64Mi"}}}]}}`)
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{PodOverrides: patch})
	s := &samplerPods{t: tg, ns: "bench", base: "b", runID: testRunID}
	pod, err := s.samplerSpec("b-sampler", tg.hostnameOf(context.Background(), "node-a"))
	if err != nil {
		t.Fatal(err)
	}
	if got := pod.Spec.NodeSelector[corev1.LabelHostname]; got != "node-a.lan" {
		t.Errorf("pinned to hostname %q, want the label's node-a.lan", got)
	}
	if len(pod.Spec.ImagePullSecrets) != 1 || pod.Spec.Containers[0].Resources.Limits.Memory().String() != "64Mi" {
		t.Errorf("overrides not applied: %+v", pod.Spec)
	}
	all := false
	for _, tol := range pod.Spec.Tolerations {
		all = all || (tol.Operator == corev1.TolerationOpExists && tol.Key == "")
	}
	if !all || len(pod.Spec.Tolerations) != 2 {
		t.Errorf("tolerations %+v: want the user's and tolerate-all", pod.Spec.Tolerations)
	}
	if !pod.Spec.HostNetwork || pod.Labels[kubekit.LabelRunID] != testRunID {
		t.Errorf("sampler lost what it is: %+v", pod)
	}
}
