package kubekit

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/client-go/kubernetes"
	"sigs.k8s.io/yaml"

	"github.com/storbench/storbench/internal/field"
)

// NodeChoice is what the user asked for: "all" nodes, named nodes, and/or
// a label selector.
type NodeChoice struct {
	// Names are node names; empty or ["all"] means every node.
	Names []string
	// Selector is a label selector such as "storage=nvme".
	Selector string
	// Tolerations are those the pod will carry (from --pod-overrides): nodes
	// whose NoSchedule taints they tolerate are not skipped.
	Tolerations []corev1.Toleration
}

// ResolveNodes turns a NodeChoice into node names, in name order. Nodes
// named explicitly are kept even when unready or tainted (the target then
// fails with the scheduler's reason); when choosing "all" or by selector,
// nodes that are not Ready, cordoned, or carry a taint the pod does not
// tolerate are skipped, each with a reason.
func ResolveNodes(ctx context.Context, client kubernetes.Interface, ch NodeChoice) (nodes []string, skipped []string, err error) {
	all := len(ch.Names) == 0 || (len(ch.Names) == 1 && ch.Names[0] == "all")
	if !all {
		for _, n := range ch.Names {
			if n == "all" {
				return nil, nil, field.Errorf("%s: \"all\" cannot be combined with node names", FieldNodeNames)
			}
		}
	}
	sel := labels.Everything()
	if ch.Selector != "" {
		if sel, err = labels.Parse(ch.Selector); err != nil {
			return nil, nil, field.Errorf("%s %q: %w", FieldNodeSelector, ch.Selector, err)
		}
	}
	if !all {
		seen := map[string]bool{}
		for _, n := range ch.Names {
			if seen[n] {
				return nil, nil, field.Errorf("%s: %s is named twice", FieldNodeNames, n)
			}
			seen[n] = true
			node, err := client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
			if apierrors.IsForbidden(err) {
				nodes = append(nodes, n) // cannot check: let the scheduler decide
				continue
			}
			if err != nil {
				if apierrors.IsNotFound(err) {
					return nil, nil, field.Errorf("%s: node %q does not exist", FieldNodeNames, n)
				}
				return nil, nil, fmt.Errorf("reading node %s: %w", n, err)
			}
			if !sel.Matches(labels.Set(node.Labels)) {
				skipped = append(skipped, fmt.Sprintf("%s: does not match --node-selector %s", n, ch.Selector))
				continue
			}
			nodes = append(nodes, n)
		}
		return nodes, skipped, nil
	}
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
	if err != nil {
		return nil, nil, fmt.Errorf("listing nodes: %w", err)
	}
	for _, n := range list.Items {
		if why := unusable(n, ch.Tolerations); why != "" {
			skipped = append(skipped, n.Name+": "+why)
			continue
		}
		nodes = append(nodes, n.Name)
	}
	sort.Strings(nodes)
	if len(nodes) == 0 {
		msg := "no usable node"
		if ch.Selector != "" {
			msg += " matches --node-selector " + ch.Selector
		}
		if len(skipped) > 0 {
			msg += " (" + strings.Join(skipped, "; ") + ")"
		}
		return nil, skipped, fmt.Errorf("%s", msg)
	}
	return nodes, skipped, nil
}

// FakeNode reports a kwok node: it runs no containers, so a pod "runs"
// there without a process and a claim for it may never bind.
func FakeNode(n corev1.Node) bool {
	_, ok := n.Annotations["kwok.x-k8s.io/node"]
	return ok || n.Labels["type"] == "kwok"
}

// ControlPlane reports a node labelled as the cluster's control plane.
func ControlPlane(n corev1.Node) bool {
	_, cp := n.Labels["node-role.kubernetes.io/control-plane"]
	_, master := n.Labels["node-role.kubernetes.io/master"]
	return cp || master
}

// unusable says why a node cannot take storbench's pod, or "".
func unusable(n corev1.Node, tolerations []corev1.Toleration) string {
	if n.Spec.Unschedulable {
		return "cordoned"
	}
	if !NodeReady(n) {
		return "not Ready"
	}
	if FakeNode(n) {
		return "a kwok fake node: it runs no containers"
	}
	for _, t := range n.Spec.Taints {
		if t.Effect != corev1.TaintEffectNoSchedule && t.Effect != corev1.TaintEffectNoExecute {
			continue
		}
		tolerated := false
		for _, tol := range tolerations {
			if tol.ToleratesTaint(&t) {
				tolerated = true
			}
		}
		if !tolerated && ControlPlane(n) {
			return fmt.Sprintf("control-plane node, taint %s=%s:%s (name it in --nodes, with a toleration in --pod-overrides, to include it)", t.Key, t.Value, t.Effect)
		}
		if !tolerated {
			return fmt.Sprintf("taint %s=%s:%s (add a toleration with --pod-overrides, or name the node in --nodes)", t.Key, t.Value, t.Effect)
		}
	}
	return ""
}

// NodeReady reports the node's Ready condition.
func NodeReady(n corev1.Node) bool {
	for _, c := range n.Status.Conditions {
		if c.Type == corev1.NodeReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}

// OverrideTolerations reads the tolerations a pod-overrides patch adds.
func OverrideTolerations(patch []byte) []corev1.Toleration {
	var p struct {
		Spec struct {
			Tolerations []corev1.Toleration `json:"tolerations"`
		} `json:"spec"`
	}
	if err := json.Unmarshal(patch, &p); err != nil {
		return nil
	}
	return p.Spec.Tolerations
}

// LoadPodOverrides reads a strategic-merge patch for the pod from a YAML or
// JSON file and returns it as JSON.
func LoadPodOverrides(path string) ([]byte, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, field.Errorf("%s: %w", FieldPodOverrides, err)
	}
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, field.Errorf("%s %s: %w", FieldPodOverrides, path, err)
	}
	var probe map[string]any
	if err := json.Unmarshal(js, &probe); err != nil {
		return nil, field.Errorf("%s %s: want a mapping such as {spec: {tolerations: [...]}}: %w", FieldPodOverrides, path, err)
	}
	var pod corev1.Pod
	if err := json.Unmarshal(js, &pod); err != nil {
		return nil, field.Errorf("%s %s: not a pod patch: %w", FieldPodOverrides, path, err)
	}
	return js, nil
}

// NodeMemory is the largest memory capacity among the named nodes, in
// bytes: the page cache a read on any of them may be answered from. Nodes
// it may not read, or that report no memory, count as unknown; known says
// whether any reported one.
func NodeMemory(ctx context.Context, client kubernetes.Interface, nodes []string) (largest int64, known bool, err error) {
	for _, n := range nodes {
		node, err := client.CoreV1().Nodes().Get(ctx, n, metav1.GetOptions{})
		if apierrors.IsForbidden(err) || apierrors.IsNotFound(err) {
			continue
		}
		if err != nil {
			return 0, false, fmt.Errorf("reading node %s: %w", n, err)
		}
		if m := node.Status.Capacity.Memory(); m != nil && m.Value() > 0 {
			largest, known = max(largest, m.Value()), true
		}
	}
	return largest, known, nil
}
