package classcheck

import (
	"os"
	"slices"
	"strings"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	"sigs.k8s.io/yaml"
)

// The storbench-classes block of deploy/base/rbac.yaml grants every
// permission classes --measure uses.
func TestClassCheckPermissionsGranted(t *testing.T) {
	raw, err := os.ReadFile("../../deploy/base/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role, cluster []rbacv1.PolicyRule
	for _, doc := range strings.Split(string(raw), "\n---\n") {
		var r rbacv1.ClusterRole // a Role has the same fields
		if err := yaml.Unmarshal([]byte(doc), &r); err != nil || r.Name != "storbench-classes" {
			continue
		}
		if strings.Contains(doc, "kind: Role\n") {
			role = r.Rules
		} else if strings.Contains(doc, "kind: ClusterRole\n") {
			cluster = r.Rules
		}
	}
	if role == nil || cluster == nil {
		t.Fatal("rbac.yaml has no storbench-classes Role and ClusterRole")
	}
	for _, p := range Permissions {
		rules := cluster
		if p.Namespaced {
			rules = role
		}
		ok := false
		for _, r := range rules {
			if slices.Contains(r.APIGroups, p.Group) && slices.Contains(r.Resources, p.Resource) && slices.Contains(r.Verbs, p.Verb) {
				ok = true
			}
		}
		if !ok {
			t.Errorf("rbac.yaml's storbench-classes block does not grant %s", p)
		}
	}
}
