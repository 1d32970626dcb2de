package storbench

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/units"
)

// KubeTargetPrefix marks a Kubernetes target: k8s:STORAGECLASS.
const KubeTargetPrefix = "k8s:"

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
		Image: kube.DefaultImage, PullPolicy: "IfNotPresent", Timeout: kube.DefaultTimeout}
}

// KubeTargetSet is one target per StorageClass and chosen node.
type KubeTargetSet struct {
	Targets []runner.Target
	// Skipped says which nodes were left out, and why.
	Skipped []string
	// MemBytes is the largest memory of the chosen nodes (MemKnown: some
	// node reported one): what --defeat-cache must outgrow.
	MemBytes int64
	MemKnown bool
}

// KubeTargets checks k, connects to the cluster and makes one target per
// class and chosen node, in class order. report hears notices that arrive
// during cleanup, from the targets' own goroutines. Mistakes in k are
// *RequestError.
func KubeTargets(ctx context.Context, k KubeRequest, classes []string, report func(target, msg string)) (*KubeTargetSet, error) {
	opts := kube.TargetOptions{Image: k.Image, Timeout: k.Timeout, Report: report}
	if k.Timeout <= 0 {
		return nil, refusef("%s %s: must be positive", FieldKubeTimeout, k.Timeout)
	}
	switch k.VolumeMode {
	case "Filesystem", "filesystem":
		opts.VolumeMode = corev1.PersistentVolumeFilesystem
	case "Block", "block":
		opts.VolumeMode = corev1.PersistentVolumeBlock
	default:
		return nil, refusef("%s %q: choose Filesystem or Block", FieldKubeVolumeMode, k.VolumeMode)
	}
	switch m := corev1.PersistentVolumeAccessMode(k.AccessMode); m {
	case corev1.ReadWriteOnce, corev1.ReadWriteOncePod, corev1.ReadWriteMany:
		opts.AccessMode = m
	case corev1.ReadOnlyMany:
		return nil, refusef("%s ReadOnlyMany: fio must write its test file; choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany", FieldKubeAccessMode)
	default:
		return nil, refusef("%s %q: choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany", FieldKubeAccessMode, k.AccessMode)
	}
	switch p := corev1.PullPolicy(k.PullPolicy); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		opts.PullPolicy = p
	default:
		return nil, refusef("%s %q: choose Always, IfNotPresent or Never", FieldKubePullPolicy, k.PullPolicy)
	}
	if k.Size != "" {
		n, err := parsePVCSize(k.Size)
		if err != nil {
			return nil, refusef("%s %q: %v", FieldKubeSize, k.Size, err)
		}
		opts.Size = n
	}
	if k.PodOverrides != "" {
		patch, err := kube.LoadPodOverrides(k.PodOverrides)
		if err != nil {
			return nil, refuse(err)
		}
		opts.PodOverrides = patch
	}
	cluster, err := kube.Connect(kube.ConnectOptions{Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace})
	if err != nil {
		return nil, refuse(err)
	}
	lctx, cancel := context.WithTimeout(ctx, k.Timeout)
	defer cancel()
	nodes, skipped, err := kube.ResolveNodes(lctx, cluster.Client, kube.NodeChoice{
		Names: k.Nodes, Selector: k.NodeSelector, Tolerations: kube.OverrideTolerations(opts.PodOverrides)})
	if err != nil {
		return nil, refuse(fmt.Errorf("choosing nodes on %s: %w", cluster.Host, err))
	}
	set := &KubeTargetSet{Skipped: skipped}
	if classes, err = resolveClasses(lctx, cluster, classes, report); err != nil {
		return nil, err
	}
	if set.MemBytes, set.MemKnown, err = kube.NodeMemory(lctx, cluster.Client, nodes); err != nil {
		return nil, err
	}
	for _, class := range classes {
		for _, n := range nodes {
			set.Targets = append(set.Targets, kube.NewTarget(cluster, class, n, len(set.Targets)+1, opts))
		}
	}
	return set, nil
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

// splitKubeTarget reports whether t names a Kubernetes class, and which.
func splitKubeTarget(t string) (class string, ok bool, err error) {
	class, ok = strings.CutPrefix(t, KubeTargetPrefix)
	if !ok {
		return "", false, nil
	}
	if class == "" || strings.ContainsAny(class, "@/ ") {
		return "", true, refusef("%s: %s: write k8s:STORAGECLASS (choose nodes with %s or %s)", FieldTargets, t, FieldKubeNodes, FieldKubeSelector)
	}
	return class, true, nil
}

// resolveClasses turns k8s:default into the cluster's default StorageClass
// (kube.ResolveClass), saying which it is.
func resolveClasses(ctx context.Context, c *kube.Cluster, classes []string, report func(target, msg string)) ([]string, error) {
	out := make([]string, len(classes))
	for i, class := range classes {
		name, note, err := kube.ResolveClass(ctx, c.Client, class)
		if err != nil {
			return nil, refuse(err)
		}
		if note != "" && report != nil {
			report("", note)
		}
		out[i] = name
	}
	return out, nil
}
