package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	k8stesting "k8s.io/client-go/testing"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/result"
)

// restrictedAdmission answers as the API server's Pod Security admission
// at level restricted does: a pod that is not non-root with a seccomp
// profile, no privilege escalation and every capability dropped is
// refused (only the checks storbench's pods could fail).
func restrictedAdmission(pod *corev1.Pod) error {
	sc := pod.Spec.SecurityContext
	ok := sc != nil && sc.RunAsNonRoot != nil && *sc.RunAsNonRoot && sc.SeccompProfile != nil && sc.SeccompProfile.Type == corev1.SeccompProfileTypeRuntimeDefault
	for _, c := range pod.Spec.Containers {
		csc := c.SecurityContext
		ok = ok && csc != nil && csc.AllowPrivilegeEscalation != nil && !*csc.AllowPrivilegeEscalation &&
			csc.Capabilities != nil && len(csc.Capabilities.Drop) == 1 && csc.Capabilities.Drop[0] == "ALL"
	}
	if ok {
		return nil
	}
	return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, pod.Name, errors.New(
		`violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile`))
}

// A namespace that enforces restricted refuses the usual fio pod: the
// same pod is made under the restricted profile and runs, the notice says
// so and what it costs, and the results carry the label. A restricted pod
// refused too is a refusal naming both answers; a pod whose user cannot
// write the volume fails with the reason.
func TestRestrictedFallback(t *testing.T) {
	cases := []struct {
		name      string
		admission func(*corev1.Pod) error
		overrides string
		wantErr   string
	}{
		{"restricted namespace", restrictedAdmission, "", ""},
		{"user's own securityContext kept", restrictedAdmission, `{"spec":{"securityContext":{"runAsUser":2000}}}`, ""},
		{"refused even so", func(p *corev1.Pod) error {
			return apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, p.Name, errors.New(`violates PodSecurity "restricted:latest": volumes`))
		}, "", "and the same pod under the restricted profile too"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := kubekittest.NewFake(t)
			var created []*corev1.Pod
			f.Client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
				if err := tc.admission(pod); err != nil {
					return true, nil, err
				}
				created = append(created, pod)
				return false, nil, nil
			})
			tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 5 * time.Second, PodOverrides: []byte(tc.overrides)})
			p, err := tg.Prepare(context.Background(), need())
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("got %v, want %q", err, tc.wantErr)
				}
				if n := f.Labelled(); n != 0 {
					t.Errorf("%d objects left", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer p.Cleanup(context.Background())
			if len(created) != 1 || *created[0].Spec.SecurityContext.FSGroup != kubekit.RestrictedUID {
				t.Fatalf("pods created: %d", len(created))
			}
			if tc.overrides != "" && *created[0].Spec.SecurityContext.RunAsUser != 2000 {
				t.Errorf("the user's runAsUser was replaced: %d", *created[0].Spec.SecurityContext.RunAsUser)
			}
			if got := result.LabelPodSecurity.Of(p.Labels); got != "restricted" {
				t.Errorf("label %s = %q", result.LabelPodSecurity, got)
			}
			notes := strings.Join(p.Notices, "\n")
			for _, want := range []string{`enforces "restricted"`, "ran under the restricted profile", "no host-network sampler pods"} {
				if !strings.Contains(notes, want) {
					t.Errorf("notices lack %q:\n%s", want, notes)
				}
			}
		})
	}
}

// RestrictPod leaves the pod it is given alone and fixes only what the
// level refuses.
func TestRestrictPod(t *testing.T) {
	root := int64(0)
	pod := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "p"}, Spec: corev1.PodSpec{
		SecurityContext: &corev1.PodSecurityContext{RunAsUser: &root},
		Containers:      []corev1.Container{{Name: "fio"}}}}
	got := kubekit.RestrictPod(pod)
	if pod.Spec.SecurityContext.RunAsNonRoot != nil || pod.Spec.Containers[0].SecurityContext != nil {
		t.Error("RestrictPod changed its argument")
	}
	if err := restrictedAdmission(got); err != nil {
		t.Error(err)
	}
	if *got.Spec.SecurityContext.RunAsUser != kubekit.RestrictedUID {
		t.Errorf("runAsUser %d: root kept", *got.Spec.SecurityContext.RunAsUser)
	}
}
