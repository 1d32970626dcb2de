package runcmd

import (
	"context"
	"fmt"
	"io"
	"math"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
)

// TargetPrefix marks a Kubernetes target: k8s:STORAGECLASS.
const TargetPrefix = "k8s:"

// kubeFlags are the flags of Kubernetes targets.
type kubeFlags struct {
	classes      []string // from --target k8s:CLASS, in order
	nodes        []string
	nodeSelector string
	rounds       []string
	kubeconfig   string
	context      string
	namespace    string
	size         string
	volumeMode   string
	accessMode   string
	image        string
	pullPolicy   string
	podOverrides string
	timeout      time.Duration
}

func addKubeFlags(fl *pflag.FlagSet, k *kubeFlags) {
	fl.StringSliceVar(&k.nodes, "nodes", []string{"all"}, "k8s targets: all, or node names (comma-separated) to run on")
	fl.StringVar(&k.nodeSelector, "node-selector", "", "k8s targets: only nodes with these labels, e.g. storage=nvme")
	fl.StringSliceVar(&k.rounds, "rounds", []string{result.RoundIsolated}, "isolated (each target alone), parallel (each workload on all targets at once), or both in order: isolated,parallel")
	fl.StringVar(&k.kubeconfig, "kubeconfig", "", "kubeconfig file (default $KUBECONFIG, ~/.kube/config, or the in-cluster service account)")
	fl.StringVar(&k.context, "context", "", "kubeconfig context to use")
	fl.StringVarP(&k.namespace, "namespace", "n", "", "namespace for storbench's PVCs and pods (default: storbench, created if allowed, else the context's)")
	fl.StringVar(&k.size, "size", "", "k8s targets: PVC size, e.g. 10Gi (default: the suite's largest file plus 25% and 64 MiB, in whole GiB)")
	fl.StringVar(&k.volumeMode, "volume-mode", "Filesystem", "k8s targets: Filesystem, or Block to give fio the PVC's raw device")
	fl.StringVar(&k.accessMode, "access-mode", "ReadWriteOnce", "k8s targets: PVC access mode: ReadWriteOnce, ReadWriteOncePod, ReadWriteMany")
	fl.StringVar(&k.image, "image", kube.DefaultImage, "k8s targets: container image with sh and fio (the default Alpine image installs fio at start)")
	fl.StringVar(&k.pullPolicy, "image-pull-policy", "IfNotPresent", "k8s targets: Always, IfNotPresent or Never")
	fl.StringVar(&k.podOverrides, "pod-overrides", "", "k8s targets: YAML/JSON strategic-merge patch for the pod (tolerations, resources, securityContext...)")
	fl.DurationVar(&k.timeout, "timeout", kube.DefaultTimeout, "k8s targets: bound on each wait (binding, scheduling, start, deletion)")
}

// kubeFlagNames are the flags that only mean something with k8s targets.
var kubeFlagNames = []string{"nodes", "node-selector", "kubeconfig", "context", "namespace", "size", "volume-mode",
	"access-mode", "image", "image-pull-policy", "pod-overrides", "timeout"}

// checkRounds validates --rounds into the plan.
func checkRounds(plan *engine.Plan, k *kubeFlags) error {
	seen := map[string]bool{}
	for _, r := range k.rounds {
		switch r {
		case result.RoundIsolated, result.RoundParallel:
		default:
			return cli.Usagef("--rounds %q: choose isolated, parallel, or isolated,parallel", r)
		}
		if seen[r] {
			return cli.Usagef("--rounds names %s twice", r)
		}
		seen[r] = true
	}
	if !seen[result.RoundParallel] {
		return nil
	}
	if plan.Contention != nil {
		return cli.Usagef("--rounds parallel and --round contention are separate experiments: run them one at a time")
	}
	plan.Rounds = k.rounds
	return nil
}

// kubeTargets connects to the cluster and makes one target per class and
// chosen node. report hears notices that arrive during cleanup.
func kubeTargets(ctx context.Context, k *kubeFlags, changed func(string) bool, report func(target, msg string)) ([]runner.Target, []string, error) {
	if len(k.classes) == 0 {
		for _, name := range kubeFlagNames {
			if changed(name) {
				return nil, nil, cli.Usagef("--%s applies to Kubernetes targets: add --target k8s:STORAGECLASS", name)
			}
		}
		return nil, nil, nil
	}
	opts := kube.TargetOptions{Image: k.image, Timeout: k.timeout, Report: report}
	if k.timeout <= 0 {
		return nil, nil, cli.Usagef("--timeout %s: must be positive", k.timeout)
	}
	switch k.volumeMode {
	case "Filesystem", "filesystem":
		opts.VolumeMode = corev1.PersistentVolumeFilesystem
	case "Block", "block":
		opts.VolumeMode = corev1.PersistentVolumeBlock
	default:
		return nil, nil, cli.Usagef("--volume-mode %q: choose Filesystem or Block", k.volumeMode)
	}
	switch m := corev1.PersistentVolumeAccessMode(k.accessMode); m {
	case corev1.ReadWriteOnce, corev1.ReadWriteOncePod, corev1.ReadWriteMany:
		opts.AccessMode = m
	case corev1.ReadOnlyMany:
		return nil, nil, cli.Usagef("--access-mode ReadOnlyMany: fio must write its test file; choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany")
	default:
		return nil, nil, cli.Usagef("--access-mode %q: choose ReadWriteOnce, ReadWriteOncePod or ReadWriteMany", k.accessMode)
	}
	switch p := corev1.PullPolicy(k.pullPolicy); p {
	case corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
		opts.PullPolicy = p
	default:
		return nil, nil, cli.Usagef("--image-pull-policy %q: choose Always, IfNotPresent or Never", k.pullPolicy)
	}
	if k.size != "" {
		n, err := parseSize(k.size)
		if err != nil {
			return nil, nil, cli.Usagef("--size %q: %v", k.size, err)
		}
		opts.Size = n
	}
	if k.podOverrides != "" {
		patch, err := kube.LoadPodOverrides(k.podOverrides)
		if err != nil {
			return nil, nil, cli.Usage(err)
		}
		opts.PodOverrides = patch
	}
	cluster, err := kube.Connect(kube.ConnectOptions{Kubeconfig: k.kubeconfig, Context: k.context, Namespace: k.namespace})
	if err != nil {
		return nil, nil, cli.Usage(err)
	}
	lctx, cancel := context.WithTimeout(ctx, k.timeout)
	defer cancel()
	nodes, skipped, err := kube.ResolveNodes(lctx, cluster.Client, kube.NodeChoice{
		Names: k.nodes, Selector: k.nodeSelector, Tolerations: kube.OverrideTolerations(opts.PodOverrides)})
	if err != nil {
		return nil, nil, cli.Usage(fmt.Errorf("choosing nodes on %s: %w", cluster.Host, err))
	}
	var notices []string
	for _, s := range skipped {
		notices = append(notices, "skipping node "+s)
	}
	var out []runner.Target
	for _, class := range k.classes {
		for _, n := range nodes {
			out = append(out, kube.NewTarget(cluster, class, n, len(out)+1, opts))
		}
	}
	return out, notices, nil
}

// parseSize reads a Kubernetes quantity (10Gi, 500M) or storbench's own
// sizes (10GiB).
func parseSize(s string) (int64, error) {
	if q, err := resource.ParseQuantity(s); err == nil {
		if q.Sign() <= 0 {
			return 0, fmt.Errorf("must be positive")
		}
		// Value wraps what int64 cannot hold, and parsing clamps binary
		// suffixes at 2^63-1: compare exactly, taking the clamp as too large.
		d := q.AsDec()
		v := new(big.Int).Set(d.UnscaledBig())
		if sc := int64(d.Scale()); sc < 0 {
			v.Mul(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(-sc), nil))
		} else {
			v.Quo(v, new(big.Int).Exp(big.NewInt(10), big.NewInt(sc), nil))
		}
		if v.Cmp(big.NewInt(math.MaxInt64)) >= 0 {
			return 0, fmt.Errorf("%q is too large: sizes go up to %d bytes (8 EiB)", s, int64(math.MaxInt64))
		}
		return q.Value(), nil
	}
	n, err := spec.ParseSize(s)
	if err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("must be positive")
	}
	return int64(n), nil
}

// splitKubeTarget reports whether t names a Kubernetes class, and which.
func splitKubeTarget(t string) (class string, ok bool, err error) {
	class, ok = strings.CutPrefix(t, TargetPrefix)
	if !ok {
		return "", false, nil
	}
	if class == "" || strings.ContainsAny(class, "@/ ") {
		return "", true, cli.Usagef("--target %s: write k8s:STORAGECLASS (choose nodes with --nodes or --node-selector)", t)
	}
	return class, true, nil
}

// lockedNotices prints notices from several goroutines one line at a time.
func lockedNotices(w io.Writer) func(target, msg string) {
	var mu sync.Mutex
	return func(target, msg string) {
		mu.Lock()
		defer mu.Unlock()
		fmt.Fprintf(w, "notice: %s: %s\n", target, msg)
	}
}

// changedFlag reports whether the user set a flag; false outside cobra.
func (f *flags) changedFlag(name string) bool {
	return f.changed != nil && f.changed(name)
}
