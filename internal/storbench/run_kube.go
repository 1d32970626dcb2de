package storbench

import (
	"fmt"
	"math"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/units"
)

// KubeTargetPrefix marks a Kubernetes target: k8s:STORAGECLASS (the k8s
// kind's).
const KubeTargetPrefix = kube.TargetPrefix

// KubeRequest says where and how Kubernetes targets run: the nodes, the
// cluster, and the PVC and pod of each target (docs/kubernetes.md).
type KubeRequest struct {
	// Nodes are "all" or node names; NodeSelector keeps nodes with these
	// labels (key=value,...).
	Nodes        []string
	NodeSelector string
	Kubeconfig   string
	Context      string
	Namespace    string
	// Size is the PVC size, a Kubernetes quantity (10Gi) or storbench's
	// own (10GiB); empty fits the suite.
	Size         string
	VolumeMode   string // Filesystem or Block
	AccessMode   string // ReadWriteOnce, ReadWriteOncePod or ReadWriteMany
	Image        string
	PullPolicy   string // Always, IfNotPresent or Never
	PodOverrides string // a YAML/JSON strategic-merge patch file for the pod
	// Timeout bounds each wait (binding, scheduling, start, deletion).
	Timeout time.Duration
}

// DefaultKubeRequest is the run command's defaults.
func DefaultKubeRequest() KubeRequest {
	return KubeRequest{Nodes: []string{"all"}, VolumeMode: "Filesystem", AccessMode: "ReadWriteOnce",
		Image: kubekit.DefaultImage, PullPolicy: "IfNotPresent", Timeout: kubekit.DefaultTimeout}
}

// kind is the k8s kind with k's settings, checked. Mistakes in k are
// *RequestError.
func (k KubeRequest) kind() (kube.Kind, error) {
	opts := kube.TargetOptions{Image: k.Image, Timeout: k.Timeout}
	if k.Timeout <= 0 {
		return kube.Kind{}, refusef("%s %s: must be positive", FieldKubeTimeout, k.Timeout)
	}
	switch k.VolumeMode {
	case "Filesystem", "filesystem":
		opts.VolumeMode = corev1.PersistentVolumeFilesystem
	case "Block", "block":
		opts.VolumeMode = corev1.PersistentVolumeBlock
	default:
		return kube.Kind{}, refusef("%s %q: choose Filesystem or Block", FieldKubeVolumeMode, k.VolumeMode)
	}
	switch m := corev1.PersistentVolumeAccessMode(k.AccessMode); m {
	case corev1.ReadWriteOnce, corev1.ReadWriteOncePod, corev1.ReadWriteMany:
		opts.AccessMode = m
	case corev1.ReadOnlyMany:
		return kube.Kind{}, refusef("%s ReadOnlyMany: fio must write its test file; choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany", FieldKubeAccessMode)
	default:
		return kube.Kind{}, refusef("%s %q: choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany", FieldKubeAccessMode, k.AccessMode)
	}
	switch p := corev1.PullPolicy(k.PullPolicy); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		opts.PullPolicy = p
	default:
		return kube.Kind{}, refusef("%s %q: choose Always, IfNotPresent or Never", FieldKubePullPolicy, k.PullPolicy)
	}
	if k.Size != "" {
		n, err := parsePVCSize(k.Size)
		if err != nil {
			return kube.Kind{}, refusef("%s %q: %v", FieldKubeSize, k.Size, err)
		}
		opts.Size = n
	}
	if k.PodOverrides != "" {
		patch, err := kubekit.LoadPodOverrides(k.PodOverrides)
		if err != nil {
			return kube.Kind{}, refuse(err)
		}
		opts.PodOverrides = patch
	}
	return kube.Kind{Cluster: kubekit.ConnectOptions{Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace},
		Nodes: kubekit.NodeChoice{Names: k.Nodes, Selector: k.NodeSelector}, Target: opts}, nil
}

// parsePVCSize reads a PVC size: a Kubernetes quantity (10Gi, 500M: the
// Kubernetes meaning, so 500M is 500*10^6 bytes), else a size in
// storbench's grammar (10GiB, units.ParseSize).
func parsePVCSize(s string) (int64, error) {
	if q, err := resource.ParseQuantity(s); err == nil {
		if q.Sign() <= 0 {
			return 0, fmt.Errorf("must be positive")
		}
		// Value wraps what int64 cannot hold, and parsing clamps binary
		// suffixes at 2^63-1: take the clamp itself as too large.
		if q.Cmp(*resource.NewQuantity(math.MaxInt64, resource.BinarySI)) >= 0 {
			return 0, fmt.Errorf("%q is too large: sizes go up to %d bytes (8 EiB)", s, int64(math.MaxInt64))
		}
		return q.Value(), nil
	}
	n, err := units.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return n, nil
}
