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
