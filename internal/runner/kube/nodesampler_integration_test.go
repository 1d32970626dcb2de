package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
)

const samplerSuite = `name: sampler
workloads:
  - {name: randread, rw: randread, bs: 4KiB, size: 64MiB, runtime: 8s, time_based: true, ioengine: psync, direct: false}
`

// TestClusterHostNetworkSamplerTellsNodesApart: fio runs on kreal-node-2 with
// kreal-node-3 named as a replica node, while iperf3 sends from the host
// to kreal-node-3 across its 1 Gbit/s port only. The host-network
// sampler pods read each node's own interfaces: kreal-node-3's counters
// show the transfer, kreal-node-2's do not (the kubelet's Summary API
// shows the host's interfaces for both on this cluster). The sampler pods
// are gone after the run. Then, in a namespace whose Pod Security level
// is baseline, no sampler is made and the Summary API is the source, said
// so with the label that would allow the sampler.
func TestClusterHostNetworkSamplerTellsNodesApart(t *testing.T) {
	e := integration(t)
	env := clusterEnv(t)
	ip3 := env["kreal_node_3_IP"]
	if ip3 == "" {
		t.Fatal("the cluster's description has no kreal_node_3_IP")
	}
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	target := runner.Labelled(kube.NewTarget(c, "local-path", "kreal-node-2", 1, opts), map[string]string{
		string(result.LabelReplicaNodes): "kreal-node-3"})

	srv := exec.Command("nsenter", "--net=/run/netns/"+env["kreal_node_3_NETNS"], "iperf3", "-s", "-p", "5299")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { srv.Process.Kill(); srv.Wait() }()
	time.Sleep(500 * time.Millisecond)
	cli := exec.Command("iperf3", "-c", ip3, "-p", "5299", "-t", "90")
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	// A writer on the disk all nodes share stands in for a replica's
	// writes: kreal-node-3's sampler, told no disk, finds it the busiest.
	scratch := t.TempDir()
	disks := diskNames(t, scratch)
	writer := exec.Command("sh", "-c", `while :; do dd if=/dev/zero of="$0/w" bs=1M count=64 oflag=direct conv=fsync 2>/dev/null; done`, scratch)
	if err := writer.Start(); err != nil {
		t.Fatal(err)
	}
	rs := runSuite(t, ctx, samplerSuite, []runner.Target{target})
	cli.Process.Kill()
	cli.Wait()
	writer.Process.Kill()
	writer.Wait()
	if len(rs) != 1 || rs[0].Telemetry == nil {
		t.Fatalf("results %+v", rs)
	}
	tel := rs[0].Telemetry
	t.Logf("sources %v; missing %v", tel.Sources, tel.Missing)
	if !strings.HasPrefix(tel.Sources["network"], kube.SourceSampler) {
		t.Errorf("kreal-node-2's network from %q, want the sampler pod", tel.Sources["network"])
	}
	if len(tel.Nodes) != 1 || tel.Nodes[0].Host != "kreal-node-3" {
		t.Fatalf("other nodes' telemetry %+v, want kreal-node-3's", tel.Nodes)
	}
	n3 := tel.Nodes[0]
	t.Logf("kreal-node-3: sources %v; missing %v; interface %s", n3.Sources, n3.Missing, n3.Interface)
	rx2, _ := tel.Stat(result.SeriesNetRxBPS)
	tx2, _ := tel.Stat(result.SeriesNetTxBPS)
	rx3, ok := n3.Stat(result.SeriesNetRxBPS)
	t.Logf("kreal-node-2 (%s) rx %.2f tx %.2f MB/s; kreal-node-3 (%s) rx %.2f MB/s", tel.Interface, rx2.Mean/1e6, tx2.Mean/1e6, n3.Interface, rx3.Mean/1e6)
	if !ok || rx3.Mean < 60e6 {
		t.Errorf("kreal-node-3 received %.1f MB/s during the transfer, want most of 1 Gbit/s", rx3.Mean/1e6)
	}
	if max(rx2.Mean, tx2.Mean) > 10e6 {
		t.Errorf("kreal-node-2's link carried %.1f MB/s, want about nothing: the counters do not tell the nodes apart", max(rx2.Mean, tx2.Mean)/1e6)
	}
	if _, ok := n3.Stat(result.SeriesCPUBusy); !ok {
		t.Errorf("kreal-node-3 has no CPU series (missing %v)", n3.Missing)
	}
	if w, ok := n3.Stat(result.SeriesDiskWriteBPS); !slices.Contains(disks, n3.Device) || !ok || w.Mean < 1e6 {
		t.Errorf("kreal-node-3's disk %q wrote %.1f MB/s (series %v), want the busiest, one of %q, writing", n3.Device, w.Mean/1e6, ok, disks)
	}
	left, err := e.client.CoreV1().Pods(c.Namespace()).List(ctx, metav1.ListOptions{LabelSelector: kubekit.LabelRunID + "=" + rs[0].RunID})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range left.Items {
		t.Errorf("pod %s left behind", p.Name)
	}

	// A baseline namespace: no sampler, the Summary API instead, said so.
	ns := unique("storbench-psa")
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns,
		Labels: map[string]string{kubekit.PodSecurityEnforce: "baseline"}}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	cb, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig, Namespace: ns})
	if err != nil {
		t.Fatal(err)
	}
	rs = runSuite(t, ctx, samplerSuite, []runner.Target{runner.Labelled(kube.NewTarget(cb, "local-path", "kreal-node-2", 1, opts),
		map[string]string{string(result.LabelReplicaNodes): "kreal-node-3"})})
	if len(rs) != 1 || rs[0].Telemetry == nil {
		t.Fatalf("baseline: results %+v", rs)
	}
	tel = rs[0].Telemetry
	t.Logf("baseline: sources %v; missing %v", tel.Sources, tel.Missing)
	if tel.Sources["network"] != kube.SourceSummary {
		t.Errorf("baseline: network from %q, want the Summary API", tel.Sources["network"])
	}
	if !strings.Contains(strings.Join(tel.Missing, "\n"), kubekit.PodSecurityEnforce+"=privileged") {
		t.Errorf("baseline: missing %v does not name the label that allows the sampler", tel.Missing)
	}
	if len(tel.Nodes) != 1 || tel.Nodes[0].Sources["network"] != kube.SourceSummary {
		t.Errorf("baseline: kreal-node-3's telemetry %+v, want its network from the Summary API", tel.Nodes)
	}
}

// diskNames names the block device under dir as /proc/diskstats does,
// and the whole disk too when it is a partition.
func diskNames(t *testing.T, dir string) []string {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		t.Fatal(err)
	}
	sys := fmt.Sprintf("/sys/dev/block/%d:%d", st.Dev>>8&0xfff, st.Dev&0xff|st.Dev>>12&0xfff00)
	p, err := filepath.EvalSymlinks(sys)
	if err != nil {
		t.Fatalf("the device under %s: %v", dir, err)
	}
	names := []string{filepath.Base(p)}
	if _, err := os.Stat(filepath.Join(p, "partition")); err == nil {
		names = append(names, filepath.Base(filepath.Dir(p)))
	}
	return names
}

const roundSuite = `name: tiny
workloads:
  - {name: randread, rw: randread, bs: 4KiB, size: 16MiB, runtime: 1s, time_based: true, ioengine: psync, direct: false}
`

// TestClusterNetworkAllPairsMeasuresOtherNodesAmongThemselves: fio on kreal-node
// with kreal-node-2 and -3 named as the replica nodes; with all pairs on,
// the round also measures -2 and -3 between themselves on the host network
// (their sampler pods), the link a replica sync between them would use,
// about the shaped 1 Gbit/s. (kreal-node's own address is 127.0.0.1: it
// gets a notice instead of a host-network endpoint.)
func TestClusterNetworkAllPairsMeasuresOtherNodesAmongThemselves(t *testing.T) {
	e := integration(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	target := runner.Labelled(kube.NewTarget(c, "local-path", "kreal-node", 1, opts),
		map[string]string{string(result.LabelReplicaNodes): "kreal-node-2,kreal-node-3"})
	rs := runPlan(t, context.Background(), roundSuite, engine.Plan{Targets: []runner.Target{target},
		Rounds: []string{result.RoundNetwork}, NetworkAllPairs: true, Network: quickNetwork})
	var host *analysis.LinkMatrix
	for _, m := range analysis.LinkMatrices(rs) {
		if m.Network == "host" {
			host = &m
		}
	}
	if host == nil {
		t.Fatalf("no host-network matrix among %d results", len(rs))
	}
	for _, pair := range nodePair {
		l := host.Link(pair[0], pair[1])
		if l == nil {
			t.Errorf("host network %s -> %s not measured with all pairs", pair[0], pair[1])
			continue
		}
		t.Logf("host network %s -> %s: %.1f MB/s", pair[0], pair[1], l.SendBytesPerSec/1e6)
		if l.SendBytesPerSec < 0.8*125e6 || l.SendBytesPerSec > 1.02*125e6 {
			t.Errorf("%s -> %s: %.1f MB/s, want about the shaped 125 MB/s", pair[0], pair[1], l.SendBytesPerSec/1e6)
		}
	}
}
