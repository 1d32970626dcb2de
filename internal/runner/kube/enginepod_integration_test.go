package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
)

const gfapiPodSuite = `name: gfapi-pods
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, iodepth: 4, size: 32MiB, runtime: 2s, time_based: true, direct: true}
  - {name: randread, rw: randread, bs: 4KiB, iodepth: 8, size: 32MiB, runtime: 2s, time_based: true, direct: true}
`

// checkGlusterEnginePodEveryNode runs, on the GlusterFS TestClusterGluster
// brought up, the class gluster (a PVC over each node's FUSE mount) and
// k8s:gluster://NODEIP/VOLUME on every real node:
// a pod per node (the fio image with Gluster's translators, no volume)
// whose fio reaches the volume through the gfapi_async engine, all nodes
// at once (the parallel round: each node its own file in the run's one
// directory; the isolated round's one-node-after-the-other setup is
// TestEngineRunSharesSetup's, and costs a mount and a pod start per node
// here, 107 s in all). Every result completes with bytes
// moved, names its node, and carries the volume's three bricks, replica 3
// and client-side replication. After the run no pod of it is left in the
// cluster and nothing of it on the volume.
func checkGlusterEnginePodEveryNode(t *testing.T, e *env, cenv map[string]string, nodes []string) {
	genv := glusterEnv(t, filepath.Join(cenv["KAPI_ROOT"], "run", "gluster", "gluster.env"))
	servers := strings.Fields(genv["GLUSTER_SERVERS"])
	if len(servers) != 3 {
		t.Fatalf("gluster servers %q: want 3", servers)
	}
	target := kube.TargetPrefix + "gluster://" + servers[1] + "/" + genv["GLUSTER_VOLUME"]
	kind := kube.Kind{Cluster: kubekit.ConnectOptions{Kubeconfig: e.kubeconfig}, Nodes: kubekit.NodeChoice{Names: nodes},
		Target: kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}}
	// The class over each node's FUSE mount beside the engine target: both
	// from every node.
	var specs []runner.Spec
	for _, tg := range []string{kube.TargetPrefix + "gluster", target} {
		spec, ok, err := kind.Parse(tg)
		if !ok || err != nil {
			t.Fatalf("Parse(%s) = %v, %v", tg, ok, err)
		}
		specs = append(specs, spec)
	}
	ctx := context.Background()
	g, err := kind.Open(ctx, specs, runner.GroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Targets) != 2*len(nodes) {
		t.Fatalf("%d targets for 2 targets on %d nodes", len(g.Targets), len(nodes))
	}
	t0 := time.Now()
	all := runPlan(t, ctx, gfapiPodSuite, engine.Plan{Targets: g.Targets, Rounds: []string{result.RoundParallel}})
	t.Logf("run: %d results in %s", len(all), time.Since(t0).Round(100*time.Millisecond))
	var rs, class []result.Result
	for _, r := range all {
		if strings.HasPrefix(r.Target, target+"@") {
			rs = append(rs, r)
		} else {
			class = append(class, r)
		}
	}
	checkEnginePodResults(t, rs, nodes, servers)
	checkGlusterClassResults(t, class, nodes)
	checkStartSkew(t, all, 3*time.Second)
	mnt := genv[strings.ReplaceAll(nodes[0], "-", "_")+"_GLUSTER"]
	// The engine's directory goes with the run; the class's volumes go
	// once local-path-provisioner's helper pods have deleted them, a few
	// seconds after their claims.
	var entries []os.DirEntry
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(time.Second) {
		if entries, err = os.ReadDir(mnt); err != nil {
			t.Fatalf("reading the volume at %s: %v", mnt, err)
		}
		if len(entries) == 0 || time.Now().After(deadline) {
			break
		}
	}
	for _, en := range entries {
		t.Errorf("left on the volume: %s", en.Name())
	}
	left, err := kubekit.FindLeftovers(ctx, e.client, "", rs[0].RunID)
	if err != nil || len(left) > 0 {
		t.Errorf("left in the cluster: %v (%v)", left, err)
	}
}

// checkStartSkew: the parallel round's targets began measuring within
// limit of each other. gfapi's glfs_fini takes seconds after the I/O, and
// timed from fio's report time the gfapi targets looked up to 6.9 s later
// than the FUSE ones that began with them.
func checkStartSkew(t *testing.T, rs []result.Result, limit time.Duration) {
	t.Helper()
	for _, r := range rs {
		ms, err := strconv.ParseFloat(result.LabelStartSkew.Of(r.Labels), 64)
		if err != nil || time.Duration(ms*float64(time.Millisecond)) > limit {
			t.Errorf("%s %s: start skew %q ms, want at most %s", r.Target, r.Workload, result.LabelStartSkew.Of(r.Labels), limit)
		}
	}
	if len(rs) > 0 {
		t.Logf("parallel round: start skew %s ms", result.LabelStartSkew.Of(rs[0].Labels))
	}
}

// checkEnginePodResults: both workloads on every node,
// complete, with bytes moved and the volume's labels.
func checkEnginePodResults(t *testing.T, rs []result.Result, nodes, servers []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rs {
		l := r.Labels
		node := result.LabelNode.Of(l)
		seen[r.Round+" "+r.Workload+" "+node] = true
		var bps float64
		if r.Write != nil {
			bps += r.Write.BytesPerSec
		}
		if r.Read != nil {
			bps += r.Read.BytesPerSec
		}
		t.Logf("%s %s %s: %s %.1f MB/s; servers %s, replicas %s, model %s", r.Round, r.Target, r.Workload, r.Status, bps/1e6,
			result.LabelVolumeServers.Of(l), result.LabelReplicas.Of(l), result.LabelReplicationModel.Of(l))
		if r.Status != result.StatusComplete || bps <= 0 {
			t.Errorf("%s %s %s: %s %s, %.1f MB/s", r.Round, r.Target, r.Workload, r.Status, r.Error, bps/1e6)
		}
		if !strings.HasSuffix(r.Target, "@"+node) {
			t.Errorf("result of %s labelled node %q", r.Target, node)
		}
		if result.LabelReplicas.Of(l) != "3" || result.LabelReplicationModel.Of(l) != result.ReplicationClient {
			t.Errorf("%s: replicas %q, model %q: want 3, client", r.Target, result.LabelReplicas.Of(l), result.LabelReplicationModel.Of(l))
		}
		for _, s := range servers {
			if !strings.Contains(result.LabelVolumeServers.Of(l), s+":") {
				t.Errorf("%s: servers %q lack brick server %s", r.Target, result.LabelVolumeServers.Of(l), s)
			}
		}
	}
	for _, round := range []string{result.RoundParallel} {
		for _, w := range []string{"seq-write", "randread"} {
			for _, n := range nodes {
				if !seen[round+" "+w+" "+n] {
					t.Errorf("no %s %s result on %s", round, w, n)
				}
			}
		}
	}
}

// checkGlusterClassResults: the class's workloads on every node,
// complete, with the class's statement of its replication.
func checkGlusterClassResults(t *testing.T, rs []result.Result, nodes []string) {
	t.Helper()
	seen := map[string]bool{}
	for _, r := range rs {
		l := r.Labels
		seen[r.Workload+" "+result.LabelNode.Of(l)] = true
		t.Logf("%s %s: %s; replicas %s, model %s, nodes %s", r.Target, r.Workload, r.Status, result.LabelReplicas.Of(l),
			result.LabelReplicationModel.Of(l), result.LabelReplicaNodes.Of(l))
		if r.Status != result.StatusComplete || result.LabelReplicas.Of(l) != "3" || result.LabelReplicationModel.Of(l) != result.ReplicationClient ||
			result.LabelReplicaNodes.Of(l) != strings.Join(nodes[:3], ",") {
			t.Errorf("%s %s: %s %s, labels %v", r.Target, r.Workload, r.Status, r.Error, l)
		}
	}
	for _, w := range []string{"seq-write", "randread"} {
		for _, n := range nodes {
			if !seen[w+" "+n] {
				t.Errorf("no class %s result on %s", w, n)
			}
		}
	}
}

// glusterEnv reads gluster.sh cluster-up's description of the volume.
func glusterEnv(t *testing.T, path string) map[string]string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(b), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok {
			env[k] = strings.Trim(v, `"`)
		}
	}
	return env
}
