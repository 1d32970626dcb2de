package kube

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/result"
)

// ClassCheckPermissions are what `storbench classes --measure` needs beyond
// Permissions; deploy/base/rbac.yaml grants them in its storbench-classes
// block. None is needed for runs, so doctor reports them as information.
var ClassCheckPermissions = []Permission{
	{Verb: "watch", Resource: "persistentvolumeclaims", Namespaced: true, Why: "time provisioning from watches (classes --measure)"},
	{Verb: "patch", Resource: "persistentvolumeclaims", Namespaced: true, Why: "expansion (classes --measure)"},
	{Verb: "watch", Resource: "pods", Namespaced: true, Why: "time mounts and starts (classes --measure)"},
	{Verb: "watch", Resource: "events", Namespaced: true, Why: "refusals and node pinning (classes --measure)"},
	{Verb: "create", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Namespaced: true, Why: "snapshot and restore (classes --measure)"},
	{Verb: "delete", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Namespaced: true, Why: "remove its snapshots (classes --measure)"},
	{Verb: "watch", Resource: "persistentvolumes", Why: "time until a PV is gone (classes --measure)"},
	{Verb: "delete", Resource: "persistentvolumes", Why: "remove a Retain class's Released PVs (classes --measure)"},
	{Verb: "patch", Resource: "nodes", Why: "cordon and uncordon for the graceful failover; the out-of-service taint for the node failure (classes --measure)"},
	{Verb: "watch", Resource: "nodes", Why: "a stopped node going NotReady and coming back (classes --measure --node-stop-command)"},
	{Verb: "watch", Group: "storage.k8s.io", Resource: "volumeattachments", Why: "time attachment (classes --measure)"},
	{Verb: "list", Group: "storage.k8s.io", Resource: "csinodes", Why: "declared per-node driver facts (classes --measure)"},
	{Verb: "get", Group: "storage.k8s.io", Resource: "csidrivers", Why: "declared driver facts (classes --measure)"},
	{Verb: "list", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotcontents", Why: "snapshot leaks after cleanup (classes --measure)"},
}

// classCheckDoctor says which of ClassCheckPermissions are missing, as
// information: runs do not need them.
func classCheckDoctor(ctx context.Context, c *Cluster) []result.Check {
	access, err := CheckAccess(ctx, c.Client, c.Namespace(), ClassCheckPermissions)
	if err != nil {
		return []result.Check{{Area: "rbac", Name: "classes --measure permissions", Status: result.CheckInfo, Detail: err.Error()}}
	}
	var missing []string
	for _, a := range access {
		if !a.Allowed {
			missing = append(missing, a.String())
		}
	}
	if len(missing) == 0 {
		return []result.Check{{Area: "rbac", Name: "classes --measure permissions", Status: result.CheckOK, Detail: fmt.Sprintf("all %d granted", len(access))}}
	}
	return []result.Check{{Area: "rbac", Name: "classes --measure permissions", Status: result.CheckInfo,
		Detail: fmt.Sprintf("missing %d: %v (classes --measure reports the checks they stop)", len(missing), missing),
		Fix:    "apply the storbench-classes block of deploy/base/rbac.yaml"}}
}
