package kube

import (
	"context"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// ClassCheckPermissions are what `storbench classes --measure` needs beyond
// Permissions, none of them a change outside storbench's namespace;
// deploy/base/rbac.yaml grants them in its storbench-classes block.
var ClassCheckPermissions = []kubekit.Permission{
	{Verb: "watch", Resource: "persistentvolumeclaims", Namespaced: true, Why: "time provisioning from watches (classes --measure)"},
	{Verb: "patch", Resource: "persistentvolumeclaims", Namespaced: true, Why: "expansion (classes --measure)"},
	{Verb: "watch", Resource: "pods", Namespaced: true, Why: "time mounts and starts (classes --measure)"},
	{Verb: "watch", Resource: "events", Namespaced: true, Why: "refusals and node pinning (classes --measure)"},
	{Verb: "create", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Namespaced: true, Why: "snapshot and restore (classes --measure)"},
	{Verb: "delete", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Namespaced: true, Why: "remove its snapshots (classes --measure, cleanup --k8s)"},
	{Verb: "list", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshots", Namespaced: true, Why: "find snapshots killed runs left (cleanup --k8s)"},
	{Verb: "watch", Resource: "persistentvolumes", Why: "time until a PV is gone (classes --measure)"},
	{Verb: "watch", Resource: "nodes", Why: "a stopped node going NotReady and coming back (classes --measure --node-stop-command)"},
	{Verb: "watch", Group: "storage.k8s.io", Resource: "volumeattachments", Why: "time attachment (classes --measure)"},
	{Verb: "list", Group: "storage.k8s.io", Resource: "csinodes", Why: "declared per-node driver facts (classes --measure)"},
	{Verb: "get", Group: "storage.k8s.io", Resource: "csidrivers", Why: "declared driver facts (classes --measure)"},
	{Verb: "list", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotcontents", Why: "snapshot leaks after cleanup (classes --measure)"},
}

// ClassNodeChangePermissions are the class checks' changes outside
// storbench's namespace: opt-in (deploy/components/class-node-changes, the
// chart's rbac.classNodeChanges), bound to nothing by default.
var ClassNodeChangePermissions = []kubekit.Permission{
	{Verb: "patch", Resource: "nodes", Why: "cordon and uncordon for the graceful failover; the out-of-service taint for the node failure; lift them after a killed run (cleanup --k8s)"},
	{Verb: "delete", Resource: "persistentvolumes", Why: "remove a Retain class's Released PVs the checks made (classes --measure)"},
}

// KubeletStatsPermissions are telemetry's kubelet reads: opt-in
// (deploy/components/kubelet-stats, the chart's rbac.kubeletStats), since
// nodes/proxy lets its holder run commands in any pod through the kubelet.
var KubeletStatsPermissions = []kubekit.Permission{
	{Verb: "get", Resource: "nodes", Subresource: "proxy", Why: "read each node's network counters from the kubelet's Summary API"},
}

// rbacFeature is one block of storbench's RBAC: its rights, what they
// unlock, and where they are granted.
type rbacFeature struct {
	name, unlocks, grant string
	perms                []kubekit.Permission
}

var rbacFeatures = []rbacFeature{
	{name: "class checks (classes --measure)", perms: ClassCheckPermissions,
		unlocks: "measuring a class: provisioning, snapshots, clones, expansion, failover timing",
		grant:   "the storbench-classes block of deploy/base/rbac.yaml (bound by default)"},
	{name: "class checks' node changes (opt-in)", perms: ClassNodeChangePermissions,
		unlocks: "the graceful failover check's cordon, the node-failure check's out-of-service taint, removing Released PVs, and cleanup --k8s lifting a killed run's cordon or taint",
		grant:   "kubectl apply -k deploy/overlays/class-checks, or the chart with --set rbac.classNodeChanges=true"},
	{name: "kubelet stats (opt-in)", perms: KubeletStatsPermissions,
		unlocks: "node network counters from the kubelet's Summary API where no host-network sampler pod may run (nodes/proxy also lets its holder run commands in any pod through the kubelet)",
		grant:   "deploy/components/kubelet-stats in your overlay, or the chart with --set rbac.kubeletStats=true"},
}

// classCheckDoctor says, per RBAC block beyond what runs need, whether it
// is granted and what it unlocks; missing blocks are information: runs do
// not need them.
func classCheckDoctor(ctx context.Context, c *kubekit.Cluster) []result.Check {
	var out []result.Check
	for _, f := range rbacFeatures {
		access, err := kubekit.CheckAccess(ctx, c.Client, c.Namespace(), f.perms)
		if err != nil {
			out = append(out, result.Check{Area: "rbac", Name: f.name, Status: result.CheckInfo, Detail: err.Error()})
			continue
		}
		var missing []string
		for _, a := range access {
			if !a.Allowed {
				missing = append(missing, a.String())
			}
		}
		if len(missing) == 0 {
			out = append(out, result.Check{Area: "rbac", Name: f.name, Status: result.CheckOK,
				Detail: fmt.Sprintf("granted (%d permissions): unlocks %s", len(access), f.unlocks)})
			continue
		}
		out = append(out, result.Check{Area: "rbac", Name: f.name, Status: result.CheckInfo,
			Detail: fmt.Sprintf("not granted (missing %s): without it, no %s", strings.Join(missing, ", "), f.unlocks),
			Fix:    f.grant})
	}
	return out
}
