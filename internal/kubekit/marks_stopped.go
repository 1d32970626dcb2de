package kubekit

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes"
)

// Annotations on a node the node-failure check stopped: the run, and how
// that run would have started it again, so that cleanup can bring back a
// node whose run was killed while it was down.
const (
	// AnnotationStoppedBy names the run that stopped the node.
	AnnotationStoppedBy = "storbench.io/stopped-by"
	// AnnotationStartWith holds the NodeStart (JSON) of that run.
	AnnotationStartWith = "storbench.io/start-with"
)

// MarkStopped is NodeMark.What of a node the node-failure check stopped.
const MarkStopped = "stopped"

// NodeStart is how a run would start the node it stopped: the user's
// start command with {node} replaced, run over SSH on Host of the
// Ansible inventory at Inventory (a path on the machine storbench ran
// on). An empty Command means the run had none: the user starts it.
type NodeStart struct {
	Command   string `json:"command,omitempty"`
	Inventory string `json:"inventory,omitempty"`
	Host      string `json:"host,omitempty"`
}

func (s NodeStart) String() string {
	if s.Command == "" {
		return "no start command"
	}
	return fmt.Sprintf("`%s` on host %s of inventory %s", s.Command, s.Host, s.Inventory)
}

// SetStopped records (on) that runID stops the node, and how it would
// start it, before the stop command runs; off removes the record, unless
// it names another run.
func SetStopped(ctx context.Context, client kubernetes.Interface, node, runID string, start NodeStart, on bool) error {
	body, err := json.Marshal(start)
	if err != nil {
		return err
	}
	return patchNode(ctx, client, node, func(n *corev1.Node) (map[string]any, bool) {
		if !on && n.Annotations[AnnotationStoppedBy] != runID {
			return nil, false
		}
		ann := map[string]any{AnnotationStoppedBy: nil, AnnotationStartWith: nil}
		if on {
			ann = map[string]any{AnnotationStoppedBy: runID, AnnotationStartWith: string(body)}
		}
		return map[string]any{"metadata": map[string]any{"annotations": ann}}, true
	})
}

// stoppedMark reads a node's stop record, if it has one of runID (any
// run for "").
func stoppedMark(n corev1.Node, runID string) (NodeMark, bool) {
	id, ok := n.Annotations[AnnotationStoppedBy]
	if !ok || (runID != "" && id != runID) {
		return NodeMark{}, false
	}
	m := NodeMark{Node: n.Name, What: MarkStopped, RunID: id, Start: &NodeStart{}}
	if err := json.Unmarshal([]byte(n.Annotations[AnnotationStartWith]), m.Start); err != nil {
		m.Start = &NodeStart{} // unreadable: treated as no start command
	}
	return m, true
}
