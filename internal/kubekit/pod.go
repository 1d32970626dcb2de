package kubekit

import (
	"encoding/json"
	"fmt"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/strategicpatch"

	"github.com/storbench/storbench/internal/field"
)

// Conventions of the pods storbench makes, which exec, cleanup and the
// class checks rely on.
const (
	// BlockDevicePath is where a Block-mode volume appears.
	BlockDevicePath = "/dev/storbench-volume"
	// ContainerName is the fio container's name.
	ContainerName = "fio"
)

// ApplyPodOverrides applies the user's --pod-overrides (a strategic-merge
// patch, JSON) to a pod storbench makes: every pod it creates takes the
// same overrides (imagePullSecrets, tolerations, resources...). What
// cleanup and exec rely on cannot be overridden: the name, namespace and
// labels, the node selector and the first container's name.
func ApplyPodOverrides(pod *corev1.Pod, patch []byte) (*corev1.Pod, error) {
	if len(patch) == 0 {
		return pod, nil
	}
	orig, err := json.Marshal(pod)
	if err != nil {
		return nil, err
	}
	patched, err := strategicpatch.StrategicMergePatch(orig, patch, corev1.Pod{})
	if err != nil {
		return nil, field.Errorf("%s: %w", FieldPodOverrides, err)
	}
	var out corev1.Pod
	if err := json.Unmarshal(patched, &out); err != nil {
		return nil, field.Errorf("%s: the patched pod does not parse: %w", FieldPodOverrides, err)
	}
	out.Name, out.Namespace = pod.Name, pod.Namespace
	if out.Labels == nil {
		out.Labels = map[string]string{}
	}
	for k, v := range pod.Labels {
		out.Labels[k] = v
	}
	for k, v := range pod.Spec.NodeSelector {
		if out.Spec.NodeSelector == nil {
			out.Spec.NodeSelector = map[string]string{}
		}
		out.Spec.NodeSelector[k] = v
	}
	if len(out.Spec.Containers) == 0 || out.Spec.Containers[0].Name != pod.Spec.Containers[0].Name {
		return nil, field.Errorf("%s: the first container must stay %q", FieldPodOverrides, pod.Spec.Containers[0].Name)
	}
	return &out, nil
}

// ImageError is a pod whose image its node cannot pull (or, with pull
// policy Never, does not have).
type ImageError struct {
	Image, Node     string
	Reason, Message string
}

func (e *ImageError) Error() string {
	return fmt.Sprintf("image %s cannot be had on node %s (%s: %s); ways out: "+
		"push the release's storbench-fio image to a registry the nodes can pull from and pass --image REGISTRY/storbench-fio:TAG (docs/install.md); "+
		"or import it into every node (k3s: sudo k3s ctr images import storbench-fio.tar); "+
		"or pass --image with any image that has fio in it (--image alpine installs fio when the pod starts)",
		e.Image, e.Node, e.Reason, strings.TrimSpace(e.Message))
}
