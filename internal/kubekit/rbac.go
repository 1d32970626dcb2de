package kubekit

import (
	"context"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// RBACFeature is one block of storbench's RBAC beyond what runs need
// (Permissions of internal/runner/kube): its rights, what they unlock, and
// where they are granted. Each feature declares its own block in its own
// package (the class checks', kubelet stats') and hands it to the doctor,
// which reports every block it is given (FeatureChecks); the deploy tests
// check the manifests against the same values.
type RBACFeature struct {
	// Name says what the block is for ("class checks (classes --measure)").
	Name string
	// Unlocks says what a user has with the block granted.
	Unlocks string
	// Grant says how to grant it (a manifest, an overlay, a chart value).
	Grant       string
	Permissions []Permission
}

// FeatureChecks says, per RBAC block beyond what runs need, whether it is
// granted and what it unlocks; missing blocks are information: runs do not
// need them.
func FeatureChecks(ctx context.Context, c *Cluster, features []RBACFeature) []result.Check {
	var out []result.Check
	for _, f := range features {
		access, err := CheckAccess(ctx, c.Client, c.Namespace(), f.Permissions)
		if err != nil {
			out = append(out, result.Check{Area: "rbac", Name: f.Name, Status: result.CheckInfo, Detail: err.Error()})
			continue
		}
		var missing []string
		for _, a := range access {
			if !a.Allowed {
				missing = append(missing, a.String())
			}
		}
		if len(missing) == 0 {
			out = append(out, result.Check{Area: "rbac", Name: f.Name, Status: result.CheckOK,
				Detail: fmt.Sprintf("granted (%d permissions): unlocks %s", len(access), f.Unlocks)})
			continue
		}
		out = append(out, result.Check{Area: "rbac", Name: f.Name, Status: result.CheckInfo,
			Detail: fmt.Sprintf("not granted (missing %s): without it, no %s", strings.Join(missing, ", "), f.Unlocks),
			Fix:    f.Grant})
	}
	return out
}
