package kube_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/netround"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

// nasRate is the NAS's port in TestClusterNASOutsideTheCluster: well under
// the nodes' 1 Gbit/s.
const nasRate, nasBPS = "200mbit", 25e6

const nasSuite = `name: nas-write
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, size: 256MiB, runtime: 6s, time_based: true, ioengine: psync, direct: false, end_fsync: true}
`

// nasNodes write on the NAS's static PVs, one each. One node: with two,
// the network round measures 8 pairs (6 on the host network, 2 on the
// pod network), 86 s of the test's 118 s; with one, 2 pairs. The node's
// own link then goes unmeasured (the breakdown says so): the server's
// link binds all the same, and analysis's tests cover a node's link
// binding instead.
var nasNodes = []string{"kreal-node-2"}

// TestClusterNASOutsideTheCluster: a NAS that is no node of the cluster
// (test/cluster/nas.sh: its own network namespace on the nodes' bridge,
// an SFTP server and an sshd, its port shaped to 200 Mbit/s while the
// nodes' stay at 1 Gbit/s) serves static PVs of the test CSI driver
// (csi.volumeAttributes server and share, as an NFS or SMB PV names its
// server). A sequential write on one from a node (nasNodes), with the NAS
// itself as an ssh:// target and the network round: the result names the
// NAS as its volume's server, the round measures the node -> NAS path at
// the NAS's rate, and the breakdown (analysis.ServerBreakdowns, and
// `storbench show`) names the server's link as the limit with that
// figure; the write runs within 15% of the path.
func TestClusterNASOutsideTheCluster(t *testing.T) {
	e := integration(t)
	started := time.Now()
	nas := nasUp(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	const class = "nas-static"
	e.class(t, class)
	var pvs []string
	for _, n := range nasNodes {
		pvs = append(pvs, nas.staticPV(t, e, class, n))
	}
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	var targets []runner.Target
	for i, n := range nasNodes {
		targets = append(targets, kube.NewTarget(c, class, n, i+1, opts))
	}
	targets = append(targets, nas.target(t))

	db := filepath.Join(t.TempDir(), "db.sqlite")
	rs, runID := runStored(t, ctx, db, engine.Plan{Targets: targets, Rounds: []string{result.RoundNetwork, result.RoundIsolated},
		Telemetry: true, Network: netround.Options{Send: time.Second, RTT: time.Second / 2}})
	waitDetached(t, e, pvs)
	t.Logf("run of %d results in %.0f s (with the NAS's setup); rounds: %s", len(rs), time.Since(started).Seconds(), roundTimes(rs))
	links := analysis.LinkMatrices(rs)
	nas.check(t, rs, links, analysis.ServerBreakdowns(rs, links))
	if bs := analysis.Breakdowns(rs, links); len(bs) > 0 {
		t.Errorf("replication breakdowns of volumes no node serves: %+v", bs)
	}
	// what `storbench show` prints of it
	show := storbench(ctx, t, "show", "--db", db, runID)
	t.Logf("storbench show:\n%s", show.out)
	if show.code != 0 || !strings.Contains(show.out, "limited by "+analysis.BoundServerLink) {
		t.Errorf("storbench show (exit %d) does not name the server's link as the limit: %s%s", show.code, show.out, show.errOut)
	}
}

// runStored runs the NAS's suite as plan says (one repetition) and
// returns its results and run ID; the run stays in db.
func runStored(t *testing.T, ctx context.Context, db string, plan engine.Plan) ([]result.Result, string) {
	t.Helper()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if plan.Suite, err = spec.Parse([]byte(nasSuite), "suite"); err != nil {
		t.Fatal(err)
	}
	plan.Repeat = 1
	run, err := (&engine.Engine{Store: st, Observer: logged{t}}).Run(ctx, plan)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	return rs, run.ID
}

// nasEnv is the NAS of test/cluster/nas.sh, up for one test.
type nasEnv struct {
	addr, port, export, disk string
	key, known               string
}

// nasUp brings the NAS up (down again at the end), with an sshd taking a
// key of the test's own, and shapes its port to nasRate.
func nasUp(t *testing.T) *nasEnv {
	t.Helper()
	cluster := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("bash", append([]string{"../../../test/cluster/cluster.sh", "nas"}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("cluster.sh nas %v: %v: %s", args, err, out)
		}
	}
	cluster("up")
	t.Cleanup(func() {
		for _, op := range []string{"down", "check_clean"} { // check_clean: one line for each thing left
			if out, err := exec.Command("bash", "../../../test/cluster/cluster.sh", "nas", op).CombinedOutput(); err != nil || (op == "check_clean" && len(out) > 0) {
				t.Errorf("cluster.sh nas %s: %v: %s", op, err, out)
			}
		}
		if a := clusterEnv(t)["NAS_ADDR"]; a != "" {
			t.Errorf("cluster.env still names the NAS %s after nas down", a)
		}
	})
	env := clusterEnv(t)
	n := &nasEnv{addr: env["NAS_ADDR"], port: env["NAS_PORT"], export: env["NAS_EXPORT"], disk: env["NAS_DISK"]}
	if n.addr == "" || n.export == "" {
		t.Fatalf("cluster.env names no NAS after nas up: %v", env)
	}
	dir := t.TempDir()
	n.key, _ = sshtest.Key(t, dir, "id_ed25519")
	cluster("sshd", n.key+".pub")
	hostKey, err := os.ReadFile(env["NAS_SSH_HOSTKEY"])
	if err != nil {
		t.Fatal(err)
	}
	n.known = filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(n.known, []byte(n.addr+" "+string(hostKey)), 0o600); err != nil {
		t.Fatal(err)
	}
	cluster("shape", nasRate)
	return n
}

// staticPV makes the NAS's share for node's PV (a directory of its
// export) and a static PV of class naming the NAS as its server; it
// returns the PV's name.
func (n *nasEnv) staticPV(t *testing.T, e *env, class, node string) string {
	t.Helper()
	share := filepath.Join(n.export, node)
	if err := os.Mkdir(share, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(share, 0o777); err != nil {
		t.Fatal(err)
	}
	name := unique("nas-" + node)
	e.pv(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("2Gi")},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              class,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource: corev1.PersistentVolumeSource{CSI: &corev1.CSIPersistentVolumeSource{
				Driver: "testcsi.storbench.io", VolumeHandle: name,
				VolumeAttributes: map[string]string{"server": n.addr + ":" + n.port, "share": share}}},
		}})
	return name
}

// target is the NAS as an ssh:// target: its own storage, and its end of
// the network round.
func (n *nasEnv) target(t *testing.T) runner.Target {
	t.Helper()
	c, err := ssh.Dial(context.Background(), ssh.Options{Name: n.addr, Host: n.addr, Port: 22, User: "root",
		KeyFiles: []string{n.key}, KnownHosts: []string{n.known}, ConfigFile: "none", AgentSocket: "none"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return ssh.NewTarget("ssh://root@"+n.addr+n.disk, c, n.disk, ssh.TargetOptions{})
}

// check asserts the run's results and breakdowns on the NAS's volumes.
func (n *nasEnv) check(t *testing.T, rs []result.Result, links []analysis.LinkMatrix, bs []analysis.Breakdown) {
	t.Helper()
	writes := map[string]float64{}
	for _, r := range rs {
		if r.Round == result.RoundNetwork && r.Status != result.StatusComplete {
			t.Errorf("network %s %s: %s %s", r.Target, r.Workload, r.Status, r.Error)
		}
		if r.Round != result.RoundIsolated || !strings.HasPrefix(r.Target, "k8s:") {
			continue
		}
		if r.Status != result.StatusComplete || r.Write == nil {
			t.Fatalf("%s: %s %s", r.Target, r.Status, r.Error)
		}
		if s := result.LabelVolumeServer.Of(r.Labels); s != n.addr {
			t.Errorf("%s: volume server %q, want the NAS %s", r.Target, s, n.addr)
		}
		if m := result.LabelReplicationModel.Of(r.Labels); m != result.ReplicationServer {
			t.Errorf("%s: replication model %q, want %q (a server outside the cluster)", r.Target, m, result.ReplicationServer)
		}
		writes[r.Target] = r.Write.BytesPerSec
		t.Logf("%s: %.1f MB/s", r.Target, r.Write.BytesPerSec/1e6)
	}
	m := hostLinks(links)
	if m == nil {
		t.Fatalf("no host-network link matrix: %+v", links)
	}
	path := map[string]float64{}
	for _, node := range nasNodes {
		l := m.Link(node, n.addr)
		if l == nil || l.SendBytesPerSec < 0.85*nasBPS || l.SendBytesPerSec > 1.15*nasBPS {
			t.Errorf("network round %s -> NAS %s: %+v, want about %.0f MB/s (%s)", node, n.addr, l, nasBPS/1e6, nasRate)
			continue
		}
		path[node] = l.SendBytesPerSec
		t.Logf("network round %s -> NAS: %.1f MB/s", node, l.SendBytesPerSec/1e6)
	}
	found := 0
	for _, b := range bs {
		w, ok := writes[b.Target]
		if !ok {
			continue
		}
		found++
		t.Logf("breakdown: %s", b.Summary)
		parts := map[string]float64{}
		for _, p := range b.Parts {
			parts[p.Name] = p.CeilingBPS
		}
		if b.LimitedBy != analysis.BoundServerLink || len(b.Remote) != 1 || b.Remote[0] != n.addr {
			t.Errorf("%s: limited by %q, server %v: want the server's link of %s", b.Target, b.LimitedBy, b.Remote, n.addr)
		}
		if p := path[b.Node]; p == 0 || parts[analysis.PartServerLink] != p {
			t.Errorf("%s: the server's link %.1f MB/s, want the round's %s -> NAS %.1f MB/s", b.Target, parts[analysis.PartServerLink]/1e6, b.Node, p/1e6)
		}
		if l, ok := parts[analysis.PartNodeLink]; ok && l < 3*nasBPS {
			t.Errorf("%s: the node's link %.1f MB/s, want it at the nodes' 1 Gbit/s", b.Target, l/1e6)
		}
		if _, ok := parts[analysis.PartNodeLink]; !ok && !slices.ContainsFunc(b.Missing, func(m string) bool { return strings.Contains(m, "the link of node "+b.Node) }) {
			t.Errorf("%s: the node's link neither measured nor said to be missing: %v", b.Target, b.Missing)
		}
		if p := path[b.Node]; w < 0.85*p || w > 1.15*p {
			t.Errorf("%s: write %.1f MB/s, want within 15%% of the measured path to the NAS %.1f MB/s", b.Target, w/1e6, p/1e6)
		}
		if !strings.Contains(b.Summary, fmt.Sprintf("%s %.0f MB/s", analysis.PartServerLink, parts[analysis.PartServerLink]/1e6)) {
			t.Errorf("%s: summary %q does not give the server's link with its figure", b.Target, b.Summary)
		}
	}
	if found != len(nasNodes) {
		t.Errorf("%d breakdowns of the writes on the NAS's volumes, want %d: %+v", found, len(nasNodes), bs)
	}
}

// hostLinks is the host network's link matrix, nil without one.
func hostLinks(ms []analysis.LinkMatrix) *analysis.LinkMatrix {
	for i := range ms {
		if ms[i].Network == "host" {
			return &ms[i]
		}
	}
	return nil
}

// waitDetached waits until no VolumeAttachment names the PVs: their
// nodes have let go of the NAS's shares before it goes down.
func waitDetached(t *testing.T, e *env, pvs []string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(500 * time.Millisecond) {
		vas, err := e.client.StorageV1().VolumeAttachments().List(context.Background(), metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var held []string
		for _, va := range vas.Items {
			for _, pv := range pvs {
				if p := va.Spec.Source.PersistentVolumeName; p != nil && *p == pv {
					held = append(held, va.Name+" on "+va.Spec.NodeName)
				}
			}
		}
		if len(held) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Errorf("volume attachments still there a minute after the run: %v", held)
			return
		}
	}
}

// roundTimes says how long each round of the results took.
func roundTimes(rs []result.Result) string {
	first, last := map[string]time.Time{}, map[string]time.Time{}
	var order []string
	for _, r := range rs {
		if _, ok := first[r.Round]; !ok {
			order = append(order, r.Round)
		}
		if f, ok := first[r.Round]; !ok || r.Started.Before(f) {
			first[r.Round] = r.Started
		}
		if r.Finished.After(last[r.Round]) {
			last[r.Round] = r.Finished
		}
	}
	var out []string
	for _, k := range order {
		out = append(out, fmt.Sprintf("%s %.0f s", k, last[k].Sub(first[k]).Seconds()))
	}
	return strings.Join(out, ", ")
}
