package kube_test

import (
	"context"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/test/kubetest"
)

// checkRBDEnginePodEveryNode (TestClusterCeph, on its Ceph: cephx, a
// monitor on the cluster's bridge, one OSD per real node, the size-3 pool
// rbd) puts the cluster's client
// configuration and the restricted client.storbench's keyring into a
// Secret, and runs the built-in quick suite (1 s per
// workload) on k8s:rbd:rbd?secret=NS/NAME from every real node at once:
// a pod per node with the Secret storbench copies for the run mounted,
// whose rbd CLI makes the node's image and whose fio writes and reads it
// through librbd. Every result completes and carries the pool, its size
// 3, its OSDs, their hosts (the nodes) and primary-copy replication.
// After the run the images and the Secret storbench made are gone, and an
// image the test made first is untouched: a write suite on it is refused
// (through the engine's judgement of the job file, as for any run).
// From one node then: Rook's objects made by the test (its mon endpoints
// and client.admin's key) carry a short write, and a wrong key is
// refused, and a monitor that does not answer given up after the conf's
// mount timeout, each with an error naming the Secret.
func checkRBDEnginePodEveryNode(t *testing.T, e *env) {
	t0 := time.Now()
	nodes := kubetest.Env(t).Nodes()
	ctx := context.Background()
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ns, err := c.EnsureNamespace(ctx)
	if err != nil {
		t.Fatal(err)
	}
	secret := userCephSecret(t, ctx, c, ns, cephKeyring(t, restrictedClient))
	keep := keptImage(t, ctx)

	kind := kube.Kind{Cluster: kubekit.ConnectOptions{Kubeconfig: e.kubeconfig}, Nodes: kubekit.NodeChoice{Names: nodes},
		Target: kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}}
	target := kube.TargetPrefix + "rbd:rbd?secret=" + ns + "/" + secret + "&id=" + restrictedClient
	g := openKind(t, ctx, kind, target)
	t1 := time.Now()
	rs := runPlan(t, ctx, quickSuiteYAML(t), engine.Plan{Targets: g.Targets, Rounds: []string{result.RoundParallel}})
	t.Logf("quick suite from %d nodes in %.1f s", len(nodes), time.Since(t1).Seconds())
	checkRBDPodResults(t, rs, nodes)

	if imgs := rbdImages(t, ctx); !slices.Equal(imgs, []string{"keep"}) {
		t.Errorf("images after the run: %v, want only the test's own keep", imgs)
	}
	if _, err := c.Client.CoreV1().Secrets(ns).Get(ctx, "storbench-"+strings.ToLower(rs[0].RunID)+"-ceph", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the run's Secret: %v, want gone", err)
	}
	if left, err := kubekit.FindLeftovers(ctx, e.client, "", rs[0].RunID); err != nil || len(left) > 0 {
		t.Errorf("left in the cluster: %v (%v)", left, err)
	}

	one := kind
	one.Nodes = kubekit.NodeChoice{Names: nodes[:1]}
	// The cleanup's own pod on the run's node: the scheduler could
	// otherwise place it on the cluster's kwok node, whose exec runs on
	// this host.
	pin := `"nodeSelector":{"kubernetes.io/hostname":"` + nodes[0] + `"}`
	clean := one
	clean.Target.PodOverrides = []byte(`{"spec":{` + pin + `}}`)
	killedRun(t, ctx, c, one, clean, target, "killed-rbd", "the rbd CLI in pod "+ns+"/storbench-clean-killed-rbd")
	// A cleanup whose image has no rbd CLI, as an older release's fio
	// image: this host's, checked against the fsid on the run's Secret.
	// The test cluster's tools image stands in for it, its fio checks
	// (the container's script, the readiness probe) overridden: a cleanup
	// runs no fio.
	noRBD := one
	if noRBD.Target.Image = kubetest.Env(t)["TOOLS_IMAGE"]; noRBD.Target.Image == "" {
		t.Fatal("the cluster's env names no TOOLS_IMAGE")
	}
	noRBD.Target.PodOverrides = []byte(`{"spec":{` + pin + `,"containers":[{"name":"` + kubekit.ContainerName +
		`","command":["sh","-c","trap 'exit 0' TERM; while :; do sleep 3600 & wait $!; done"],"readinessProbe":{"exec":{"command":["true"]}}}]}}`)
	killedRun(t, ctx, c, one, noRBD, target, "killed-rbd-old", "the rbd CLI beside this host's ceph CLI")

	// The image storbench did not make: a write suite is refused, from one
	// node, and the image is as it was.
	g = openKind(t, ctx, one, kube.TargetPrefix+"rbd:rbd/keep?secret="+ns+"/"+secret+"&id="+restrictedClient)
	err = runRefused(t, ctx, g.Targets)
	if err == nil || !strings.Contains(err.Error(), "rbd:rbd/keep") {
		t.Errorf("a write suite on an image storbench did not make: %v", err)
	}
	t.Logf("refused: %v", err)
	if after := imageSum(t, ctx, "keep"); after != keep {
		t.Errorf("image keep changed: %s -> %s", keep, after)
	}
	if imgs := rbdImages(t, ctx); !slices.Equal(imgs, []string{"keep"}) {
		t.Errorf("images after the refused run: %v", imgs)
	}

	// cephx's two other ways in: Rook's objects (the admin's key), and a
	// wrong key, refused in bounded time.
	rookObjectsPodRun(t, ctx, c, one)
	refusedInBoundedTime(t, ctx, c, one, ns)
	t.Logf("check %.1f s", time.Since(t0).Seconds())
}

// killedRun: run runID, killed after one node's target was prepared
// (by kind), leaves its pod, the run's Secret and the node's image; the
// kind's cleanup (storbench cleanup --run-id, by clean) removes all
// three, the image through a pod of its own that mounts the Secret, with
// the rbd CLI its note names (with).
func killedRun(t *testing.T, ctx context.Context, c *kubekit.Cluster, kind, clean kube.Kind, target, runID, with string) {
	t.Helper()
	g := openKind(t, ctx, kind, target)
	if _, err := g.Targets[0].Prepare(ctx, runner.Need{RunID: runID, FileSize: 8 << 20}); err != nil {
		t.Fatal(err)
	}
	image := "storbench-" + runID + "-" + kind.Nodes.Names[0]
	if imgs := rbdImages(t, ctx); !slices.Contains(imgs, image) {
		t.Fatalf("images of the killed run: %v, want %s among them", imgs, image)
	}
	t0 := time.Now()
	rep, err := clean.Clean(ctx, kube.CleanOptions{RunID: runID, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("cleanup of the killed run in %.1f s: deleted %v; notes %q", time.Since(t0).Seconds(), rep.Deleted, rep.Notes)
	for _, f := range rep.Failed {
		t.Errorf("cleanup failed: %s: %s", f.KubeObject, f.Error)
	}
	if want := "removed the RBD images run " + runID + " left, with " + with; !slices.ContainsFunc(rep.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("cleanup notes %q: want one starting %q", rep.Notes, want)
	}
	if imgs := rbdImages(t, ctx); slices.Contains(imgs, image) {
		t.Errorf("images after cleanup: %v", imgs)
	}
	if _, err := c.Client.CoreV1().Secrets(c.Namespace()).Get(ctx, "storbench-"+runID+"-ceph", metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		t.Errorf("the killed run's Secret after cleanup: %v", err)
	}
	if left, err := kubekit.FindLeftovers(ctx, c.Client, "", runID); err != nil || len(left) > 0 {
		t.Errorf("left in the cluster after cleanup: %v (%v)", left, err)
	}
}

// userCephSecret is a Secret with the client's ceph.conf from the test
// Ceph's (its fsid, monitor and auth lines: the daemons' paths and the
// admin's keyring are this host's) and keyring, removed at the end.
func userCephSecret(t *testing.T, ctx context.Context, c *kubekit.Cluster, ns string, keyring []byte) string {
	t.Helper()
	b, err := os.ReadFile(os.Getenv("CEPH_CONF"))
	if err != nil {
		t.Fatal(err)
	}
	conf := "[global]\n"
	for _, line := range strings.Split(string(b), "\n") {
		k, _, _ := strings.Cut(strings.TrimSpace(line), "=")
		if k = strings.TrimSpace(k); k == "fsid" || k == "mon host" || strings.HasPrefix(k, "auth ") {
			conf += strings.TrimSpace(line) + "\n"
		}
	}
	if !strings.Contains(conf, "mon host") {
		t.Fatalf("no mon host in %s", b)
	}
	return cephSecret(t, ctx, c, ns, conf, keyring)
}

// cephSecret is a Secret with conf and keyring, removed at the end.
func cephSecret(t *testing.T, ctx context.Context, c *kubekit.Cluster, ns, conf string, keyring []byte) string {
	t.Helper()
	name := unique("rbdpod-ceph")
	s := &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: ns}, Data: map[string][]byte{"ceph.conf": []byte(conf), "keyring": keyring}}
	if _, err := c.Client.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Client.CoreV1().Secrets(ns).Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the test's Secret: %v", err)
		}
	})
	return name
}

// keptImage makes the image rbd/keep with 8 MiB written, removed at the
// end, and returns its checksum.
func keptImage(t *testing.T, ctx context.Context) string {
	t.Helper()
	for _, args := range [][]string{{"create", "rbd/keep", "--size", "64M"}, {"bench", "--io-type", "write", "--io-total", "8M", "rbd/keep"}} {
		if out, err := exec.CommandContext(ctx, "rbd", args...).CombinedOutput(); err != nil {
			t.Fatalf("rbd %v: %v: %s", args, err, out)
		}
	}
	t.Cleanup(func() {
		if out, err := exec.Command("rbd", "rm", "--no-progress", "rbd/keep").CombinedOutput(); err != nil {
			t.Errorf("rbd rm rbd/keep: %v: %s", err, out)
		}
	})
	return imageSum(t, ctx, "keep")
}

func imageSum(t *testing.T, ctx context.Context, image string) string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "bash", "-c", "set -o pipefail; rbd export rbd/"+image+" - 2>/dev/null | sha256sum").Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))[0]
}

func rbdImages(t *testing.T, ctx context.Context) []string {
	t.Helper()
	out, err := exec.CommandContext(ctx, "rbd", "ls", "rbd").Output()
	if err != nil {
		t.Fatal(err)
	}
	names := strings.Fields(string(out))
	slices.Sort(names)
	return names
}

func openKind(t *testing.T, ctx context.Context, kind kube.Kind, target string) *runner.Group {
	t.Helper()
	sp, ok, err := kind.Parse(target)
	if !ok || err != nil {
		t.Fatalf("Parse(%s) = %v, %v", target, ok, err)
	}
	g, err := kind.Open(ctx, []runner.Spec{sp}, runner.GroupOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// quick1s is the built-in quick suite at 1 s per workload
// (quickSuiteYAML checks the names against the built-in's).
const quick1s = `name: quick-1s
defaults: {size: 64MiB, runtime: 1s}
workloads:
  - {name: seq-read, rw: read, bs: 1MiB, iodepth: 8}
  - {name: seq-write, rw: write, bs: 1MiB, iodepth: 8}
  - {name: rand-read-4k-qd32, rw: randread, bs: 4KiB, iodepth: 32}
  - {name: rand-write-4k-qd32, rw: randwrite, bs: 4KiB, iodepth: 32}
`

// quickSuiteYAML is quick1s, its workloads checked against the built-in
// quick suite's.
func quickSuiteYAML(t *testing.T) string {
	t.Helper()
	s, err := spec.Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	short, err := spec.Parse([]byte(quick1s), "suite")
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Workloads) != len(short.Workloads) {
		t.Fatalf("the quick suite has %d workloads, quick1s %d", len(s.Workloads), len(short.Workloads))
	}
	for i, w := range s.Workloads {
		if o := short.Workloads[i]; o.Name != w.Name || o.RW != w.RW || o.BlockSize != w.BlockSize || *o.IODepth != *w.IODepth {
			t.Fatalf("quick1s's %s differs from the quick suite's %s", o.Name, w.Name)
		}
	}
	return quick1s
}

// runRefused runs a write suite on targets and returns the run's error
// (or the first failed result's).
func runRefused(t *testing.T, ctx context.Context, targets []runner.Target) error {
	suite, err := spec.Parse([]byte("name: w\nworkloads:\n  - {name: seq-write, rw: write, bs: 1MiB, size: 16MiB, runtime: 1s}\n"), "suite")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "rbdpod-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, dir+"/db.sqlite")
	if err != nil {
		return err
	}
	defer st.Close()
	run, err := (&engine.Engine{Store: st, Observer: logged{t}}).Run(ctx, engine.Plan{Suite: suite, Repeat: 1, Targets: targets})
	if err != nil {
		return err
	}
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		return err
	}
	for _, r := range rs {
		if r.Status != result.StatusComplete {
			return errorString(r.Error)
		}
	}
	return nil
}

type errorString string

func (e errorString) Error() string { return string(e) }

// checkRBDPodResults: every workload on every node, complete, with bytes
// moved and the pool's facts.
func checkRBDPodResults(t *testing.T, rs []result.Result, nodes []string) {
	t.Helper()
	want := map[result.LabelKey]string{
		result.LabelCephPool:         "rbd",
		result.LabelReplicas:         "3",
		result.LabelCephOSDs:         "osd.0,osd.1,osd.2",
		result.LabelReplicaNodes:     strings.Join(sorted(nodes), ","),
		result.LabelReplicationModel: result.ReplicationPrimary,
	}
	seen := map[string]bool{}
	for _, r := range rs {
		node := result.LabelNode.Of(r.Labels)
		seen[r.Workload+" "+node] = true
		var bps float64
		for _, d := range r.Directions() {
			bps += d.BytesPerSec
			t.Logf("%s %s on %s: %s %.1f MB/s, %.0f IOPS", r.Target, r.Workload, node, d.Name, d.BytesPerSec/1e6, d.IOPS)
		}
		if r.Status != result.StatusComplete || bps <= 0 {
			t.Errorf("%s %s: %s %s", r.Target, r.Workload, r.Status, r.Error)
		}
		if img := result.LabelCephImage.Of(r.Labels); img != "storbench-"+r.RunID+"-"+node {
			t.Errorf("%s %s: image %q", r.Target, r.Workload, img)
		}
		for k, v := range want {
			if got := k.Of(r.Labels); got != v {
				t.Errorf("%s %s: label %s = %q, want %q", r.Target, r.Workload, k, got, v)
			}
		}
	}
	for _, n := range nodes {
		for _, w := range []string{"seq-read", "seq-write", "rand-read-4k-qd32", "rand-write-4k-qd32"} {
			if !seen[w+" "+n] {
				t.Errorf("no %s result from node %s", w, n)
			}
		}
	}
}
