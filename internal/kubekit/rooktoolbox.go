package kubekit

import (
	"context"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Rook's toolbox (Rook's deploy/examples/toolbox.yaml): a Deployment in
// the Ceph cluster's namespace whose pods, labelled app=rook-ceph-tools,
// run the ceph CLI with the cluster's configuration and client.admin's
// key, which the toolbox writes from Rook's own objects as it starts.
const (
	RookToolboxSelector  = "app=rook-ceph-tools"
	RookToolboxContainer = "rook-ceph-tools"
)

// RookToolbox is a Cmder for the ceph CLI in a running, ready pod of
// Rook's toolbox in namespace ns (the first by name), in its container
// rook-ceph-tools (or its only one). Listing pods and exec there need
// list on pods and create on pods/exec in that namespace.
func RookToolbox(ctx context.Context, c *Cluster, ns string) (*PodCmder, error) {
	list, err := c.Client.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: RookToolboxSelector})
	if err != nil {
		return nil, fmt.Errorf("Rook's toolbox in namespace %s: listing pods %s: %w", ns, RookToolboxSelector, err)
	}
	pods := list.Items
	slices.SortFunc(pods, func(a, b corev1.Pod) int { return strings.Compare(a.Name, b.Name) })
	var seen []string
	for _, p := range pods {
		if p.DeletionTimestamp != nil || p.Status.Phase != corev1.PodRunning || !podReady(&p) {
			seen = append(seen, fmt.Sprintf("%s (%s, not ready)", p.Name, p.Status.Phase))
			continue
		}
		container := ""
		for _, ct := range p.Spec.Containers {
			if ct.Name == RookToolboxContainer || len(p.Spec.Containers) == 1 {
				container = ct.Name
			}
		}
		if container == "" {
			seen = append(seen, fmt.Sprintf("%s (no container %s)", p.Name, RookToolboxContainer))
			continue
		}
		return &PodCmder{Exec: c.Exec, Namespace: ns, Pod: p.Name, Container: container}, nil
	}
	if len(seen) == 0 {
		return nil, fmt.Errorf("no pod labelled %s in namespace %s: deploy Rook's toolbox (kubectl apply -f deploy/examples/toolbox.yaml from Rook's repository)", RookToolboxSelector, ns)
	}
	return nil, fmt.Errorf("no running, ready pod of Rook's toolbox in namespace %s: %s", ns, strings.Join(seen, ", "))
}

// podReady says whether the pod's Ready condition is true.
func podReady(p *corev1.Pod) bool {
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReady {
			return c.Status == corev1.ConditionTrue
		}
	}
	return false
}
