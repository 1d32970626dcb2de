package kube

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// DoctorOptions say what doctor checks beyond the cluster itself.
type DoctorOptions struct {
	// Image is the fio image runs would use.
	Image string
	// RBAC are the blocks of other features (the class checks') whose
	// grant the doctor reports, before telemetry's own (KubeletStatsRBAC).
	RBAC []kubekit.RBACFeature
}

// Doctor checks that storbench can run in the cluster and describes what is
// there. It returns the checklist; it stops early only when the API server
// cannot be reached.
func Doctor(ctx context.Context, c *kubekit.Cluster, o DoctorOptions) []result.Check {
	var out []result.Check
	add := func(ch result.Check) { out = append(out, ch) }

	v, err := c.Client.Discovery().ServerVersion()
	if err != nil {
		add(result.Check{Area: "api", Name: "API server " + c.Host, Status: result.CheckFail, Detail: err.Error(),
			Fix: "check --kubeconfig/--context (kubectl cluster-info should work with the same settings)"})
		return out
	}
	add(result.Check{Area: "api", Name: "API server " + c.Host, Status: result.CheckOK, Detail: "Kubernetes " + v.GitVersion})

	ns := c.Namespace()
	_, nsErr := c.Client.CoreV1().Namespaces().Get(ctx, ns, metav1.GetOptions{})

	rbac, canCreateNS := rbacChecks(ctx, c, ns)
	out = append(out, rbac...)
	switch {
	case nsErr == nil:
		add(result.Check{Area: "namespace", Name: "namespace " + ns, Status: result.CheckOK, Detail: "exists"})
	case apierrors.IsNotFound(nsErr) && canCreateNS:
		add(result.Check{Area: "namespace", Name: "namespace " + ns, Status: result.CheckOK, Detail: "does not exist yet; storbench will create it"})
	case apierrors.IsNotFound(nsErr):
		add(result.Check{Area: "namespace", Name: "namespace " + ns, Status: result.CheckWarn, Detail: "does not exist and may not be created; runs fall back to the context's namespace",
			Fix: "kubectl create namespace " + ns + ", or pass -n NAMESPACE"})
	case apierrors.IsForbidden(nsErr):
		add(result.Check{Area: "namespace", Name: "namespace " + ns, Status: result.CheckInfo, Detail: "may not read namespaces; assuming it exists"})
	default:
		add(result.Check{Area: "namespace", Name: "namespace " + ns, Status: result.CheckWarn, Detail: nsErr.Error()})
	}

	nodes, err := c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		add(result.Check{Area: "nodes", Name: "nodes", Status: result.CheckFail, Detail: err.Error(), Fix: "grant list nodes (deploy/base/rbac.yaml)"})
	} else {
		out = append(out, nodeChecks(nodes.Items, kubekit.ImageAlias(o.Image))...)
	}

	classes, err := kubekit.Classes(ctx, c.Client, map[string][]string{})
	if err != nil {
		add(result.Check{Area: "storage", Name: "StorageClasses", Status: result.CheckFail, Detail: err.Error(), Fix: "grant list storageclasses (deploy/base/rbac.yaml)"})
	} else if len(classes) == 0 {
		add(result.Check{Area: "storage", Name: "StorageClasses", Status: result.CheckWarn, Detail: "none: there is nothing to benchmark",
			Fix: "install a provisioner (k3s ships local-path; Longhorn, NFS subdir, Rook-Ceph...)"})
	}
	provisioners := map[string]bool{}
	for _, ci := range classes {
		provisioners[ci.Provisioner] = true
		d := fmt.Sprintf("provisioner %s, binding %s, reclaim %s, expansion %v", ci.Provisioner, ci.BindingMode, ci.Reclaim, ci.Expansion)
		if ci.Default {
			d = "default; " + d
		}
		st, fix := result.CheckOK, ""
		if ci.Reclaim == "Retain" {
			st, fix = result.CheckInfo, "storbench deletes its PVCs; Retain leaves their PVs Released: it prints the kubectl delete pv command for each"
		}
		if !ci.Dynamic {
			d += "; static PVs only: each target needs a free matching PV"
		}
		add(result.Check{Area: "storage", Name: "StorageClass " + ci.Name, Status: st, Detail: d, Fix: fix})
	}
	if provisioners["driver.longhorn.io"] {
		out = append(out, longhornChecks(ctx, c, nodesOrNil(nodes))...)
	}
	out = append(out, kubekit.PodSecurityCheck(ctx, c))
	out = append(out, telemetryChecks(ctx, c)...) // doctor_telemetry.go
	out = append(out, kubekit.FeatureChecks(ctx, c, slices.Concat(o.RBAC, []kubekit.RBACFeature{KubeletStatsRBAC, RBDPodRBAC}))...)
	return out
}

// rbacChecks lists the permissions storbench lacks in namespace ns (a
// failure for a required one, information for an optional one), or says
// all required ones are granted; canCreateNS says whether it may create
// the namespace.
func rbacChecks(ctx context.Context, c *kubekit.Cluster, ns string) (out []result.Check, canCreateNS bool) {
	add := func(ch result.Check) { out = append(out, ch) }
	access, err := kubekit.CheckAccess(ctx, c.Client, ns, Permissions)
	if err != nil {
		add(result.Check{Area: "rbac", Name: "permissions", Status: result.CheckFail, Detail: err.Error()})
	}
	for _, a := range access {
		if a.Verb == "create" && a.Resource == "namespaces" {
			canCreateNS = a.Allowed
		}
		switch {
		case a.Allowed:
			continue
		case a.Required:
			where := "cluster-wide"
			if a.Namespaced {
				where = "in namespace " + ns
			}
			add(result.Check{Area: "rbac", Name: "may " + a.String(), Status: result.CheckFail,
				Detail: fmt.Sprintf("missing permission: %s %s (needed to %s)", a.String(), where, a.Why),
				Fix:    "grant it: kubectl apply -f deploy/base/rbac.yaml (see docs/kubernetes.md), or add the verb to your Role/ClusterRole"})
		default:
			add(result.Check{Area: "rbac", Name: "may " + a.String(), Status: result.CheckInfo,
				Detail: fmt.Sprintf("optional permission missing: %s (used to %s)", a.String(), a.Why)})
		}
	}
	if err == nil {
		missing := 0
		for _, a := range access {
			if a.Required && !a.Allowed {
				missing++
			}
		}
		if missing == 0 {
			add(result.Check{Area: "rbac", Name: "permissions", Status: result.CheckOK, Detail: fmt.Sprintf("all %d required permissions granted in namespace %s", countRequired(), ns)})
		}
	}
	return out, canCreateNS
}

func nodesOrNil(l *corev1.NodeList) []corev1.Node {
	if l == nil {
		return nil
	}
	return l.Items
}

func countRequired() int {
	n := 0
	for _, p := range Permissions {
		if p.Required {
			n++
		}
	}
	return n
}

// interestingLabels are node labels worth showing: the user's own
// (no domain) and storage-related ones.
func interestingLabels(l map[string]string) string {
	var out []string
	for k, v := range l {
		if !strings.Contains(k, "/") || strings.Contains(k, "storage") || strings.Contains(k, "disk") {
			out = append(out, k+"="+v)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

func nodeChecks(nodes []corev1.Node, image string) []result.Check {
	var out []result.Check
	ready := 0
	for _, n := range nodes {
		ch := result.Check{Area: "nodes", Name: "node " + n.Name, Status: result.CheckOK}
		parts := []string{n.Status.NodeInfo.Architecture}
		if l := interestingLabels(n.Labels); l != "" {
			parts = append(parts, "labels "+l)
		}
		var taints []string
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				taints = append(taints, fmt.Sprintf("%s:%s", t.Key, t.Effect))
			}
		}
		if len(taints) > 0 {
			parts = append(parts, "taints "+strings.Join(taints, ","))
			ch.Status = result.CheckInfo
			ch.Fix = "skipped by --nodes all; to include it, add a toleration with --pod-overrides (docs/kubernetes.md)"
		}
		if hasImage(n, image) {
			parts = append(parts, "image "+image+" present")
		}
		switch {
		case n.Spec.Unschedulable:
			ch.Status, ch.Fix = result.CheckWarn, "cordoned: kubectl uncordon "+n.Name
		case !kubekit.NodeReady(n):
			ch.Status, ch.Fix = result.CheckWarn, "not Ready: kubectl describe node "+n.Name
		default:
			ready++
		}
		ch.Detail = strings.Join(parts, "; ")
		out = append(out, ch)
	}
	if ready == 0 {
		out = append(out, result.Check{Area: "nodes", Name: "Ready nodes", Status: result.CheckFail, Detail: "no node is Ready", Fix: "kubectl get nodes; kubectl describe node NAME"})
	}
	if image != "" {
		seen := false
		for _, n := range nodes {
			seen = seen || hasImage(n, image)
		}
		if !seen {
			out = append(out, result.Check{Area: "image", Name: "image " + image, Status: result.CheckInfo,
				Detail: "not yet on any node: the first pod pulls it (air-gapped clusters: push the release's storbench-fio image to your registry and pass --image, docs/install.md)"})
		}
	}
	return out
}

func hasImage(n corev1.Node, image string) bool {
	if image == "" {
		return false
	}
	short := strings.TrimPrefix(image, "docker.io/library/")
	for _, im := range n.Status.Images {
		for _, name := range im.Names {
			if name == image || strings.TrimPrefix(name, "docker.io/library/") == short {
				return true
			}
		}
	}
	return false
}

// longhornChecks looks for nodes without a running Longhorn manager and
// for the iSCSI initiator errors Longhorn volumes hit on nodes lacking it.
func longhornChecks(ctx context.Context, c *kubekit.Cluster, nodes []corev1.Node) []result.Check {
	const ns = "longhorn-system"
	pods, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=longhorn-manager"})
	if err != nil {
		return []result.Check{{Area: "longhorn", Name: "Longhorn managers", Status: result.CheckInfo, Detail: "cannot list pods in " + ns + ": " + err.Error()}}
	}
	running := map[string]bool{}
	for _, p := range pods.Items {
		if p.Status.Phase == corev1.PodRunning {
			running[p.Spec.NodeName] = true
		}
	}
	var out []result.Check
	for _, n := range nodes {
		if !running[n.Name] && kubekit.NodeReady(n) && !n.Spec.Unschedulable {
			out = append(out, result.Check{Area: "longhorn", Name: "Longhorn manager on " + n.Name, Status: result.CheckWarn,
				Detail: "no Running longhorn-manager pod: Longhorn volumes cannot attach there",
				Fix:    "kubectl -n longhorn-system get pods -o wide; check the node's taints and the manager's logs"})
		}
	}
	evs, err := c.Client.CoreV1().Events("").List(ctx, metav1.ListOptions{})
	if err == nil {
		for _, e := range evs.Items {
			if strings.Contains(e.Message, "iscsiadm") {
				out = append(out, result.Check{Area: "longhorn", Name: "iSCSI initiator", Status: result.CheckFail,
					Detail: fmt.Sprintf("%s %s: %s", e.InvolvedObject.Kind, e.InvolvedObject.Name, e.Message),
					Fix:    "install open-iscsi on every node and enable iscsid (Debian/Raspberry Pi OS: apt-get install open-iscsi; systemctl enable --now iscsid)"})
				break
			}
		}
	}
	if len(out) == 0 {
		out = append(out, result.Check{Area: "longhorn", Name: "Longhorn", Status: result.CheckOK, Detail: fmt.Sprintf("manager Running on %d node(s); no iSCSI errors in events", len(running))})
	}
	return out
}
