package kube_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/ceph/osdtelemetry"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/test/kubetest"
)

// cephfsSuite is short: the point is that every node reaches CephFS and
// that the results say what is behind it, not the figures.
const cephfsSuite = `name: cephfs-quick
workloads:
  - {name: randwrite, rw: randwrite, bs: 4KiB, size: 16MiB, runtime: 2s, time_based: true, ioengine: libaio, iodepth: 8}
  - {name: seqread, rw: read, bs: 1MiB, size: 16MiB, runtime: 2s, time_based: true, ioengine: libaio, iodepth: 4}
`

// TestClusterCeph brings one real Ceph up inside the test cluster for the
// package's two Ceph checks, one after the other (a bring-up costs about
// 30 s): CephFSFromEveryNode and RBDEnginePodEveryNode
// (enginepod_rbd_integration_test.go). cephUp runs test/cluster/ceph.sh
// cluster up with CEPH_FS=1: cephx, a monitor and manager on the
// cluster's bridge, one OSD per real node in the node's namespace, the
// size-3 pool rbd, CephFS, a ceph-fuse mount per node and class cephfs.
// Ceph is brought down again at the end and the cluster left as found
// (ceph.sh check-clean cluster); a Ceph the cluster was started with
// (CLUSTER_CEPH=1) is used and left up.
func TestClusterCeph(t *testing.T) {
	e := integration(t)
	t0 := time.Now()
	cephUp(t)
	t.Logf("Ceph up in %.1f s", time.Since(t0).Seconds())
	t.Run("CephFSFromEveryNode", func(t *testing.T) { checkCephFSFromEveryNode(t, e) })
	t.Run("RBDEnginePodEveryNode", func(t *testing.T) { checkRBDEnginePodEveryNode(t, e) })
}

// checkCephFSFromEveryNode runs a short suite on k8s:cephfs from every
// real node, and checks that every result completed
// and carries what Ceph itself reports of the class's data pool (read with
// the ceph CLI on this host, CEPH_CONF): the pool, its size 3, the three
// OSDs and their hosts, primary-copy replication; with telemetry, each
// result carries the pool's OSD figures (checkClassOSDs: the first node's
// read with the ceph CLI in a stand-in for Rook's toolbox, the others'
// with this host's), each 4 KiB
// write result says that ceph-fuse did the I/O inside io_submit (queue
// depth 8 acting as 1), and on demand a
// throttled OSD is named (checkClassOSDVerdict) and the contention round
// names the OSDs' disks as what a probe and a writer on two nodes share
// (checkClassContention).
func checkCephFSFromEveryNode(t *testing.T, e *env) {
	nodes := kubetest.Env(t).Nodes()

	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever, OSDBenches: &kube.OSDBenches{}}
	// The first node's target reaches Ceph with Rook's toolbox
	// (k8s:cephfs?ceph-toolbox=NS), the others with this host's ceph CLI.
	tbNS := kubetest.Namespace(t, c, "rooktools")
	toolbox := tbNS + "/" + kubetest.RookToolbox(t, context.Background(), c, tbNS, nodes[0], realImage)
	var targets []runner.Target
	for i, n := range nodes {
		o := opts
		if i == 0 {
			o.Ceph = kube.CephAccess{Toolbox: tbNS}
		}
		targets = append(targets, kube.NewTarget(c, "cephfs", n, i+1, o))
	}
	start := time.Now()
	rs := runPlan(t, context.Background(), cephfsSuite, engine.Plan{Targets: targets, Telemetry: true})
	t.Logf("suite on %d nodes in %.1f s", len(nodes), time.Since(start).Seconds())
	if len(rs) != 2*len(nodes) {
		t.Fatalf("%d results, want %d", len(rs), 2*len(nodes))
	}
	want := map[result.LabelKey]string{
		result.LabelCephPool:         "cephfs_data",
		result.LabelReplicas:         "3",
		result.LabelCephOSDs:         "osd.0,osd.1,osd.2",
		result.LabelReplicaNodes:     strings.Join(sorted(nodes), ","),
		result.LabelReplicationModel: result.ReplicationPrimary,
		result.LabelStorageClass:     "cephfs",
	}
	seen := map[string]bool{}
	for _, r := range rs {
		node := result.LabelNode.Of(r.Labels)
		seen[node] = true
		for _, d := range r.Directions() {
			t.Logf("%s %s on %s: %s %.1f MB/s, %.0f IOPS", r.Target, r.Workload, node, d.Name, d.BytesPerSec/1e6, d.IOPS)
		}
		if r.Status != result.StatusComplete || len(r.Directions()) == 0 {
			t.Errorf("%s %s: %s %s", r.Target, r.Workload, r.Status, r.Error)
		}
		for k, v := range want {
			if got := k.Of(r.Labels); got != v {
				t.Errorf("%s %s: label %s = %q, want %q", r.Target, r.Workload, k, got, v)
			}
		}
		// ceph-fuse does each write before io_submit returns: the check
		// says so, and that queue depth 8 acted as 1 (engine.SubmissionBoundText).
		bound := result.LabelSubmissionBound.Of(r.Labels)
		t.Logf("%s %s: %s", r.Target, r.Workload, bound)
		if r.Workload == "randwrite" && !strings.Contains(bound, "queue depth 8 acted as 1") {
			t.Errorf("%s randwrite (libaio, QD8, on ceph-fuse): submission check %q, want the I/O done inside io_submit and queue depth 8 acting as 1", r.Target, bound)
		}
	}
	for _, n := range nodes {
		if !seen[n] {
			t.Errorf("no result from node %s (seen %v)", n, seen)
		}
	}
	checkClassOSDs(t, rs, nodes) // class_osds_integration_test.go
	for _, r := range rs {
		want := "read with the ceph CLI on storbench's host"
		if result.LabelNode.Of(r.Labels) == nodes[0] {
			want = "read with the ceph CLI in Rook's toolbox pod " + toolbox
		}
		if r.Telemetry == nil || !strings.Contains(r.Telemetry.Sources[osdtelemetry.SourceKey], want) {
			t.Errorf("%s %s on %s: OSD figures not %s", r.Target, r.Workload, result.LabelNode.Of(r.Labels), want)
		}
	}
	start = time.Now()
	checkCephFSClientPerNode(t, e, nodes[1], nodes[2])
	t.Logf("one volume from two nodes, each through its own client, in %.1f s", time.Since(start).Seconds())
	t.Run("slow OSD named", func(t *testing.T) { checkClassOSDVerdict(t, c, nodes) })
	t.Run("contention on the OSDs' disks", func(t *testing.T) { checkClassContention(t, c, nodes) })
}

// cephUp brings Ceph with CephFS up in the test cluster for the test
// (kubetest.CephUp), and down again at its end: TestClusterCeph.
func cephUp(t *testing.T) { kubetest.CephUp(t) }

func sorted(s []string) []string {
	c := append([]string(nil), s...)
	slices.Sort(c)
	return c
}
