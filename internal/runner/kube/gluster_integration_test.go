package kube_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/kubetest"
)

const glusterSuite = `name: gluster-write
workloads:
  - {name: seq-write, rw: write, bs: 4MiB, iodepth: 4, size: 256MiB, runtime: 8s, time_based: true, direct: true}
`

// glusterShapedNode is the client whose link the test slows, and its rate.
const glusterShapedNode, glusterShapedRate, glusterShapedBPS = "kreal-node-2", "200mbit", 25e6

// TestClusterGluster brings GlusterFS up once inside the running test
// cluster (test/cluster/gluster.sh cluster-up: a glusterd and brick on each
// real node, a replica-3 volume, a FUSE mount per node, class "gluster"
// over the mounts; about 11 s) for the package's two GlusterFS checks, one
// after the other: ClassClientReplicationOnShapedLink and
// EnginePodEveryNode (enginepod_integration_test.go). It brings GlusterFS
// down at its end and checks nothing of it is left.
func TestClusterGluster(t *testing.T) {
	kubetest.Measures(t)
	e := integration(t)
	testenv.Tool(t, "glusterd", "glusterfs-server", "gluster")
	testenv.Tool(t, "glusterfs", "glusterfs-client", "gluster")
	cenv := clusterEnv(t)
	nodes := strings.Fields(cenv["NODES"])
	if len(nodes) < 3 {
		t.Fatalf("cluster nodes %q: the test needs 3 real nodes", nodes)
	}
	glusterUp(t, cenv, len(nodes))
	t.Run("ClassClientReplicationOnShapedLink", func(t *testing.T) { checkGlusterClientReplicationOnShapedLink(t, e, cenv, nodes) })
	t.Run("EnginePodEveryNode", func(t *testing.T) { checkGlusterEnginePodEveryNode(t, e, cenv, nodes) })
}

// checkGlusterClientReplicationOnShapedLink slows kreal-node-2's link to
// 200 Mbit/s and writes sequentially from a pod there, with the network
// round; then the same from the gfapi target on that node (k8s:gluster://,
// a pod reaching the volume with fio's own engine, no mount), whose
// replica nodes come from the bricks' servers that are nodes and whose
// breakdown must agree. The results read the class's statement of its replication (3
// copies, client-side, the bricks' nodes); the breakdown names the
// client's link, which carries every copy that lives on another node: two
// of three, since kreal-node-2 holds a brick, so the write gets about half
// the link; the node's measured tx bytes agree.
func checkGlusterClientReplicationOnShapedLink(t *testing.T, e *env, cenv map[string]string, nodes []string) {
	shape(t, glusterShapedNode, glusterShapedRate)
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	// The class, and the same volume through fio's gfapi engine from a pod on the same
	// node (k8s:gluster://, no mount): the same client-side replication.
	genv := glusterEnv(t, filepath.Join(cenv["KAPI_ROOT"], "run", "gluster", "gluster.env"))
	kind := kube.Kind{Cluster: kubekit.ConnectOptions{Kubeconfig: e.kubeconfig}, Nodes: kubekit.NodeChoice{Names: []string{glusterShapedNode}}, Target: opts}
	var specs []runner.Spec
	for _, target := range []string{kube.TargetPrefix + "gluster", kube.TargetPrefix + "gluster://" + strings.Fields(genv["GLUSTER_SERVERS"])[1] + "/" + genv["GLUSTER_VOLUME"]} {
		spec, _, err := kind.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, spec)
	}
	g, err := kind.Open(context.Background(), specs, runner.GroupOptions{})
	if err != nil || len(g.Targets) != 2 {
		t.Fatalf("the class and the gfapi target on %s: %v, %d targets", glusterShapedNode, err, len(g.Targets))
	}
	rs := runPlan(t, context.Background(), glusterSuite, engine.Plan{Targets: g.Targets,
		Rounds: []string{result.RoundNetwork, result.RoundIsolated}, Telemetry: true, Network: quickNetwork})
	var write, gfapi *result.Result
	for i, r := range rs {
		if r.Status != result.StatusComplete {
			t.Errorf("%s %s %s: %s %s", r.Round, r.Target, r.Workload, r.Status, r.Error)
		}
		switch {
		case r.Round != result.RoundIsolated:
		case strings.HasPrefix(r.Target, kube.TargetPrefix+"gluster://"):
			gfapi = &rs[i]
		default:
			write = &rs[i]
		}
	}
	if write == nil || write.Write == nil || gfapi == nil || gfapi.Write == nil {
		t.Fatalf("no isolated write of the class and of the gfapi target among %d results", len(rs))
	}
	l := write.Labels
	t.Logf("write %.2f MB/s; labels replicas %s (%s), model %s, nodes %s (%s)", write.Write.BytesPerSec/1e6, result.LabelReplicas.Of(l),
		result.LabelReplicasSource.Of(l), result.LabelReplicationModel.Of(l), result.LabelReplicaNodes.Of(l), result.LabelReplicaNodesSource.Of(l))
	if result.LabelReplicas.Of(l) != "3" || result.LabelReplicationModel.Of(l) != result.ReplicationClient ||
		!strings.Contains(result.LabelReplicasSource.Of(l), "StorageClass gluster parameter replicas") {
		t.Errorf("replicas %q from %q, model %q: want 3 from the class's parameter, client", result.LabelReplicas.Of(l),
			result.LabelReplicasSource.Of(l), result.LabelReplicationModel.Of(l))
	}
	if got, want := result.LabelReplicaNodes.Of(l), strings.Join(nodes[:3], ","); got != want {
		t.Errorf("replica nodes %q, want the bricks' %q", got, want)
	}
	checkGlusterBreakdown(t, rs, write)
	t.Logf("the gfapi target: write %.2f MB/s; replica nodes %s (%s)", gfapi.Write.BytesPerSec/1e6, result.LabelReplicaNodes.Of(gfapi.Labels), result.LabelReplicaNodesSource.Of(gfapi.Labels))
	checkGlusterBreakdown(t, rs, gfapi)
}

// checkGlusterBreakdown: the breakdown of the write names client-side
// replication over the shaped node's link, two copies of three across it,
// the write within 15% of half the measured link, and the node's measured
// tx within 15% of the prediction.
func checkGlusterBreakdown(t *testing.T, rs []result.Result, write *result.Result) {
	t.Helper()
	links := analysis.LinkMatrices(rs)
	var bs []analysis.Breakdown
	for _, b := range analysis.Breakdowns(rs, links) {
		if b.Target == write.Target {
			bs = append(bs, b)
		}
	}
	if len(bs) != 1 {
		t.Fatalf("%d breakdowns of %s, want its write's: %+v", len(bs), write.Target, bs)
	}
	b := bs[0]
	t.Logf("breakdown: %s", b.Summary)
	for _, p := range b.Parts {
		t.Logf("part %s: %.2f MB/s (%s)", p.Name, p.CeilingBPS/1e6, p.Source)
	}
	if b.ReplicationModel != result.ReplicationClient || b.Replicas != 3 || b.RemoteCopies != 2 || b.Node != glusterShapedNode {
		t.Errorf("breakdown on %s: model %q, %d replicas, %d remote copies; want client on %s, 3, 2", b.Node, b.ReplicationModel,
			b.Replicas, b.RemoteCopies, glusterShapedNode)
	}
	var linkBPS float64
	for _, p := range b.Parts {
		if p.Name == analysis.PartLink {
			linkBPS = p.CeilingBPS
		}
	}
	if linkBPS < 0.8*glusterShapedBPS || linkBPS > 1.05*glusterShapedBPS {
		t.Errorf("the shaped link measured %.1f MB/s, want about %.0f MB/s", linkBPS/1e6, glusterShapedBPS/1e6)
	}
	if ceiling := linkBPS / 2; write.Write.BytesPerSec < 0.85*ceiling || write.Write.BytesPerSec > 1.1*ceiling {
		t.Errorf("write %.2f MB/s, want the link over its two remote copies, %.2f MB/s, within 15%%", write.Write.BytesPerSec/1e6, ceiling/1e6)
	}
	if b.LimitedBy != analysis.BoundReplication || !strings.Contains(b.Summary, "2 remote copies share") {
		t.Errorf("limited by %q: %s; want replication traffic on the network, two remote copies sharing the link", b.LimitedBy, b.Summary)
	}
	if tm := write.Telemetry; tm != nil {
		t.Logf("client telemetry: interface %s, link %.0f MB/s, sources %v, missing %v", tm.Interface, tm.LinkBytesPerSec/1e6, tm.Sources, tm.Missing)
	}
	if b.Traffic == nil {
		t.Fatalf("no per-link traffic in the breakdown (missing: %v)", b.Missing)
	}
	for _, lt := range b.Traffic.Links {
		t.Logf("link %s %s: %.2fx the payload, predicted %.1f MB, measured %.1f MB, ceiling %.2f MB/s", lt.Node, lt.Direction,
			lt.PerPayload, lt.PredictedBytes/1e6, lt.MeasuredBytes/1e6, lt.CeilingBPS/1e6)
		if lt.Node == glusterShapedNode && lt.Direction == "tx" {
			if lt.PerPayload != 2 {
				t.Errorf("%s tx: %.2fx the payload predicted, want 2 (two remote copies)", lt.Node, lt.PerPayload)
			}
			if lt.MeasuredBytes < 0.85*lt.PredictedBytes || lt.MeasuredBytes > 1.15*lt.PredictedBytes {
				t.Errorf("%s tx: measured %.1f MB, predicted %.1f MB: want within 15%%", lt.Node, lt.MeasuredBytes/1e6, lt.PredictedBytes/1e6)
			}
		}
	}
	// The plan's capacities are the round's measured links, not the veth's
	// nominal 10 Gbit/s: its binding link is the shaped client's tx, and
	// its ceiling (that link over two copies) within 10% of the write.
	p := b.Traffic
	if p.Binding == nil || p.Binding.Node != glusterShapedNode || p.Binding.Direction != "tx" || !strings.Contains(p.Binding.CapacitySource, "network round") {
		t.Fatalf("per-link plan's binding link %+v, want %s tx with its capacity from the network round\n%s", p.Binding, glusterShapedNode, p.Summary)
	}
	if r := write.Write.BytesPerSec / p.CeilingBPS; r < 0.9 || r > 1.1 {
		t.Errorf("write %.2f MB/s against the plan's ceiling %.2f MB/s (%.0f%%): want within 10%%", write.Write.BytesPerSec/1e6, p.CeilingBPS/1e6, r*100)
	}
}

// glusterUp runs gluster.sh cluster-up on the running cluster's n real
// nodes; cleanup brings it down and checks nothing of it is left.
func glusterUp(t *testing.T, cenv map[string]string, n int) {
	t.Helper()
	script := filepath.Join("..", "..", "..", "test", "cluster", "gluster.sh")
	t0 := time.Now()
	up, err := exec.Command("bash", script, "cluster-up", fmt.Sprint(n)).CombinedOutput()
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "cluster-down", fmt.Sprint(n)).CombinedOutput(); err != nil {
			t.Errorf("gluster.sh cluster-down: %v: %s", err, out)
		}
		if out, err := exec.Command(filepath.Join(cenv["KAPI_ROOT"], "bin", "kubectl"), "get", "pv,storageclass",
			"-o", `jsonpath={range .items[?(@.spec.storageClassName=="gluster")]}{.metadata.name} {end}{range .items[?(@.metadata.name=="gluster")]}class {.metadata.name}{end}`).CombinedOutput(); err != nil || len(out) > 0 {
			t.Errorf("after gluster.sh cluster-down: left %q (%v)", out, err)
		}
		if out, err := exec.Command("bash", script, "check-clean", "cluster", filepath.Join(cenv["KAPI_ROOT"], "run", "gluster")).CombinedOutput(); err != nil {
			t.Errorf("gluster.sh check-clean: %v: %s", err, out)
		}
	})
	if err != nil {
		t.Fatalf("gluster.sh cluster-up %d: %v: %s", n, err, up)
	}
	t.Logf("%s(%s)", up, time.Since(t0).Round(100*time.Millisecond))
}

// shape sets a real node's port to rate (test/cluster/cluster.sh node
// shape); cleanup gives it the cluster's rate again.
func shape(t *testing.T, node, rate string) {
	t.Helper()
	t.Cleanup(func() { reshape(t, node) })
	if out, err := exec.Command("bash", "../../../test/cluster/cluster.sh", "node", "shape", node, rate).CombinedOutput(); err != nil {
		t.Fatalf("shaping %s to %s: %v: %s", node, rate, err, out)
	}
}
