package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/client-go/rest"

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
func linkFacts(ctx context.Context, cmder *PodCmder, labels map[string]string) {
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
// through exec as over SSH; the node's network counters are not visible
// from the pod's network namespace and come from the kubelet's Summary API
// through the API server (nodes/proxy). What cannot be read is listed in
// the telemetry's Missing, with the permission that would enable it.
func (t *Target) podTelemetry(cmder *PodCmder, node string, labels map[string]string) (func() (runner.Sampler, error), func() error) {
	var mu sync.Mutex
	var stops []func() error
	start := func() (runner.Sampler, error) {
		s, err := telemetry.StartStream(cmder, "kube")
		if err != nil {
			return nil, fmt.Errorf("streaming the counters of node %s from pod %s: %w", node, cmder.Pod, err)
		}
		cfg := telemetry.ConfigFor(labels, s.Root())
		cfg.Host, cfg.Device = node, result.LabelDevice.Of(labels)
		if cfg.Device == "" {
			cfg.NoDevice = "the volume has no block device the pod can see (a network or FUSE filesystem)"
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		if err := t.nodeCounters(ctx, node, s.Root()); err != nil {
			cfg.Interface = ""
			cfg.Missing = append(cfg.Missing, "network: "+err.Error())
			close(done)
		} else {
			cfg.Interface = NodeInterface
			go func() {
				defer close(done)
				for {
					select {
					case <-ctx.Done():
						return
					case <-time.After(telemetry.DefaultInterval):
						t.nodeCounters(ctx, node, s.Root()) // a missed reading leaves the last one
					}
				}
			}()
		}
		mu.Lock()
		stops = append(stops, func() error { cancel(); <-done; return s.Stop() })
		mu.Unlock()
		return podSampler{telemetry.New(cfg)}, nil
	}
	stop := func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, f := range stops {
			errs = append(errs, f())
		}
		stops = nil
		return errors.Join(errs...)
	}
	return start, stop
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

// podSampler offers a telemetry.Sampler of a pod's copy as the runner's.
type podSampler struct{ s *telemetry.Sampler }

func (p podSampler) Start() runner.Recording { return p.s.Start() }
