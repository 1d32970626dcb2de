package kube_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/netround"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/telemetry"
	"github.com/storbench/storbench/test/kubetest"
)

// logged is an engine observer that logs the run's steps (go test -v,
// and in the cluster tier's test-times JSON): where a test's time went.
type logged struct{ t *testing.T }

func (o logged) RunStarted(r *result.Run) { o.t.Logf("run %s started", r.ID) }
func (o logged) Notice(target, m string)  { o.t.Logf("%s: notice: %s", target, m) }
func (o logged) WorkloadStarted(s engine.Step) {
	o.t.Logf("%s: %s (%d of %d) started", s.Target, s.Workload, s.Index, s.Count)
}
func (logged) WorkloadProgress(engine.Step, result.Progress) {}
func (o logged) WorkloadFinished(s engine.Step, r *result.Result) {
	o.t.Logf("%s: %s finished: %s", s.Target, s.Workload, r.Status)
}

// netfsShapedRate is the rate TestClusterNetfsBreakdownOnShapedLinks
// shapes both nodes' ports to: well under the disk's buffered writes.
const netfsShapedRate, netfsShapedBPS = "400mbit", 50e6

const netfsSuite = `name: netfs-write
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, size: 2GiB, runtime: 8s, time_based: true, ioengine: psync, direct: false, end_fsync: true}
`

// TestClusterNetfsBreakdownOnShapedLinks runs the network round and a large
// sequential write on the test cluster's real nodes (test/cluster/cluster.sh):
// local-path on kreal-node-2 and -3, and netfs on kreal-node-2, served by
// kreal-node-3, both nodes' ports shaped to 400 Mbit/s (the cluster's own
// 1 Gbit/s is within reach of this machine's disk: its buffered writes
// measured 108-148 MB/s against the link's 120). The network round measures the
// link between the two nodes both ways on the pod network (the fio pods,
// through the CNI bridge and routes) and on the host network (the
// host-network sampler pods at the nodes' addresses), each about the
// shaped rate; the netfs write is attributed to the network with the
// measured link; its results carry node telemetry read through the pod,
// node network counters included. Unshaped, the link is far above the
// disk and the network no longer binds.
func TestClusterNetfsBreakdownOnShapedLinks(t *testing.T) {
	kubetest.Measures(t)
	e := integration(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	targets := []runner.Target{
		kube.NewTarget(c, "local-path", "kreal-node-2", 1, opts),
		kube.NewTarget(c, "local-path", "kreal-node-3", 2, opts),
		runner.Labelled(kube.NewTarget(c, "netfs", "kreal-node-2", 3, opts), map[string]string{
			string(result.LabelReplicas): "1", string(result.LabelReplicaNodes): "kreal-node-3"}),
	}
	for _, n := range []string{"kreal-node-2", "kreal-node-3"} {
		shape(t, n, netfsShapedRate)
	}
	b, links := measureNetfs(t, ctx, targets, "host", "pod")
	for _, m := range links {
		for _, pair := range nodePair {
			if l := m.Link(pair[0], pair[1]); l != nil && (l.SendBytesPerSec < 0.8*netfsShapedBPS || l.SendBytesPerSec > 1.02*netfsShapedBPS) {
				t.Errorf("shaped: %s network %s -> %s %.1f MB/s, want about %.0f MB/s (%s)", m.Network, pair[0], pair[1], l.SendBytesPerSec/1e6, netfsShapedBPS/1e6, netfsShapedRate)
			}
		}
	}
	if b.LimitedBy != analysis.BoundNetwork {
		t.Errorf("shaped: netfs seq-write limited by %q, want network: %s", b.LimitedBy, b.Summary)
	}

	// Unshaped, the link is far above the disk: the network no longer
	// binds. kreal-node-2's local-path is the baseline; without a fio pod
	// on kreal-node-3, the round measures the host network alone.
	for _, n := range []string{"kreal-node-2", "kreal-node-3"} {
		unshape(t, n)
		t.Cleanup(func() { reshape(t, n) }) // later tests expect the cluster's rate
	}
	b, links = measureNetfs(t, ctx, []runner.Target{targets[0], targets[2]}, "host")
	if l := links[0].Link("kreal-node-2", "kreal-node-3"); l.SendBytesPerSec < 3*netfsShapedBPS {
		t.Errorf("unshaped: kreal-node-2 -> kreal-node-3 %.1f MB/s, want well above 1 Gbit/s", l.SendBytesPerSec/1e6)
	}
	if b.LimitedBy == analysis.BoundNetwork || b.CeilingBPS == 0 {
		t.Errorf("unshaped: netfs seq-write limited by %q, want not the network: %s", b.LimitedBy, b.Summary)
	}
}

// unshape removes the tbf of both ends of a real node's port, as
// test/cluster/cluster.sh node unshape does, from the cluster's description.
func unshape(t *testing.T, node string) {
	t.Helper()
	env := clusterEnv(t)
	key := strings.ReplaceAll(node, "-", "_")
	for _, args := range [][]string{{"tc", "qdisc", "del", "dev", env[key+"_LINK"], "root"},
		{"nsenter", "--net=/run/netns/" + env[key+"_NETNS"], "tc", "qdisc", "del", "dev", "eth0", "root"}} {
		if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
			t.Fatalf("%v: %v: %s", args, err, out)
		}
	}
}

// reshape gives a real node's port the cluster's rate again
// (test/cluster/cluster.sh node shape).
func reshape(t *testing.T, node string) {
	t.Helper()
	rate := clusterEnv(t)["RATE"]
	if rate == "" {
		rate = "1gbit"
	}
	if out, err := exec.Command("bash", "../../../test/cluster/cluster.sh", "node", "shape", node, rate).CombinedOutput(); err != nil {
		t.Errorf("reshaping %s to %s: %v: %s", node, rate, err, out)
	}
}

// clusterEnv reads test/cluster/cluster.sh's KEY=VALUE description of the cluster.
func clusterEnv(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile(os.Getenv("CLUSTER_ENV"))
	if err != nil {
		t.Fatalf("CLUSTER_ENV: %v", err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		line = strings.TrimPrefix(strings.TrimSpace(line), "export ")
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = strings.Trim(v, `"'`)
		}
	}
	return env
}

// runSuite runs a suite's YAML on the targets in the given rounds, with
// telemetry, and returns the results the run stored.
func runSuite(t *testing.T, ctx context.Context, yaml string, targets []runner.Target, rounds ...string) []result.Result {
	t.Helper()
	return runPlan(t, ctx, yaml, engine.Plan{Targets: targets, Rounds: rounds, Telemetry: true})
}

// runPlan runs the suite in yaml as plan says (one repetition), stores
// the run in a database of the test's own, and returns its results.
func runPlan(t *testing.T, ctx context.Context, yaml string, plan engine.Plan) []result.Result {
	t.Helper()
	suite, err := spec.Parse([]byte(yaml), "suite")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "db.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan.Suite, plan.Repeat = suite, 1
	run, err := (&engine.Engine{Store: st, Observer: logged{t}}).Run(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// quickNetwork shortens the network round's measurements for tests
// (2 s of transfer after the ramp, 2 s of round trips): long enough
// on a 1 Gbit/s tbf link, whose bucket holds a few milliseconds.
var quickNetwork = netround.Options{Send: 2 * time.Second, RTT: 2 * time.Second}

// nodePair is the two real nodes the tests measure, both ways.
var nodePair = [][2]string{{"kreal-node-2", "kreal-node-3"}, {"kreal-node-3", "kreal-node-2"}}

// measureNetfs runs the network round and the write on the targets and
// returns the netfs result's breakdown and the link matrices, checking on
// the way that the round measured kreal-node-2 and -3 both ways on each of
// networks (in that order), every measurement completed, and the
// telemetry.
func measureNetfs(t *testing.T, ctx context.Context, targets []runner.Target, networks ...string) (analysis.Breakdown, []analysis.LinkMatrix) {
	t.Helper()
	rs := runPlan(t, ctx, netfsSuite, engine.Plan{Targets: targets, Rounds: []string{result.RoundNetwork, result.RoundIsolated},
		Telemetry: true, Network: quickNetwork})
	links := analysis.LinkMatrices(rs)
	var seen []string
	for _, m := range links {
		seen = append(seen, m.Network)
		for _, pair := range nodePair {
			l := m.Link(pair[0], pair[1])
			if l == nil || l.SendBytesPerSec <= 0 {
				t.Fatalf("%s network: %s -> %s not measured: %+v", m.Network, pair[0], pair[1], l)
			}
			t.Logf("%s network %s -> %s: %.1f MB/s, round trip p50 %s idle, %s busy", m.Network, pair[0], pair[1],
				l.SendBytesPerSec/1e6, l.IdleP50, l.BusyP50)
		}
	}
	slices.Sort(seen)
	if !slices.Equal(seen, networks) {
		t.Fatalf("link matrices of networks %q, want %q", seen, networks)
	}
	for _, r := range rs {
		if r.Round == result.RoundNetwork && r.Status != result.StatusComplete {
			t.Errorf("%s %s: %s %s", r.Target, r.Workload, r.Status, r.Error)
		}
	}
	for _, r := range rs {
		if r.Round != result.RoundIsolated {
			continue
		}
		t.Logf("%s %s: %.1f MB/s; %v; telemetry missing %v", r.Target, r.Workload, r.Write.BytesPerSec/1e6, r.Bottleneck, telemetryMissing(r))
		if r.Telemetry == nil {
			t.Errorf("%s: no telemetry", r.Target)
		} else if _, ok := r.Telemetry.Stat(result.SeriesNetTxBPS); !ok {
			t.Errorf("%s: no node network counters (missing: %v)", r.Target, r.Telemetry.Missing)
		}
	}
	// The node counters come from the host-network sampler pods, each
	// node's own (TestClusterHostNetworkSamplerTellsNodesApart asserts it):
	// logged here.
	for _, r := range rs {
		if r.Round == result.RoundIsolated && r.Telemetry != nil {
			s, _ := r.Telemetry.Stat(result.SeriesNetTxBPS)
			t.Logf("%s: node network tx %.1f MB/s (%s, from %s)", r.Target, s.Mean/1e6, r.Telemetry.Interface, r.Telemetry.Sources["network"])
			for _, n := range r.Telemetry.Nodes {
				rx, _ := n.Stat(result.SeriesNetRxBPS)
				t.Logf("%s: other node %s network rx %.1f MB/s (%s)", r.Target, n.Host, rx.Mean/1e6, n.Interface)
			}
		}
	}
	bs := analysis.Breakdowns(rs, links)
	if len(bs) != 1 {
		t.Fatalf("%d breakdowns, want the netfs result's: %+v", len(bs), bs)
	}
	t.Logf("breakdown: %s", bs[0].Summary)
	return bs[0], links
}

func telemetryMissing(r result.Result) []string {
	if r.Telemetry == nil {
		return nil
	}
	return r.Telemetry.Missing
}

const cpuSuite = `name: cpu-neighbour
workloads:
  - {name: randread, rw: randread, bs: 4KiB, size: 64MiB, runtime: 6s, time_based: true, ioengine: psync, direct: false}
`

// TestClusterNeighbourCPUSeenThroughThePod: a CPU-bound pod beside fio on the same
// node (two busy loops, one per core) shows in the node telemetry read
// through fio's pod, and the result is attributed to the CPU.
func TestClusterNeighbourCPUSeenThroughThePod(t *testing.T) {
	e := integration(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := c.Namespace()
	if _, err := c.EnsureNamespace(ctx); err != nil {
		t.Fatal(err)
	}
	burner := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: unique("cpu-neighbour"), Namespace: ns},
		Spec: corev1.PodSpec{NodeName: "kreal-node-2", RestartPolicy: corev1.RestartPolicyNever,
			Containers: []corev1.Container{{Name: "burn", Image: realImage, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sh", "-c", "for i in 1 2; do (while :; do :; done) & done; wait"}}}},
	}
	if _, err := e.client.CoreV1().Pods(ns).Create(ctx, burner, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		zero := int64(0)
		if err := e.client.CoreV1().Pods(ns).Delete(context.Background(), burner.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
			t.Error(err)
		}
	})
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	rs := runSuite(t, ctx, cpuSuite, []runner.Target{kube.NewTarget(c, "local-path", "kreal-node-2", 1, opts)})
	if len(rs) != 1 {
		t.Fatalf("results %v", rs)
	}
	r := rs[0]
	busy, ok := r.Telemetry.Stat(result.SeriesCPUBusy)
	t.Logf("cpu busy mean %.0f%% (host %s); limited by %+v", busy.Mean, r.Telemetry.Host, r.Bottleneck)
	if !ok || busy.Mean < 85 {
		t.Errorf("node CPU %.0f%% busy with a CPU-bound neighbour, want at least 85%%", busy.Mean)
	}
	if r.Bottleneck == nil || r.Bottleneck.LimitedBy != telemetry.LimitedByCPU {
		t.Errorf("limited by %+v, want cpu", r.Bottleneck)
	}
}
