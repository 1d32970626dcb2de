package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/sysfacts"
	"github.com/storbench/storbench/internal/telemetry"
)

// NodeInterface is the name the node's own network counters are sampled
// under: the kubelet's Summary API's, not the pod's interface.
const NodeInterface = "node"

// linkFacts labels the links and settings under the volume, read from the
// pod's /sys, which is the node's (internal/sysfacts), and the volume's
// block device when it has one. The pod's network interface is its own,
// not the node's, so NIC facts are left out. A pod whose /sys cannot be
// read leaves them out: they describe, they are not needed to run.
func linkFacts(ctx context.Context, cmder *kubekit.PodCmder, labels map[string]string) {
	f, err := sysfacts.ReadThrough(ctx, cmder, WorkDir, "")
	if err != nil {
		return
	}
	f.NIC = nil
	maps.Copy(labels, f.Labels())
	if f.Disk != "" {
		result.LabelDevice.Set(labels, f.Disk)
	}
}

// podTelemetry makes Prepared.Telemetry for a pod: its /proc/stat,
// /proc/diskstats, /proc/pressure and /sys describe the node (a
// container's procfs shows the host's counters for these files), streamed
// through exec as over SSH. The node's network counters are not visible
// from the pod's network namespace: they come from a host-network sampler
// pod on the node where the namespace's Pod Security level allows one,
// else from the kubelet's Summary API through the API server
// (nodes/proxy). The run's other nodes (otherNodes) are sampled the same
// way, whole through a sampler pod, or their network alone through the
// Summary API. Each result's telemetry names the source of its series
// and lists what cannot be read, with why.
func (t *Target) podTelemetry(cmder *kubekit.PodCmder, o *objects, pods *samplerPods, node string, labels map[string]string) (func() (runner.Sampler, error), func() error) {
	var mu sync.Mutex
	var stops []func() error
	onStop := func(f func() error) {
		mu.Lock()
		stops = append(stops, f)
		mu.Unlock()
	}
	start := func() (runner.Sampler, error) {
		s, err := telemetry.StartStream(cmder, "kube")
		if err != nil {
			return nil, fmt.Errorf("streaming the counters of node %s from pod %s: %w", node, cmder.Pod, err)
		}
		onStop(s.Stop)
		ctx, cancel := context.WithTimeout(context.Background(), t.opts.Timeout)
		defer cancel()
		others := otherNodes(node, labels)
		nodes := append([]string{node}, others...)
		streams := pods.streams(ctx, nodes)
		for _, ns := range streams {
			if ns.stream != nil {
				onStop(ns.stream.Stop)
			}
		}
		// The node's link is the interface its route to another node takes;
		// a node at a loopback address (one on the host itself) names none.
		peer := ""
		for _, n := range others {
			if ip := t.nodeIP(ctx, n); ip != "" && !net.ParseIP(ip).IsLoopback() {
				peer = ip
				break
			}
		}
		cfg := telemetry.ConfigFor(labels, s.Root())
		cfg.Host, cfg.Device = node, result.LabelDevice.Of(labels)
		if cfg.Device == "" {
			cfg.NoDevice = "the volume has no block device the pod can see (a network or FUSE filesystem)"
		}
		from := "fio's pod " + o.ns + "/" + cmder.Pod + " (its /proc and /sys describe the node)"
		cfg.Sources = map[string]string{"cpu": from, "disk": from}
		t.nodeNetwork(&cfg, streams[0], peer, o.ns, onStop)
		p := podSampler{s: telemetry.New(cfg)}
		fioIP := t.nodeIP(ctx, node)
		for _, ns := range streams[1:] {
			c := telemetry.Config{Host: ns.node}
			if ns.stream != nil {
				c.Root = ns.stream.Root()
				c.BusiestDevice = true // the disk under this node's copy of the data is not known
				src := SourceSampler + " " + o.ns + "/" + ns.pod
				c.Sources = map[string]string{"cpu": src, "disk": src}
			} else {
				c.NetOnly = true
				c.Missing = []string{"cpu, disk, pressure: no sampler pod on " + ns.node + ": " + ns.err.Error()}
				c.Sources = map[string]string{}
			}
			t.nodeNetwork(&c, ns, fioIP, o.ns, onStop)
			p.others = append(p.others, telemetry.New(c))
		}
		return p, nil
	}
	stop := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for i := len(stops) - 1; i >= 0; i-- {
			errs = append(errs, stops[i]())
		}
		stops = nil
		return errors.Join(errs...)
	}
	return start, stop
}

// nodeNetwork points cfg's network counters at a node's sampler stream,
// on the interface that routes to peer (an IP address; "" for the
// default route), or else at the kubelet's Summary API, followed until
// stop; it names the source, or why there is none.
func (t *Target) nodeNetwork(cfg *telemetry.Config, ns *nodeStream, peer, namespace string, onStop func(func() error)) {
	if ns.stream != nil {
		root := ns.stream.Root()
		if iface := telemetry.InterfaceTo(root, peer); iface != "" {
			cfg.NetRoot, cfg.Interface = root, iface
			cfg.Sources["network"] = SourceSampler + " " + namespace + "/" + ns.pod
			return
		}
		cfg.Missing = append(cfg.Missing, "network (host-network sampler): node "+ns.node+" has no route to "+peer)
	} else {
		cfg.Missing = append(cfg.Missing, "network (host-network sampler): "+ns.err.Error())
	}
	dir, err := os.MkdirTemp("", "storbench-kube-summary-")
	if err != nil {
		cfg.Interface = ""
		cfg.Missing = append(cfg.Missing, "network: "+err.Error())
		return
	}
	stop, err := t.followSummary(ns.node, dir)
	if err != nil {
		os.RemoveAll(dir)
		cfg.Interface = ""
		cfg.Missing = append(cfg.Missing, "network: "+err.Error())
		return
	}
	onStop(func() error { stop(); return os.RemoveAll(dir) })
	cfg.NetRoot, cfg.Interface = dir, NodeInterface
	cfg.Sources["network"] = SourceSummary
}

// followSummary writes a node's network counters from the kubelet's
// Summary API under root now and every interval until stop.
func (t *Target) followSummary(node, root string) (stop func(), err error) {
	ctx, cancel := context.WithCancel(context.Background())
	if err := t.nodeCounters(ctx, node, root); err != nil {
		cancel()
		return nil, err
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-ctx.Done():
				return
			case <-time.After(telemetry.DefaultInterval):
				t.nodeCounters(ctx, node, root) // a missed reading leaves the last one
			}
		}
	}()
	return func() { cancel(); <-done }, nil
}

// summary is the part of the kubelet's /stats/summary read here.
type summary struct {
	Node struct {
		Network struct {
			Name    string `json:"name"`
			RxBytes *int64 `json:"rxBytes"`
			TxBytes *int64 `json:"txBytes"`
		} `json:"network"`
	} `json:"node"`
}

// nodeCounters reads the node's network counters from the kubelet's
// Summary API through the API server and writes them under root as the
// statistics of interface NodeInterface, where the sampler reads them.
func (t *Target) nodeCounters(ctx context.Context, node, root string) error {
	rc := t.cluster.Client.CoreV1().RESTClient()
	if c, ok := rc.(*rest.RESTClient); rc == nil || (ok && c == nil) {
		return fmt.Errorf("the API client has no REST access to the kubelet's Summary API")
	}
	raw, err := rc.Get().AbsPath("/api/v1/nodes", node, "proxy", "stats", "summary").DoRaw(ctx)
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("the kubelet's Summary API is forbidden (RBAC: get on nodes/proxy)")
	case err != nil:
		return fmt.Errorf("the kubelet's Summary API of %s: %w", node, err)
	}
	var s summary
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("the kubelet's Summary API of %s: %w", node, err)
	}
	if s.Node.Network.RxBytes == nil || s.Node.Network.TxBytes == nil {
		return fmt.Errorf("the kubelet's Summary API of %s has no node network counters", node)
	}
	dir := filepath.Join(root, "sys/class/net", NodeInterface, "statistics")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, v := range map[string]int64{"rx_bytes": *s.Node.Network.RxBytes, "tx_bytes": *s.Node.Network.TxBytes} {
		tmp := filepath.Join(dir, name+".new")
		if err := os.WriteFile(tmp, []byte(strconv.FormatInt(v, 10)+"\n"), 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			return err
		}
	}
	return nil
}

// podSampler offers a telemetry.Sampler of a pod's copy as the runner's,
// with the run's other nodes' samplers beside it.
type podSampler struct {
	s      *telemetry.Sampler
	others []*telemetry.Sampler
}

func (p podSampler) Start() runner.Recording {
	r := &nodesRecording{main: p.s.Start()}
	for _, o := range p.others {
		r.others = append(r.others, o.Start())
	}
	return r
}

// nodesRecording records fio's node and the others at once; the others'
// telemetry is stored in the main one's Nodes.
type nodesRecording struct {
	main   *telemetry.Recording
	others []*telemetry.Recording
	once   sync.Once
	tel    *result.Telemetry
}

func (r *nodesRecording) Stop() *result.Telemetry {
	r.once.Do(func() {
		r.tel = r.main.Stop()
		for _, o := range r.others {
			r.tel.Nodes = append(r.tel.Nodes, o.Stop())
		}
	})
	return r.tel
}
