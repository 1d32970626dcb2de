package kube

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/result"
)

// telemetrySources are what node telemetry on Kubernetes reads beyond the
// pods storbench runs anyway, each with the permission that enables it.
var telemetrySources = []struct {
	perm Permission
	what string
}{
	{Permission{Verb: "get", Resource: "nodes", Subresource: "proxy", Why: "read each node's network counters from the kubelet's Summary API"},
		"node network counters (the pod's network namespace shows only its own interface)"},
}

// telemetryChecks say which node telemetry sources a run will have and
// what would enable each missing one. The pod's /proc and /sys (CPU,
// disk, I/O pressure, heat, frequency, links) need nothing beyond exec.
func telemetryChecks(ctx context.Context, c *Cluster) []result.Check {
	out := []result.Check{{Area: "telemetry", Name: "node CPU, disk, pressure, heat", Status: result.CheckOK,
		Detail: "read from the fio pod's /proc and /sys, which describe its node (needs only pods/exec)"}}
	for _, s := range telemetrySources {
		access, err := CheckAccess(ctx, c.Client, c.Namespace(), []Permission{s.perm})
		switch {
		case err != nil:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckWarn, Detail: err.Error()})
		case len(access) == 1 && access[0].Allowed:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckOK, Detail: "may " + s.perm.String()})
		default:
			out = append(out, result.Check{Area: "telemetry", Name: s.what, Status: result.CheckInfo,
				Detail: fmt.Sprintf("not sampled: may not %s (to %s)", s.perm.String(), s.perm.Why),
				Fix:    "grant get on nodes/proxy (the telemetry block of deploy/base/rbac.yaml)"})
		}
	}
	return out
}
