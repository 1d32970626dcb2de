// Package kube runs fio inside Kubernetes: one PersistentVolumeClaim and one
// pod per (StorageClass, node) target, fio reached through exec into the pod.
// Everything it creates carries the managed-by and run-id labels, and every
// target removes its own objects on success, failure and interruption.
//
// It is the Kubernetes target kind (kind.go: "k8s:CLASS", its doctor,
// dry run and cleanup; target.go: the PVC and pod of one target; the
// facts it adds to results: volume labels, node telemetry). The cluster
// itself (connection, nodes, exec, labels, leftovers, node marks,
// snapshots, Pod Security, Ceph and Longhorn facts) is internal/kubekit's,
// which class checks use as well.
package kube
