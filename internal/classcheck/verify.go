package classcheck

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/storbench/storbench/internal/field"
)

// alivePort is where a writer pod answers while its container lives: a
// process of the pod itself, not of the kubelet, so it keeps answering
// when a "stop" leaves the node's containers running.
const alivePort = 17321

// aliveListener answers on alivePort for as long as the container lives
// (fio's net engine: the check image has fio and no netcat). It runs in
// the background of the container, not of the exec that starts it.
var aliveListener = `(while :; do fio --name=alive --ioengine=net --listen --port=` + strconv.Itoa(alivePort) +
	` --protocol=tcp --rw=read --bs=1 --size=1 --output=/dev/null || sleep 1; done) </dev/null >/dev/null 2>&1 &`

// probeAttempts is how often a probe is tried before an address counts as
// not answering: the listener restarts between connections, and a single
// refused connection must never pass for a dead node.
const probeAttempts = 3

// prober sees a node from another node: a pod there that opens TCP
// connections to the writer pod and to the node's kubelet.
type prober struct {
	pod, node string
	// writer and kubelet are the addresses probed (host:port).
	writer, kubelet string
}

// startProber readies the node-failure check's witnesses before the stop:
// the writer pod's listener, and a pod on another node that reaches both
// it and the node's kubelet. Both must answer now, or their silence after
// the stop would prove nothing. The prober's pod is added to w.vols.
func (r *run) startProber(ctx context.Context, w *writer) (*prober, error) {
	if _, err := r.exec(ctx, w.v.pod, nil, "sh", "-c", aliveListener); err != nil {
		return nil, fmt.Errorf("starting the writer's listener (the check image needs fio): %w", err)
	}
	p := &prober{pod: r.name("prober")}
	for _, n := range r.nodes {
		if n != w.from {
			p.node = n
			break
		}
	}
	w.vols = append(w.vols, &volume{pod: p.pod})
	if _, err := r.createPod(ctx, podSpec{name: p.pod, node: p.node}); err != nil {
		return nil, err
	}
	if _, err := r.podRunning(ctx, p.pod, ""); err != nil {
		return nil, r.explain(err, p.pod)
	}
	wp := r.tl.latestPod(w.v.pod)
	if wp == nil || wp.Status.PodIP == "" {
		return nil, fmt.Errorf("writer pod %s has no IP to probe", w.v.pod)
	}
	p.writer = net.JoinHostPort(wp.Status.PodIP, strconv.Itoa(alivePort))
	node, err := r.c.Client.CoreV1().Nodes().Get(ctx, w.from, metav1.GetOptions{})
	if err != nil {
		return nil, fmt.Errorf("reading node %s's kubelet address: %w", w.from, err)
	}
	p.kubelet = kubeletAddress(node)
	if p.kubelet == "" {
		return nil, fmt.Errorf("node %s reports no InternalIP: its kubelet cannot be probed", w.from)
	}
	for _, addr := range []string{p.writer, p.kubelet} {
		ok, err := r.answers(ctx, p, addr)
		if err != nil {
			return nil, err
		}
		if !ok {
			return nil, fmt.Errorf("%s does not answer from pod %s on node %s even before the stop (a network policy?): "+
				"the node's workloads could not be verified gone after it, so the node is not stopped", addr, p.pod, p.node)
		}
	}
	return p, nil
}

// kubeletAddress is the node's InternalIP with its kubelet's port.
func kubeletAddress(n *corev1.Node) string {
	port := int(n.Status.DaemonEndpoints.KubeletEndpoint.Port)
	if port == 0 {
		port = 10250
	}
	for _, a := range n.Status.Addresses {
		if a.Type == corev1.NodeInternalIP {
			return net.JoinHostPort(a.Address, strconv.Itoa(port))
		}
	}
	return ""
}

// answers reports whether addr accepts a TCP connection from the prober
// pod, trying up to probeAttempts times a second apart. An error is a
// probe that could not be made (the prober's exec failed): neither answer.
func (r *run) answers(ctx context.Context, p *prober, addr string) (bool, error) {
	host, port, _ := net.SplitHostPort(addr)
	for i := 0; i < probeAttempts; i++ {
		if i > 0 {
			time.Sleep(time.Second)
		}
		_, err := r.exec(ctx, p.pod, nil, "timeout", "3", "fio", "--name=probe", "--ioengine=net", "--hostname="+host, "--port="+port,
			"--protocol=tcp", "--rw=write", "--bs=1", "--size=1", "--output=/dev/null")
		var exit utilexec.ExitError
		switch {
		case err == nil:
			return true, nil
		case !errors.As(err, &exit):
			return false, fmt.Errorf("probing %s from pod %s: %w", addr, p.pod, err)
		}
	}
	return false, nil
}

// workloadsGone verifies that a stopped node's workloads are gone before
// anything acts as if they were (the out-of-service taint force-deletes
// the node's pods and detaches their volumes; a replacement writer on the
// same volume): the writer pod's own process no longer answers, and the
// node's kubelet is unreachable. It returns what it verified, for the
// report, or an error saying what still runs.
func (r *run) workloadsGone(ctx context.Context, p *prober, node string) (string, error) {
	alive, err := r.answers(ctx, p, p.writer)
	if err != nil {
		return "", err
	}
	if alive {
		return "", fmt.Errorf("node %s is NotReady but its containers still run: the writer pod's own process answers at %s (from pod %s on node %s); "+
			"not tainted out-of-service and no second writer started on its volume. The stop command stops the kubelet, not the containers "+
			"(on k3s, systemctl stop k3s-agent leaves them running: use k3s-killall.sh, or cut the power)", node, p.writer, p.pod, p.node)
	}
	kubelet, err := r.answers(ctx, p, p.kubelet)
	if err != nil {
		return "", err
	}
	if kubelet {
		return "", fmt.Errorf("node %s is NotReady but its kubelet still answers at %s: its workloads are not verified gone; not tainted out-of-service", node, p.kubelet)
	}
	return fmt.Sprintf("verified gone: the writer pod's own process no longer answers at %s and the kubelet at %s is unreachable (each probed %d times from pod %s on node %s)",
		p.writer, p.kubelet, probeAttempts, p.pod, p.node), nil
}

// RefusedError is a qualification refused before anything was created:
// the options ask for something unsafe or impossible. Err names the
// options' fields (a *field.Error inside), which a caller may show in its
// own words.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// The fields of Options the refusals name.
const (
	FieldNodeFailureNode field.Name = "NodeFailure.Node"
	FieldNodeFailureHost field.Name = "NodeFailure.HostName"
)

// checkNodeFailure refuses a node-failure check that could hit the wrong
// machine: the node must be named, exist and be one a check may use, and
// the host the stop command runs on must be that node's own (its name,
// hostname label or one of its addresses). A control-plane node is taken
// because it is named, and the plan says so.
func (r *run) checkNodeFailure(ctx context.Context) error {
	nf := r.o.NodeFailure
	if nf == nil || nf.Stop == nil || !r.wants(CheckNodeFailure) {
		return nil
	}
	if nf.Node == "" {
		return &RefusedError{field.Errorf("the node-failure check stops the node you name: set %s", FieldNodeFailureNode)}
	}
	n, err := r.c.Client.CoreV1().Nodes().Get(ctx, nf.Node, metav1.GetOptions{})
	if err != nil {
		return &RefusedError{field.Errorf("%s %s: %w", FieldNodeFailureNode, nf.Node, err)}
	}
	if nf.HostName == "" && nf.HostAddress == "" {
		return nil // the caller runs the commands itself (tests, a library user)
	}
	names := []string{n.Name, n.Labels[corev1.LabelHostname]}
	for _, a := range n.Status.Addresses {
		names = append(names, a.Address)
	}
	for _, want := range names {
		if want != "" && (want == nf.HostName || want == nf.HostAddress) {
			return nil
		}
	}
	return &RefusedError{field.Errorf("the stop command would run on inventory host %s (%s), which is not node %s (its name, hostname label and addresses: %v): "+
		"it must run on the node's own host; name the node's host with %s, or give the inventory host the node's name or address",
		nf.HostName, nf.HostAddress, nf.Node, compact(names), FieldNodeFailureHost)}
}

func compact(s []string) []string {
	var out []string
	for _, x := range s {
		if x != "" && !slices.Contains(out, x) {
			out = append(out, x)
		}
	}
	return out
}
