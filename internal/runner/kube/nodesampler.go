package kube

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
)

// Where node network counters come from, as result.Telemetry's Sources
// name them.
const (
	SourceSampler = "host-network sampler pod"
	SourceSummary = "the kubelet's Summary API (nodes/proxy)"
)

// HostNetworkAllowed reads the Pod Security level the namespace enforces
// (its label, else the cluster's default as the API server applies it:
// EffectivePodSecurity) and says whether a hostNetwork pod may run there,
// and if not why and what label would allow it. A level that cannot be
// read is not judged: the API server's answer to the pod decides.
func HostNetworkAllowed(ctx context.Context, c *kubekit.Cluster, ns string) (bool, string) {
	ps := kubekit.EffectivePodSecurity(ctx, c, ns)
	if kubekit.PodSecurityForbids(ps.Level) {
		return false, fmt.Sprintf("namespace %s enforces Pod Security %q (%s), which forbids hostNetwork (%s=privileged would allow it)", ns, ps.Level, ps.Source, kubekit.PodSecurityEnforce)
	}
	return true, ""
}

// otherNodes are the run's nodes beside fio's that hold its data: the
// nodes a user names (result.LabelReplicaNodes), and the node a PV's
// affinity pins the volume to when it is not fio's.
func otherNodes(fioNode string, labels map[string]string) []string {
	var out []string
	add := func(n string) {
		if n = strings.TrimSpace(n); n != "" && n != fioNode && !slices.Contains(out, n) {
			out = append(out, n)
		}
	}
	for _, n := range strings.Split(result.LabelReplicaNodes.Of(labels), ",") {
		add(n)
	}
	add(result.LabelVolumeNode.Of(labels))
	return out
}

// nodeStream is one node's host-network sampler pod and its stream of
// the node's counters; err says why there is none.
type nodeStream struct {
	node   string
	pod    string
	stream *telemetry.Stream
	err    error
}

// samplerPod is one node's host-network pod, made once and shared by
// the target's telemetry and its network round; err says why there is
// none.
type samplerPod struct {
	node, name string
	cmder      *kubekit.PodCmder
	err        error
	ready      chan struct{}
}

// samplerPods are the host-network sampler pods of one target, one per
// node, made on first use.
type samplerPods struct {
	t       *Target
	ns      string
	base    string
	runID   string
	mu      sync.Mutex
	byNode  map[string]*samplerPod
	checked bool
	denied  error
	created []result.KubeObject
}

// get returns each node's sampler pod, running, making those not yet
// made together; one that cannot run carries why.
func (s *samplerPods) get(ctx context.Context, nodes []string) []*samplerPod {
	s.mu.Lock()
	if !s.checked {
		s.checked = true
		if ok, why := HostNetworkAllowed(ctx, s.t.cluster, s.ns); !ok {
			s.denied = errors.New(why)
		}
	}
	if s.byNode == nil {
		s.byNode = map[string]*samplerPod{}
	}
	out := make([]*samplerPod, len(nodes))
	for i, n := range nodes {
		sp := s.byNode[n]
		if sp == nil {
			sp = &samplerPod{node: n, name: fmt.Sprintf("%s-node-%d", s.base, len(s.byNode)), ready: make(chan struct{})}
			s.byNode[n] = sp
			if s.denied != nil {
				sp.err = s.denied
				close(sp.ready)
			} else {
				go func() {
					defer close(sp.ready)
					sp.cmder, sp.err = s.startOne(ctx, sp.name, sp.node)
				}()
			}
		}
		out[i] = sp
	}
	s.mu.Unlock()
	for _, sp := range out {
		<-sp.ready
	}
	return out
}

// streams starts a stream of each node's counters from its sampler pod.
func (s *samplerPods) streams(ctx context.Context, nodes []string) []*nodeStream {
	pods := s.get(ctx, nodes)
	out := make([]*nodeStream, len(pods))
	var wg sync.WaitGroup
	for i, sp := range pods {
		out[i] = &nodeStream{node: sp.node, pod: sp.name, err: sp.err}
		if sp.err != nil {
			continue
		}
		wg.Add(1)
		go func(ns *nodeStream) {
			defer wg.Done()
			if ns.stream, ns.err = telemetry.StartStream(sp.cmder, "kube"); ns.err != nil {
				ns.err = fmt.Errorf("streaming node %s's counters from sampler pod %s: %w", ns.node, ns.pod, ns.err)
			}
		}(out[i])
	}
	wg.Wait()
	return out
}

// samplerScript keeps a sampler container alive for exec.
const samplerScript = `trap 'exit 0' TERM INT
while :; do sleep 3600 & wait $!; done`

// samplerSpec is a pod on the node's own network (hostNetwork), whose
// /proc/net and /sys/class/net are the node's, pinned to the node by its
// hostname label and tolerating its taints (replica nodes may carry
// them), with the user's pod overrides as every pod storbench makes. It
// reads, and needs no privilege beyond the host network.
func (s *samplerPods) samplerSpec(name, hostname string) (*corev1.Pod, error) {
	grace, no := int64(2), false
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: s.ns, Labels: s.t.labels(s.runID),
			Annotations: map[string]string{kubekit.AnnotationTarget: s.t.Name()}},
		Spec: corev1.PodSpec{
			NodeSelector:                  map[string]string{corev1.LabelHostname: hostname},
			HostNetwork:                   true,
			RestartPolicy:                 corev1.RestartPolicyNever,
			TerminationGracePeriodSeconds: &grace,
			AutomountServiceAccountToken:  &no,
			EnableServiceLinks:            &no,
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{Name: kubekit.ContainerName, Image: s.t.opts.Image, ImagePullPolicy: s.t.opts.PullPolicy,
				Command: []string{"sh", "-c", samplerScript}}},
		},
	}
	out, err := kubekit.ApplyPodOverrides(pod, s.t.opts.PodOverrides)
	if err != nil {
		return nil, err
	}
	// The overrides' tolerations replace the list: the sampler still
	// tolerates every taint of the node it reads.
	out.Spec.Tolerations = append(out.Spec.Tolerations, corev1.Toleration{Operator: corev1.TolerationOpExists})
	return out, nil
}

// hostnameOf is a node's kubernetes.io/hostname label, which a pod's node
// selector matches (it may differ from the node's name); the name when
// the node cannot be read.
func (t *Target) hostnameOf(ctx context.Context, node string) string {
	n, err := t.cluster.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil || n.Labels[corev1.LabelHostname] == "" {
		return node
	}
	return n.Labels[corev1.LabelHostname]
}

// startOne creates the sampler pod on node and waits for it to run.
func (s *samplerPods) startOne(ctx context.Context, name, node string) (*kubekit.PodCmder, error) {
	pods := s.t.cluster.Client.CoreV1().Pods(s.ns)
	spec, err := s.samplerSpec(name, s.t.hostnameOf(ctx, node))
	if err != nil {
		return nil, err
	}
	_, err = pods.Create(ctx, spec, metav1.CreateOptions{})
	switch {
	case apierrors.IsForbidden(err):
		return nil, fmt.Errorf("creating a host-network pod is forbidden: %s", kubekit.APIMessage(err))
	case err != nil:
		return nil, fmt.Errorf("creating sampler pod %s: %w", name, err)
	}
	s.mu.Lock()
	s.created = append(s.created, result.KubeObject{Kind: "pod", Namespace: s.ns, Name: name})
	s.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, min(s.t.opts.Timeout, time.Minute))
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		p, err := pods.Get(wctx, name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			break
		}
		if err == nil {
			if ferr := podFailed(p); ferr != nil {
				return nil, fmt.Errorf("sampler pod %s: %w", name, ferr)
			}
		}
		select {
		case <-wctx.Done():
			return nil, fmt.Errorf("sampler pod %s on %s did not run within %s", name, node, min(s.t.opts.Timeout, time.Minute))
		case <-tick.C:
		}
	}
	return &kubekit.PodCmder{Exec: s.t.cluster.Exec, Namespace: s.ns, Pod: name, Container: kubekit.ContainerName}, nil
}

// delete removes every sampler pod created and waits for them to go.
func (s *samplerPods) delete(ctx context.Context) error {
	s.mu.Lock()
	made := s.created
	s.created = nil
	s.mu.Unlock()
	if len(made) == 0 {
		return nil
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), s.t.opts.Timeout)
		defer cancel()
	}
	return kubekit.DeleteObjects(ctx, s.t.cluster.Client, made, s.t.opts.Timeout).Err()
}

// nodeIP is a node's InternalIP, "" when unknown or unreadable.
func (t *Target) nodeIP(ctx context.Context, node string) string {
	n, err := t.cluster.Client.CoreV1().Nodes().Get(ctx, node, metav1.GetOptions{})
	if err != nil {
		return ""
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return a.Address
		}
	}
	return ""
}

// netPeers offers the network round the nodes' host networks through
// the sampler pods (hostNetwork, at the node's InternalIP): fio's node,
// so the round measures host and pod networks side by side (the CNI's
// cost), and the run's other nodes, marked Other. The other nodes have
// no pod on the pod network: their links are measured on the host
// network only.
func (t *Target) netPeers(pods *samplerPods, node string, labels map[string]string) func(context.Context) ([]runner.NetEndpoint, []string) {
	return func(ctx context.Context) ([]runner.NetEndpoint, []string) {
		nodes := append([]string{node}, otherNodes(node, labels)...)
		var eps []runner.NetEndpoint
		var notices []string
		for i, sp := range pods.get(ctx, nodes) {
			ip := t.nodeIP(ctx, sp.node)
			switch {
			case sp.err != nil:
				notices = append(notices, fmt.Sprintf("no host-network endpoint on %s for the network round: %v", sp.node, sp.err))
			case ip == "":
				notices = append(notices, fmt.Sprintf("no host-network endpoint on %s for the network round: its InternalIP is not readable (RBAC: get nodes)", sp.node))
			case net.ParseIP(ip).IsLoopback():
				notices = append(notices, fmt.Sprintf("no host-network endpoint on %s for the network round: its InternalIP %s is a loopback address the other nodes cannot reach", sp.node, ip))
			default:
				eps = append(eps, runner.NetEndpoint{Node: sp.node, Address: ip, Network: "host", Cmder: sp.cmder, Other: i > 0})
			}
		}
		return eps, notices
	}
}
