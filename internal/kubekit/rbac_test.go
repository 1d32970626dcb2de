package kubekit_test

import (
	"context"
	"errors"
	"testing"

	authv1 "k8s.io/api/authorization/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// FeatureChecks reports each block it is given, in order: granted, not
// granted (naming what is missing, with the block's grant as the fix), or
// not checkable (the API server's error).
func TestFeatureChecks(t *testing.T) {
	watch := kubekit.Permission{Verb: "watch", Resource: "pods", Namespaced: true}
	patch := kubekit.Permission{Verb: "patch", Resource: "nodes"}
	features := []kubekit.RBACFeature{
		{Name: "watching", Unlocks: "timing starts", Grant: "apply watch.yaml", Permissions: []kubekit.Permission{watch}},
		{Name: "node changes", Unlocks: "cordons", Grant: "apply nodes.yaml", Permissions: []kubekit.Permission{watch, patch}},
	}
	for _, tc := range []struct {
		name    string
		allowed map[string]bool
		fail    error
		want    []result.Check
	}{
		{name: "all granted", allowed: map[string]bool{"watch": true, "patch": true}, want: []result.Check{
			{Area: "rbac", Name: "watching", Status: result.CheckOK, Detail: "granted (1 permissions): unlocks timing starts"},
			{Area: "rbac", Name: "node changes", Status: result.CheckOK, Detail: "granted (2 permissions): unlocks cordons"},
		}},
		{name: "one block missing a right", allowed: map[string]bool{"watch": true}, want: []result.Check{
			{Area: "rbac", Name: "watching", Status: result.CheckOK, Detail: "granted (1 permissions): unlocks timing starts"},
			{Area: "rbac", Name: "node changes", Status: result.CheckInfo, Detail: "not granted (missing patch nodes): without it, no cordons", Fix: "apply nodes.yaml"},
		}},
		{name: "reviews refused", fail: errors.New("no reviews here"), want: []result.Check{
			{Area: "rbac", Name: "watching", Status: result.CheckInfo, Detail: "checking watch pods: no reviews here"},
			{Area: "rbac", Name: "node changes", Status: result.CheckInfo, Detail: "checking watch pods: no reviews here"},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			client := fake.NewClientset()
			client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
				if tc.fail != nil {
					return true, nil, tc.fail
				}
				r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
				r.Status.Allowed = tc.allowed[r.Spec.ResourceAttributes.Verb]
				return true, r, nil
			})
			got := kubekit.FeatureChecks(context.Background(), kubekit.NewClusterForClient(client, nil, "bench"), features)
			if len(got) != len(tc.want) {
				t.Fatalf("got %d checks, want %d: %+v", len(got), len(tc.want), got)
			}
			for i := range got {
				if got[i] != tc.want[i] {
					t.Errorf("check %d:\n got %+v\nwant %+v", i, got[i], tc.want[i])
				}
			}
		})
	}
}
