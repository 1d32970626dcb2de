package classcheck

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/kubekit"
)

// plan says, before anything starts, what the run will change outside its
// own namespace: the graceful failover check cordons a node of the
// cluster (the default profile's one change to a node), the node-failure
// check stops one. Printed first, so the user can stop it in time.
func (r *run) plan() string {
	var b strings.Builder
	fmt.Fprintf(&b, "plan for %s: claims, pods and snapshots in namespace %s labelled %s=%s", r.o.Class, r.ns, kubekit.LabelRunID, r.runID)
	switch {
	case r.o.NoCordon:
		b.WriteString("; no node is cordoned (--no-cordon: the graceful failover check is skipped)")
	case r.wants(CheckFailover) && len(r.nodes) >= 2:
		b.WriteString("; the graceful failover check CORDONS the node its writer lands on (one of " + strings.Join(r.nodes, ", ") +
			") for about a minute, marked with the annotation " + kubekit.AnnotationCordonedBy + "=" + r.runID +
			" and uncordoned after (storbench cleanup --k8s lifts it if storbench is killed); --no-cordon skips it")
	}
	if nf := r.o.NodeFailure; nf != nil && nf.Stop != nil && r.wants(CheckNodeFailure) {
		fmt.Fprintf(&b, "; the node-failure check STOPS node %s with %q", nf.Node, nf.StopCommand)
		if slices.Contains(r.controlPlane, nf.Node) {
			b.WriteString(" (a control-plane node: taken because you named it)")
		}
		if nf.OutOfService {
			b.WriteString(" and taints it out-of-service only once its workloads are verified gone")
		}
	}
	b.WriteString(r.cephPlan())
	return b.String()
}

// wants reports whether the options ask for the check.
func (r *run) wants(check string) bool {
	if len(r.o.Only) > 0 {
		for _, c := range r.o.Only {
			if c == check {
				return true
			}
		}
		return false
	}
	return true
}

// earlierLeftovers names what runs before this one left on the cluster (a
// run killed outright): cordons and taints marked as storbench's, and
// VolumeSnapshots with its labels. They are the user's to remove (storbench
// cleanup --k8s): another run may still be using them.
func (r *run) earlierLeftovers(ctx context.Context) []string {
	var out []string
	marks, err := kubekit.FindNodeMarks(ctx, r.c.Client, "")
	if err != nil {
		out = append(out, "could not look for nodes earlier runs left cordoned or tainted: "+err.Error())
	}
	for _, m := range marks {
		if m.RunID != r.runID {
			out = append(out, fmt.Sprintf("found %s: left by a run killed outright, or one still in progress (storbench cleanup --k8s --run %s lifts it)", m, m.RunID))
		}
	}
	snaps, err := kubekit.FindSnapshots(ctx, r.c.Client, r.ns, "")
	if err != nil {
		out = append(out, "could not look for VolumeSnapshots earlier runs left: "+err.Error())
	}
	for _, s := range snaps {
		if s.RunID != r.runID {
			out = append(out, fmt.Sprintf("found %s of run %s: left by a run killed outright, or one still in progress (storbench cleanup --k8s --run %s removes it)", s, s.RunID, s.RunID))
		}
	}
	out = append(out, r.cephLeftovers(ctx)...)
	for _, n := range out {
		r.progress("%s", n)
	}
	return out
}
