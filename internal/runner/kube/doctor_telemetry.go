package kube

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// KubeletStatsPermissions are telemetry's kubelet reads: opt-in
// (deploy/components/kubelet-stats, the chart's rbac.kubeletStats), since
// nodes/proxy lets its holder run commands in any pod through the kubelet.
var KubeletStatsPermissions = []kubekit.Permission{
	{Verb: "get", Resource: "nodes", Subresource: "proxy", Why: "read each node's network counters from the kubelet's Summary API"},
}

// KubeletStatsRBAC is telemetry's opt-in block, reported by the doctor
// after the blocks it is given (DoctorOptions.RBAC).
var KubeletStatsRBAC = kubekit.RBACFeature{Name: "kubelet stats (opt-in)", Permissions: KubeletStatsPermissions,
	Unlocks: "node network counters from the kubelet's Summary API where no host-network sampler pod may run (nodes/proxy also lets its holder run commands in any pod through the kubelet)",
	Grant:   "deploy/components/kubelet-stats in your overlay, or the chart with --set rbac.kubeletStats=true"}

// telemetrySources are what node telemetry on Kubernetes reads beyond the
// pods storbench runs anyway, each with the permission that enables it.
var telemetrySources = []struct {
	perm kubekit.Permission
	what string
}{
	{KubeletStatsPermissions[0], "node network counters from the kubelet (when no host-network sampler pod may run)"},
	{kubekit.Permission{Verb: "get", Group: "ceph.rook.io", Resource: "cephblockpools", Why: "read a Rook-Ceph RBD class's pool size (its replication factor, for the breakdown)"},
		"Ceph pool size of Rook-Ceph RBD classes"},
	{kubekit.Permission{Verb: "get", Group: "ceph.rook.io", Resource: "cephfilesystems", Why: "read a Rook-Ceph CephFS class's data pool size (its replication factor, for the breakdown)"},
		"Ceph pool size of Rook-Ceph CephFS classes"},
	{kubekit.Permission{Verb: "list", Group: "longhorn.io", Resource: "replicas", Namespaced: false, Why: "find a Longhorn volume's replica nodes (their telemetry and links)"},
		"Longhorn replica nodes"},
}

// telemetryChecks say which node telemetry sources a run will have and
// what would enable each missing one. The pod's /proc and /sys (CPU,
// disk, I/O pressure, heat, frequency, links) need nothing beyond exec.
func telemetryChecks(ctx context.Context, c *kubekit.Cluster) []result.Check {
	out := []result.Check{{Area: "telemetry", Name: "node CPU, disk, pressure, heat", Status: result.CheckOK,
		Detail: "read from the fio pod's /proc and /sys, which describe its node (needs only pods/exec)"}}
	out = append(out, samplerCheck(ctx, c))
	for _, s := range telemetrySources {
		access, err := kubekit.CheckAccess(ctx, c.Client, c.Namespace(), []kubekit.Permission{s.perm})
		switch {
		case err != nil:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckWarn, Detail: err.Error()})
		case len(access) == 1 && access[0].Allowed:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckOK, Detail: "may " + s.perm.String()})
		default:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckInfo,
				Detail: fmt.Sprintf("not sampled: may not %s (to %s)", s.perm.String(), s.perm.Why),
				Fix:    "grant " + s.perm.String() + telemetryGrant(s.perm)})
		}
	}
	return out
}

// samplerCheck judges whether the run's host-network sampler pods, which
// read each node's own network counters (a pod's network namespace shows
// only its own interface), may run in storbench's namespace: Pod Security
// baseline and restricted forbid hostNetwork. The fix names the label that
// allows them and what it costs.
func samplerCheck(ctx context.Context, c *kubekit.Cluster) result.Check {
	const name = "node network counters from a host-network sampler pod"
	ns := c.Namespace()
	_, err := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return result.Check{Area: "telemetry", Name: name, Status: result.CheckOK,
			Detail: fmt.Sprintf("namespace %s does not exist yet; storbench creates it without a Pod Security label, so the cluster's default level applies (privileged unless the admission configuration says otherwise)", ns)}
	case err != nil:
		return result.Check{Area: "telemetry", Name: name, Status: result.CheckInfo,
			Detail: fmt.Sprintf("namespace %s's Pod Security level is not readable (%v); the run tries the sampler and says if it is refused", ns, kubekit.APIMessage(err))}
	}
	ps := kubekit.EffectivePodSecurity(ctx, c, ns)
	if ok, why := HostNetworkAllowed(ctx, c, ns); !ok {
		return result.Check{Area: "telemetry", Name: name, Status: result.CheckInfo,
			Detail: "not sampled: " + why + "; each node's network counters come from the kubelet's Summary API instead, which on some clusters reports the host's interfaces for every node, or not at all",
			Fix: fmt.Sprintf("kubectl label namespace %s %s=privileged --overwrite (cost: Pod Security then lets every pod in %s use the host's network, PID and IPC namespaces, host paths and privileged containers; keep %s for storbench alone)",
				ns, kubekit.PodSecurityEnforce, ns, ns)}
	}
	return result.Check{Area: "telemetry", Name: name, Status: result.CheckOK,
		Detail: fmt.Sprintf("namespace %s's Pod Security level, %s, allows hostNetwork; the sampler needs only create pods and pods/exec, which runs need anyway", ns, ps)}
}

// telemetryGrant says where the base and the chart grant a telemetry
// permission: nodes/proxy only opt-in.
func telemetryGrant(p kubekit.Permission) string {
	if p.Subresource == "proxy" {
		return " (opt-in: deploy/components/kubelet-stats, or the chart's rbac.kubeletStats; it also lets its holder run commands in pods through the kubelet)"
	}
	return " (the storbench-telemetry block of deploy/base/rbac.yaml and of the chart)"
}
