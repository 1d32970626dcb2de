package deploytest

import (
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner/kube"
)

// boundRules are the rules of every Role and ClusterRole the objects bind
// to the storbench ServiceAccount.
func boundRules(t *testing.T, objs rendered) []rbacv1.PolicyRule {
	t.Helper()
	var out []rbacv1.PolicyRule
	for _, o := range objs {
		if o.GetKind() != "RoleBinding" && o.GetKind() != "ClusterRoleBinding" {
			continue
		}
		var rb rbacv1.RoleBinding // a ClusterRoleBinding has the same fields
		objs.find(t, o.GetKind(), o.GetName(), &rb)
		for _, s := range rb.Subjects {
			if s.Kind == "ServiceAccount" && s.Name == "storbench" {
				out = append(out, objs.rules(t, rb.RoleRef.Kind, rb.RoleRef.Name)...)
			}
		}
	}
	return out
}

func grants(rules []rbacv1.PolicyRule, p kubekit.Permission) bool {
	res := p.Resource
	if p.Subresource != "" {
		res += "/" + p.Subresource
	}
	return allows(rules, p.Group, res, p.Verb)
}

// Least privilege by default: the base binds nothing that changes a node
// or deletes a PersistentVolume, and not nodes/proxy (which lets its
// holder run commands in pods through the kubelet); the class checks'
// node changes come with deploy/overlays/class-checks, the kubelet's
// Summary API with deploy/components/kubelet-stats, each bound to the
// same ServiceAccount. Run, telemetry's reads and the class checks'
// reads stay granted by default.
func TestRBACOptIn(t *testing.T) {
	base := boundRules(t, render(t, "base"))
	for _, p := range append(append([]kubekit.Permission{}, classcheck.NodeChangePermissions...), kube.KubeletStatsPermissions...) {
		if grants(base, p) {
			t.Errorf("the base binds %s by default (%s)", p, p.Why)
		}
	}
	for _, p := range kube.Permissions {
		if p.Required && !grants(base, p) {
			t.Errorf("the base does not bind %s (%s)", p, p.Why)
		}
	}
	for _, p := range classcheck.Permissions {
		if !grants(base, p) {
			t.Errorf("the base does not bind the class checks' %s (%s)", p, p.Why)
		}
	}
	classChecks := boundRules(t, render(t, "overlays/class-checks"))
	for _, p := range classcheck.NodeChangePermissions {
		if !grants(classChecks, p) {
			t.Errorf("deploy/overlays/class-checks does not bind %s (%s)", p, p.Why)
		}
	}
	if grants(classChecks, kube.KubeletStatsPermissions[0]) {
		t.Error("deploy/overlays/class-checks binds nodes/proxy")
	}
	stats := boundRules(t, render(t, "components/kubelet-stats"))
	if !grants(stats, kube.KubeletStatsPermissions[0]) {
		t.Error("deploy/components/kubelet-stats does not bind get nodes/proxy")
	}
}
