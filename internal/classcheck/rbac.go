package classcheck

import "github.com/storbench/storbench/internal/kubekit"

// Permissions are what `storbench classes --measure` needs beyond the
// run's (runner/kube's Permissions), none of them a change outside storbench's namespace;
// deploy/base/rbac.yaml grants them in its storbench-classes block.
var Permissions = []kubekit.Permission{
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
	{Verb: "list", Group: "storage.k8s.io", Resource: "volumeattachments", Why: "delete a claim once its volume is detached: a driver refuses to delete an attached volume, and the provisioner's retries back off (cleanup --k8s, classes --measure)"},
	{Verb: "list", Group: "storage.k8s.io", Resource: "csinodes", Why: "declared per-node driver facts (classes --measure)"},
	{Verb: "get", Group: "storage.k8s.io", Resource: "csidrivers", Why: "declared driver facts (classes --measure)"},
	{Verb: "list", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotcontents", Why: "snapshot leaks after cleanup (classes --measure)"},
}

// NodeChangePermissions are the class checks' changes outside
// storbench's namespace: opt-in (deploy/components/class-node-changes, the
// chart's rbac.classNodeChanges), bound to nothing by default.
var NodeChangePermissions = []kubekit.Permission{
	{Verb: "patch", Resource: "nodes", Why: "cordon and uncordon for the graceful failover; the out-of-service taint for the node failure; lift them after a killed run (cleanup --k8s)"},
	{Verb: "delete", Resource: "persistentvolumes", Why: "remove a Retain class's Released PVs the checks made (classes --measure)"},
}

// RBAC are the class checks' blocks, for the doctor (kubekit.FeatureChecks)
// and the deploy tests.
var RBAC = []kubekit.RBACFeature{
	{Name: "class checks (classes --measure)", Permissions: Permissions,
		Unlocks: "measuring a class: provisioning, snapshots, clones, expansion, failover timing",
		Grant:   "the storbench-classes block of deploy/base/rbac.yaml (bound by default)"},
	{Name: "class checks' node changes (opt-in)", Permissions: NodeChangePermissions,
		Unlocks: "the graceful failover check's cordon, the node-failure check's out-of-service taint, removing Released PVs, and cleanup --k8s lifting a killed run's cordon or taint",
		Grant:   "kubectl apply -k deploy/overlays/class-checks, or the chart with --set rbac.classNodeChanges=true"},
}
