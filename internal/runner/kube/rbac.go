package kube

import "github.com/storbench/storbench/internal/kubekit"

// Permissions lists everything a run (and its doctor and cleanup) does in
// a cluster; deploy/base/rbac.yaml grants exactly the required ones. Other
// features declare their own blocks (kubekit.RBACFeature).
var Permissions = []kubekit.Permission{
	{Verb: "create", Resource: "persistentvolumeclaims", Namespaced: true, Required: true, Why: "one PVC per target"},
	{Verb: "get", Resource: "persistentvolumeclaims", Namespaced: true, Required: true, Why: "wait for binding"},
	{Verb: "list", Resource: "persistentvolumeclaims", Namespaced: true, Required: true, Why: "find leftovers (cleanup)"},
	{Verb: "delete", Resource: "persistentvolumeclaims", Namespaced: true, Required: true, Why: "remove its PVCs"},
	{Verb: "patch", Resource: "persistentvolumeclaims", Namespaced: true, Why: "touch a bound PVC whose pod the scheduler still sets aside as unbound (a scheduler race under load), so the pod need not wait the scheduler's 5-minute retry"},
	{Verb: "create", Resource: "pods", Namespaced: true, Required: true, Why: "one fio pod per target"},
	{Verb: "get", Resource: "pods", Namespaced: true, Required: true, Why: "wait for the pod to run"},
	{Verb: "list", Resource: "pods", Namespaced: true, Required: true, Why: "find leftovers (cleanup)"},
	{Verb: "delete", Resource: "pods", Namespaced: true, Required: true, Why: "remove its pods"},
	{Verb: "create", Resource: "pods", Subresource: "exec", Namespaced: true, Required: true, Why: "run fio in the pod"},
	{Verb: "get", Resource: "pods", Subresource: "exec", Namespaced: true, Required: true, Why: "run fio in the pod (WebSocket exec)"},
	{Verb: "list", Resource: "events", Namespaced: true, Required: true, Why: "explain a PVC or pod that does not start"},
	{Verb: "get", Resource: "nodes", Required: true, Why: "node labels for results"},
	{Verb: "list", Resource: "nodes", Required: true, Why: "choosing every node, or nodes by a label selector"},
	{Verb: "get", Group: "storage.k8s.io", Resource: "storageclasses", Required: true, Why: "provisioner and parameters for results"},
	{Verb: "list", Group: "storage.k8s.io", Resource: "storageclasses", Required: true, Why: "storbench classes"},
	{Verb: "get", Resource: "persistentvolumes", Required: true, Why: "the volume behind each PVC; Released volumes"},
	{Verb: "list", Resource: "persistentvolumes", Required: true, Why: "Released volumes (cleanup)"},
	{Verb: "get", Resource: "namespaces", Why: "check storbench's namespace exists"},
	{Verb: "create", Resource: "namespaces", Why: "create the storbench namespace"},
	{Verb: "list", Group: "snapshot.storage.k8s.io", Resource: "volumesnapshotclasses", Why: "snapshot support (classes)"},
	{Verb: "list", Resource: "pods", Why: "check provisioner health (Longhorn manager pods)"},
}

// RBDPodPermissions are what k8s:rbd:POOL does beyond a run's usual
// objects (enginepod_rbd.go): the run's own Secret with the Ceph
// configuration, made in storbench's namespace and deleted after the
// run, read from the Secret the user names or from Rook's objects (in
// Rook's namespace, rook-ceph by default: grant those two there).
var RBDPodPermissions = []kubekit.Permission{
	{Verb: "create", Resource: "secrets", Namespaced: true, Why: "the run's Ceph configuration for its rbd pods"},
	{Verb: "delete", Resource: "secrets", Namespaced: true, Why: "remove the run's Ceph configuration"},
	{Verb: "get", Resource: "secrets", Namespaced: true, Why: "read the Ceph configuration Secret a k8s:rbd target names (?secret=), or Rook's rook-ceph-mon"},
	{Verb: "get", Resource: "configmaps", Namespaced: true, Why: "read Rook's rook-ceph-mon-endpoints (the monitors) for a k8s:rbd target"},
	{Verb: "list", Resource: "secrets", Namespaced: true, Why: "find the Ceph configurations killed k8s:rbd runs left, and so their images (cleanup)"},
}

// RBDPodRBAC is k8s:rbd:POOL's block, opt-in: it is not in
// deploy/base/rbac.yaml, since reading Secrets is more than class runs
// need; the doctor reports whether it is granted.
var RBDPodRBAC = kubekit.RBACFeature{Name: "Ceph RBD from pods (k8s:rbd:POOL)", Permissions: RBDPodPermissions,
	Unlocks: "fio's rbd engine from a pod on each node, with the Ceph configuration from a named Secret or Rook's objects",
	Grant:   "a Role in storbench's namespace with these verbs on secrets (and, for Rook's objects, get on secrets and configmaps in Rook's namespace; for the pool's facts through Rook's toolbox, list on pods and create on pods/exec there, or from Rook's objects alone, list on pods and get and list on cephblockpools.ceph.rook.io there): see docs/ceph.md"}
