package kubekit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// Annotations storbench puts on a node it changes, naming the run, so that
// a run killed outright leaves a change cleanup can find and undo.
const (
	// AnnotationCordonedBy marks a node storbench cordoned (graceful
	// failover check).
	AnnotationCordonedBy = "storbench.io/cordoned-by"
	// AnnotationTaintedBy marks a node that carries storbench's
	// out-of-service taint (node-failure check).
	AnnotationTaintedBy = "storbench.io/tainted-by"
)

// OutOfServiceValue is the value of the out-of-service taint storbench sets.
const OutOfServiceValue = "nodeshutdown"

// NodeMark is a change storbench made to a node: a cordon or the
// out-of-service taint, with the run that made it.
type NodeMark struct {
	Node string `json:"node"`
	// What is "cordon" or "out-of-service taint".
	What  string `json:"what"`
	RunID string `json:"run_id"`
	// Start is how the run would start a node it stopped (MarkStopped).
	Start *NodeStart `json:"start,omitempty"`
}

func (m NodeMark) String() string {
	return fmt.Sprintf("node %s: %s by run %s", m.Node, m.What, m.RunID)
}

// Mark names for NodeMark.What.
const (
	MarkCordon = "cordon"
	MarkTaint  = "out-of-service taint"
)

// FindNodeMarks lists the cordons, taints and stopped nodes storbench's
// annotations mark, of one run or, with runID "", of every run.
func FindNodeMarks(ctx context.Context, client kubernetes.Interface, runID string) ([]NodeMark, error) {
	list, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing nodes: %w", err)
	}
	var out []NodeMark
	for _, n := range list.Items {
		for what, key := range map[string]string{MarkCordon: AnnotationCordonedBy, MarkTaint: AnnotationTaintedBy} {
			if id, ok := n.Annotations[key]; ok && (runID == "" || id == runID) {
				out = append(out, NodeMark{Node: n.Name, What: what, RunID: id})
			}
		}
		if m, ok := stoppedMark(n, runID); ok { // marks_stopped.go
			out = append(out, m)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out, nil
}

// SetCordon cordons (on) a node with storbench's annotation naming runID,
// or uncordons it and removes the annotation. Uncordoning a node whose
// annotation names another run, or none, changes nothing: the cordon is
// not this run's to lift.
func SetCordon(ctx context.Context, client kubernetes.Interface, node, runID string, on bool) error {
	return patchNode(ctx, client, node, func(n *corev1.Node) (map[string]any, bool) {
		if !on && n.Annotations[AnnotationCordonedBy] != runID {
			return nil, false
		}
		var ann any
		if on {
			ann = runID
		}
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationCordonedBy: ann}},
			"spec": map[string]any{"unschedulable": on}}, true
	})
}

// SetOutOfService adds (on) the out-of-service taint with storbench's
// annotation naming runID, or removes both, keeping the node's other
// taints. Removing it from a node whose annotation names another run
// changes nothing.
func SetOutOfService(ctx context.Context, client kubernetes.Interface, node, runID string, on bool) error {
	return patchNode(ctx, client, node, func(n *corev1.Node) (map[string]any, bool) {
		if !on && n.Annotations[AnnotationTaintedBy] != runID {
			return nil, false
		}
		taints := slices.DeleteFunc(slices.Clone(n.Spec.Taints), func(t corev1.Taint) bool { return t.Key == corev1.TaintNodeOutOfService })
		var ann any
		if on {
			taints = append(taints, corev1.Taint{Key: corev1.TaintNodeOutOfService, Value: OutOfServiceValue, Effect: corev1.TaintEffectNoExecute})
			ann = runID
		}
		if taints == nil {
			taints = []corev1.Taint{}
		}
		return map[string]any{"metadata": map[string]any{"annotations": map[string]any{AnnotationTaintedBy: ann}},
			"spec": map[string]any{"taints": taints}}, true
	})
}

// UndoNodeMark lifts a mark FindNodeMarks found. For a stopped node it
// only removes the record: starting the node is the caller's (over SSH).
func UndoNodeMark(ctx context.Context, client kubernetes.Interface, m NodeMark) error {
	switch m.What {
	case MarkCordon:
		return SetCordon(ctx, client, m.Node, m.RunID, false)
	case MarkStopped:
		return SetStopped(ctx, client, m.Node, m.RunID, NodeStart{}, false)
	}
	return SetOutOfService(ctx, client, m.Node, m.RunID, false)
}

// patchNode applies the merge patch change returns for the node as read,
// with the resourceVersion it read, so a concurrent change is retried and
// never overwritten; change returns false when there is nothing to do.
func patchNode(ctx context.Context, client kubernetes.Interface, node string, change func(*corev1.Node) (map[string]any, bool)) error {
	for attempt := 0; ; attempt++ {
		n, err := client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
		if apierrors.IsNotFound(err) {
			return nil // nothing left to undo
		}
		if err != nil {
			return fmt.Errorf("reading node %s: %w", node, err)
		}
		p, ok := change(n)
		if !ok {
			return nil
		}
		p["metadata"].(map[string]any)["resourceVersion"] = n.ResourceVersion
		body, err := json.Marshal(p)
		if err != nil {
			return err
		}
		_, err = client.CoreV1().Nodes().Patch(ctx, node, types.MergePatchType, body, metav1.PatchOptions{})
		if apierrors.IsConflict(err) && attempt < 5 {
			continue
		}
		if err != nil {
			return fmt.Errorf("patching node %s: %w", node, err)
		}
		return nil
	}
}
