package kubekit_test

import (
	"context"
	"strings"
	"testing"

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

// Pod Security as the cluster enforces it: the namespace's label, else the
// API server's answer to a dry-run pod (an unlabelled namespace under a
// cluster default of restricted, as hardened k3s, Talos and RKE2 set), and
// doctor says what the level means for storbench's pods.
func TestEffectivePodSecurity(t *testing.T) {
	ctx := context.Background()
	unlabelled := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "bench"}}
	cases := []struct {
		name       string
		labels     map[string]string
		admission  error // the API server's answer to the dry-run pod
		want       string
		wantStatus result.CheckStatus
	}{
		{"label", map[string]string{kubekit.PodSecurityEnforce: "baseline"}, nil, "baseline (namespace label", result.CheckInfo},
		{"cluster default restricted", nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x",
			errorString(`violates PodSecurity "restricted:latest": host namespaces (hostNetwork=true), runAsNonRoot != true`)), "restricted (the API server's answer", result.CheckWarn},
		{"cluster default privileged", nil, nil, "privileged (the API server admitted", result.CheckOK},
		{"dry run not allowed", nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, "x", errorString("User cannot create pods")), "unknown (may not create pods", result.CheckInfo},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ns := unlabelled.DeepCopy()
			ns.Labels = tc.labels
			f := kubekittest.NewFake(t, ns)
			dryRuns := 0
			f.Client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
				ca := a.(k8stesting.CreateAction)
				if opts := ca.(k8stesting.CreateActionImpl).CreateOptions; len(opts.DryRun) == 0 || opts.DryRun[0] != metav1.DryRunAll {
					t.Errorf("the probe pod was sent without dry run: %+v", opts)
				}
				dryRuns++
				if tc.admission != nil {
					return true, nil, tc.admission
				}
				return true, ca.GetObject(), nil
			})
			c := f.Cluster()
			if got := kubekit.EffectivePodSecurity(ctx, c, "bench").String(); !strings.HasPrefix(got, tc.want) {
				t.Errorf("got %q, want %q...", got, tc.want)
			}
			if tc.labels != nil && dryRuns != 0 {
				t.Error("a labelled namespace was probed")
			}
			if ch := kubekit.PodSecurityCheck(ctx, c); ch.Status != tc.wantStatus {
				t.Errorf("doctor: %+v, want %s", ch, tc.wantStatus)
			}
		})
	}
}

type errorString string

func (e errorString) Error() string { return string(e) }
