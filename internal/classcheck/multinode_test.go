package classcheck_test

// Integration tests on the project's multi-node test cluster
// (test/cluster/cluster.sh: three real nodes, local-path, and the test CSI driver
// of test/cluster/csi.sh with its classes, one per mode, some of them
// deliberately broken).

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner/ssh/sshtest"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/test/kubetest"
	"github.com/storbench/storbench/test/testcsi"
)

// needClass skips when the cluster has no such class: the single-node
// cluster has neither local-path nor the test driver.
func needClass(t *testing.T, client kubernetes.Interface, class string) {
	t.Helper()
	if _, err := client.StorageV1().StorageClasses().Get(context.Background(), class, metav1.GetOptions{}); err != nil {
		t.Skipf("needs StorageClass %s (test/cluster/cluster.sh with test/cluster/csi.sh): %v", class, err)
	}
}

// fakeNodes adds two Ready kwok nodes, as the other packages' tests leave
// on CI's cluster: pods there "run" without a container, and an exec in
// them runs on kwok's host. A check's pods must never land there.
func fakeNodes(t *testing.T, client kubernetes.Interface) {
	t.Helper()
	ctx := context.Background()
	for i := 1; i <= 2; i++ {
		name := fmt.Sprintf("sbq-fake-%d", i)
		n := &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels: map[string]string{corev1.LabelHostname: name, "kubernetes.io/os": "linux"}},
			Status: corev1.NodeStatus{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
				Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
			},
		}
		if _, err := client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
			t.Fatal(err)
		}
		t.Cleanup(func() { client.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{}) })
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
			if got, err := client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{}); err == nil && kubekit.NodeReady(*got) {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("fake node %s not Ready within 30s (is kwok running?)", name)
			}
		}
	}
}

func qualify(t *testing.T, class string, o classcheck.Options) *classcheck.Report {
	t.Helper()
	c, client := connect(t)
	needClass(t, client, class)
	fakeNodes(t, client)
	o.Class, o.Image, o.PullPolicy = class, realImage, corev1.PullNever
	if o.Timeout == 0 {
		o.Timeout = 90 * time.Second
	}
	if o.RunID == "" {
		o.RunID = runIDFor(class)
	}
	o.Progress = func(m string) { t.Log(m) }
	rep, err := classcheck.Qualify(context.Background(), c, o)
	if err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, client, o.RunID)
	noSnapshotsLeft(t, client, o.RunID)
	if ch := rep.Check(classcheck.CheckCleanup); ch == nil || ch.Outcome != classcheck.Works || len(rep.Leaks) > 0 {
		t.Errorf("cleanup %+v, leaks %v", ch, rep.Leaks)
	}
	return rep
}

func runIDFor(class string) string {
	return fmt.Sprintf("%s%06x", strings.ReplaceAll(class, "-", "")[:4], time.Now().UnixNano()&0xffffff)
}

// refusedDeletes watches the PVs of the run's claims from now on; the
// function it returns counts, for each of them, how often the provisioner
// failed to delete it (its Warning events VolumeFailedDelete: the driver
// refused, or the provisioner itself, which refuses while it sees a
// VolumeAttachment for the volume; it retries after a backoff that starts
// at 1 s and doubles) and says why.
func refusedDeletes(t *testing.T, client kubernetes.Interface, runID string) func() map[string]refusals {
	t.Helper()
	prefix := "sbq-" + strings.ToLower(runID) + "-"
	var mu sync.Mutex
	pvs := map[string]bool{}
	ctx, stop := context.WithCancel(context.Background())
	t.Cleanup(stop)
	f := informers.NewSharedInformerFactory(client, 0)
	inf := f.Core().V1().PersistentVolumes().Informer()
	if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: func(obj any) {
			if pv, ok := obj.(*corev1.PersistentVolume); ok && pv.Spec.ClaimRef != nil && strings.HasPrefix(pv.Spec.ClaimRef.Name, prefix) {
				mu.Lock()
				pvs[pv.Name] = true
				mu.Unlock()
			}
		},
	}); err != nil {
		t.Fatal(err)
	}
	f.Start(ctx.Done())
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("the PV informer did not sync")
	}
	return func() map[string]refusals {
		t.Helper()
		// a cluster-scoped object's events are in the default namespace
		evs, err := client.CoreV1().Events(metav1.NamespaceDefault).List(context.Background(), metav1.ListOptions{
			FieldSelector: "involvedObject.kind=PersistentVolume,reason=VolumeFailedDelete"})
		if err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if len(pvs) == 0 {
			t.Fatalf("no PV of the run's claims (%s*) was seen", prefix)
		}
		refused := map[string]refusals{}
		for _, e := range evs.Items {
			if pvs[e.InvolvedObject.Name] {
				r := refused[e.InvolvedObject.Name]
				r.n += max(int(e.Count), 1) // repeats are counted on one event
				r.why = append(r.why, e.Message)
				refused[e.InvolvedObject.Name] = r
			}
		}
		return refused
	}
}

type refusals struct {
	n   int
	why []string
}

func noSnapshotsLeft(t *testing.T, client kubernetes.Interface, runID string) {
	t.Helper()
	raw, err := client.Discovery().RESTClient().Get().AbsPath("/apis/snapshot.storage.k8s.io/v1/volumesnapshotcontents").DoRaw(context.Background())
	if err != nil {
		return // no snapshot API
	}
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				VolumeSnapshotRef corev1.ObjectReference `json:"volumeSnapshotRef"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatal(err)
	}
	for _, c := range list.Items {
		if strings.HasPrefix(c.Spec.VolumeSnapshotRef.Name, "sbq-"+strings.ToLower(runID)+"-") {
			t.Errorf("left behind: VolumeSnapshotContent %s", c.Metadata.Name)
		}
	}
}

func wantOutcomes(t *testing.T, rep *classcheck.Report, want map[string]classcheck.Outcome) {
	t.Helper()
	for name, outcome := range want {
		if ch := rep.Check(name); ch == nil || ch.Outcome != outcome {
			t.Errorf("%s: %+v, want %s", name, ch, outcome)
		}
	}
}

// The capable driver, full profile (CI's one full run): every check works
// but ReadWriteMany, which the driver refuses (it offers single-node
// access only), app-fit included (two processes in one pod, SQLite in
// every mode): provisioning with enough claims for a p95, failover
// between real nodes with every acknowledged record read back.
func TestClusterQualifyCapableCSIFull(t *testing.T) {
	start := time.Now()
	// The app-fit check runs storbench's own hidden command in the pods:
	// the real binary, not this test's, built once the test holds the
	// cluster (the build's CPU would otherwise land on the other
	// package's test).
	_, client := connect(t)
	needClass(t, client, "testcsi-shared")
	runID := runIDFor("testcsi-shared")
	refused := refusedDeletes(t, client, runID)
	rep := qualify(t, "testcsi-shared", classcheck.Options{Profile: classcheck.Full, AppBinary: appBinary(t), RunID: runID})
	t.Logf("full profile on testcsi-shared: %s wall", time.Since(start).Round(time.Second))
	for _, c := range rep.Checks {
		t.Logf("%-18s %-26s %8s %s", c.Name, c.Outcome, c.Took.Round(time.Millisecond), c.Reason)
		for _, s := range c.Stages {
			t.Logf("    %-18s %v", s.Name, s.Samples)
		}
	}
	wantOutcomes(t, rep, map[string]classcheck.Outcome{
		classcheck.CheckProvisioning: classcheck.Works, classcheck.CheckPersistence: classcheck.Works,
		classcheck.CheckSnapshot: classcheck.Works, classcheck.CheckClone: classcheck.Works,
		classcheck.CheckExpansionOnline: classcheck.Works, classcheck.CheckExpansionOffline: classcheck.Works,
		classcheck.CheckBlock: classcheck.Works, classcheck.CheckNonRoot: classcheck.Works,
		classcheck.CheckEveryNode: classcheck.Works, classcheck.CheckFailover: classcheck.Works,
		classcheck.CheckNodeFailure: classcheck.Skipped, classcheck.CheckReadWriteMany: classcheck.NotSupportedMeasured,
		classcheck.CheckAppFit: classcheck.Works,
	})
	prov := rep.Check(classcheck.CheckProvisioning)
	names := map[string]int{}
	for _, s := range prov.Stages {
		names[s.Name] = len(s.Samples)
	}
	for _, s := range []string{classcheck.StageBound, classcheck.StageAttached, classcheck.StageMounted, classcheck.StageRunning, classcheck.StageWritten, classcheck.StageDetached, classcheck.StagePVGone} {
		if names[s] != classcheck.MinClaimsForP95 {
			t.Errorf("provisioning stage %s: %d samples, want %d (%v)", s, names[s], classcheck.MinClaimsForP95, names)
		}
	}
	// each claim is deleted once its volume is detached, so no PV waits
	// out the provisioner's retries (claims deleted with their pods, in
	// a mutated build: 19 of 20 PVs refused, 13 of them two or three times). The
	// provisioner's own cache of VolumeAttachments can lag the deletion
	// that storbench saw by a moment under load, and it then refuses
	// once and deletes the volume at its retry a second later (once in
	// CI, BENCHMARKS.md); refused twice, the claim went before its volume
	// was detached.
	for pv, r := range refused() {
		if r.n > 1 {
			t.Errorf("provisioning: the deletion of %s was refused %d times: %q", pv, r.n, r.why)
		} else {
			t.Logf("provisioning: the deletion of %s was refused once, deleted at the retry: %q", pv, r.why)
		}
	}
	if f := rep.Check(classcheck.CheckFailover); f != nil && !strings.Contains(f.Reason, "records intact") {
		t.Errorf("failover: %+v", f)
	}
	// every-node's volumes run side by side: each real node still gets
	// its own, written and timed
	if e := rep.Check(classcheck.CheckEveryNode); e != nil {
		nodes := kubetest.Env(t).Nodes()
		if len(e.Stages) != 1 || len(e.Stages[0].Samples) != len(nodes) {
			t.Errorf("every-node: %+v, want a first-write sample for each of %d nodes", e.Stages, len(nodes))
		}
		_, named, _ := strings.Cut(e.Reason, ": ")
		got := strings.Split(named, ", ")
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(nodes)); !slices.Equal(got, want) {
			t.Errorf("every-node: %q, want the nodes %v", e.Reason, want)
		}
	}
}

// A class whose volumes reach only some nodes (its allowedTopologies name
// two of the three real nodes) fails every-node, naming the third node and
// the scheduler's reason, and only it: the nodes' volumes are made side
// by side (everyNodeAtOnce), and the errors come back per node.
func TestClusterEveryNodeNamesTheNodeItsClassCannotReach(t *testing.T) {
	kubetest.Shared(t) // its own class, claims and pods; no cordon; measures nothing
	_, client := connect(t)
	ctx := context.Background()
	needClass(t, client, "testcsi-shared")
	base, err := client.StorageV1().StorageClasses().Get(ctx, "testcsi-shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	nodes := kubetest.Env(t).Nodes()
	if len(nodes) < 3 {
		t.Skipf("needs three real nodes, the cluster has %v", nodes)
	}
	slices.Sort(nodes)
	reached, left := nodes[:2], nodes[2]
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{
		ObjectMeta:  metav1.ObjectMeta{Name: fmt.Sprintf("sbq-two-nodes-%x", time.Now().UnixNano()&0xffffff)},
		Provisioner: base.Provisioner, Parameters: base.Parameters, ReclaimPolicy: base.ReclaimPolicy, VolumeBindingMode: &wffc,
		AllowedTopologies: []corev1.TopologySelectorTerm{{MatchLabelExpressions: []corev1.TopologySelectorLabelRequirement{
			{Key: testcsi.TopologyKey, Values: reached}}}},
	}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, class, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		client.StorageV1().StorageClasses().Delete(context.Background(), class.Name, metav1.DeleteOptions{})
	})
	// The check waits for the third node's pod as long as for any (the
	// scheduler's "didn't find available persistent volumes to bind" can
	// pass, as a static PV appears): 30 s here.
	rep := qualify(t, class.Name, classcheck.Options{Only: []string{classcheck.CheckEveryNode}, Timeout: 30 * time.Second})
	ch := rep.Check(classcheck.CheckEveryNode)
	if ch == nil || ch.Outcome != classcheck.Failed {
		t.Fatalf("every-node on %s (reaches %v): %+v, want failed", class.Name, reached, ch)
	}
	t.Logf("every-node: %s", ch.Reason)
	want := fmt.Sprintf("1 of %d nodes cannot mount and write: %s: ", len(nodes), left)
	if !strings.HasPrefix(ch.Reason, want) || !strings.Contains(ch.Reason, "persistent volumes to bind") {
		t.Errorf("every-node: %q, want it to start %q and give the scheduler's reason", ch.Reason, want)
	}
	for _, n := range reached {
		if strings.Contains(ch.Reason, n+": ") {
			t.Errorf("every-node names %s, which its class reaches: %s", n, ch.Reason)
		}
	}
}

// A driver mode that lies fails the check of what it declares.
func TestClusterQualifyBrokenModes(t *testing.T) {
	kubetest.Shared(t) // one check at a time, no cordon, its own run's objects
	for _, c := range []struct{ class, check, why string }{
		{"testcsi-bad-snapshot", classcheck.CheckSnapshot, "restore holds data written after the snapshot"},
		{"testcsi-stuck-expand", classcheck.CheckExpansionOnline, "controller resize: "},
		{"testcsi-root-only", classcheck.CheckNonRoot, "cannot write"},
	} {
		t.Run(c.class, func(t *testing.T) {
			rep := qualify(t, c.class, classcheck.Options{Only: []string{c.check}, Timeout: 20 * time.Second})
			ch := rep.Check(c.check)
			// failed for the mode's own reason, not for a step that timed out before it
			if ch == nil || ch.Outcome != classcheck.Failed || !strings.Contains(ch.Reason, c.why) {
				t.Fatalf("%s on %s: %+v, want failed: %s", c.check, c.class, ch, c.why)
			}
			t.Logf("%s: %s (%s)", c.check, ch.Reason, ch.Took)
		})
	}
}

// Node-local classes are node-pinned, measured from the scheduler's event.
func TestClusterQualifyNodePinned(t *testing.T) {
	for _, class := range []string{"testcsi-local"} { // local-path's: TestClusterQualifyLocalPathQuick
		t.Run(class, func(t *testing.T) {
			rep := qualify(t, class, classcheck.Options{Only: []string{classcheck.CheckFailover}})
			ch := rep.Check(classcheck.CheckFailover)
			if ch == nil || ch.Outcome != classcheck.NotSupportedMeasured || !strings.HasPrefix(ch.Reason, "node-pinned") {
				t.Fatalf("failover on %s: %+v, want node-pinned", class, ch)
			}
		})
	}
}

// Ctrl-C in the middle of a snapshot, an expansion and a failover leaves
// no claim, volume, snapshot or cordoned node behind.
func TestClusterQualifyCancelled(t *testing.T) {
	for _, c := range []struct {
		check string
		after time.Duration
	}{
		{classcheck.CheckSnapshot, 6 * time.Second},
		{classcheck.CheckExpansionOnline, 6 * time.Second},
		{classcheck.CheckFailover, 8 * time.Second},
	} {
		t.Run(c.check, func(t *testing.T) {
			cl, client := connect(t)
			needClass(t, client, "testcsi-shared")
			fakeNodes(t, client)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			runID := fmt.Sprintf("cc%06x", time.Now().UnixNano()&0xffffff)
			rep, err := classcheck.Qualify(ctx, cl, classcheck.Options{Class: "testcsi-shared", Image: realImage, PullPolicy: corev1.PullNever,
				Timeout: time.Minute, RunID: runID, Only: []string{c.check},
				Progress: func(m string) {
					t.Log(m)
					if strings.HasSuffix(m, c.check+" ...") {
						time.AfterFunc(c.after, cancel)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			if ch := rep.Check(c.check); ch == nil || ch.Outcome == classcheck.Failed {
				t.Errorf("%s after Ctrl-C: %+v", c.check, ch)
			}
			nothingLeft(t, client, runID)
			noSnapshotsLeft(t, client, runID)
			if len(rep.Leaks) > 0 {
				t.Errorf("leaks %v", rep.Leaks)
			}
		})
	}
}

// The k3s default, local-path: provisions dynamically (its PVs go when
// their claims do), declares no snapshots or expansion, and is node-pinned.
func TestClusterQualifyLocalPathQuick(t *testing.T) {
	start := time.Now()
	rep := qualify(t, "local-path", classcheck.Options{Claims: 3})
	t.Logf("quick profile on local-path: %s wall", time.Since(start).Round(time.Second))
	wantOutcomes(t, rep, map[string]classcheck.Outcome{
		classcheck.CheckProvisioning: classcheck.Works, classcheck.CheckPersistence: classcheck.Works,
		classcheck.CheckSnapshot: classcheck.NotSupportedDeclared, classcheck.CheckExpansionOnline: classcheck.NotSupportedDeclared,
		classcheck.CheckFailover: classcheck.NotSupportedMeasured,
	})
	if ch := rep.Check(classcheck.CheckFailover); ch == nil || !strings.HasPrefix(ch.Reason, "node-pinned") {
		t.Errorf("failover on local-path: %+v, want node-pinned", ch)
	}
	for _, c := range rep.Checks {
		t.Logf("%-18s %-26s %8s %s", c.Name, c.Outcome, c.Took.Round(time.Millisecond), c.Reason)
		for _, s := range c.Stages {
			t.Logf("    %-18s %v", s.Name, s.Samples)
		}
	}
}

// failNode is the node the node-failure tests stop: a namespaced node, not
// the host's (the harness's control plane and CSI controller live there).
const failNode = "kreal-node-2"

// nodeCommands gives the node-failure check the harness's own node stop
// and start, run over SSH (a real sshd on 127.0.0.1) on the inventory host
// named like the node (the node's own host, as the check requires; the
// harness's nodes all live on this machine), as a user's k3s-killall.sh
// would be. stop and start are cluster.sh node's words, or a shell
// command of the test's own.
func nodeCommands(t *testing.T, client kubernetes.Interface, stop, start string) *classcheck.NodeFailure {
	t.Helper()
	nf, err := storbench.NodeFailure(nodeFailureRequest(t, client, stop, start))
	if err != nil {
		t.Fatal(err)
	}
	return nf
}

// nodeFailureRequest is nodeCommands' request, for a run in another
// process.
func nodeFailureRequest(t *testing.T, client kubernetes.Interface, stop, start string) storbench.NodeFailureRequest {
	t.Helper()
	if _, err := client.CoreV1().Nodes().Get(context.Background(), failNode, metav1.GetOptions{}); err != nil {
		t.Skipf("needs node %s (test/cluster/cluster.sh with 2 or more real nodes): %v", failNode, err)
	}
	kapi := os.Getenv("KAPI_ROOT")
	if kapi == "" {
		t.Skip("needs KAPI_ROOT (scripts/k8s-integration.sh sets it)")
	}
	srv := sshtest.Start(t)
	dir := t.TempDir()
	key, pub := sshtest.Key(t, dir, "id")
	srv.Authorize(t, pub)
	known := filepath.Join(dir, "known_hosts")
	if err := os.WriteFile(known, []byte(srv.KnownHostsLine()+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inv := filepath.Join(dir, "hosts.ini")
	line := fmt.Sprintf("%s ansible_host=127.0.0.1 ansible_port=%d ansible_user=%s ansible_ssh_private_key_file=%s ansible_ssh_common_args='-F none -o UserKnownHostsFile=%s'\n",
		failNode, srv.Port, sshtest.User(t), key, known)
	if err := os.WriteFile(inv, []byte(line), 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "..", "test", "cluster", "cluster.sh"))
	if err != nil {
		t.Fatal(err)
	}
	command := func(op string) string {
		if op == "stop" || op == "start" {
			return fmt.Sprintf("KAPI_ROOT=%s bash %s node %s {node}", kapi, script, op)
		}
		return strings.ReplaceAll(op, "$KAPI_ROOT", kapi)
	}
	return storbench.NodeFailureRequest{Node: failNode, Inventory: inv, StopCommand: command(stop), StartCommand: command(start), OutOfService: true,
		StateDir: t.TempDir()}
}

// nodeRestored fails unless the node is Ready, schedulable and free of the
// out-of-service taint.
func nodeRestored(t *testing.T, client kubernetes.Interface, name string) {
	t.Helper()
	n, err := client.CoreV1().Nodes().Get(context.Background(), name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !kubekit.NodeReady(*n) || n.Spec.Unschedulable {
		t.Errorf("node %s: ready %v, unschedulable %v after the check", name, kubekit.NodeReady(*n), n.Spec.Unschedulable)
	}
	for _, tn := range n.Spec.Taints {
		if tn.Key == corev1.TaintNodeOutOfService {
			t.Errorf("node %s keeps the taint %v", name, tn)
		}
	}
}

// A real node stopped (its kubelet, containerd and containers killed as a
// dead machine) by a command run over SSH: with the out-of-service taint
// the writer runs again on another node with every acknowledged record;
// the node comes back and the taint goes. Ctrl-C while the node is down
// leaves it started and untainted, and nothing behind.
func TestClusterQualifyNodeFailure(t *testing.T) {
	cl, client := connect(t)
	needClass(t, client, "testcsi-shared")
	nf := nodeCommands(t, client, "stop", "start")
	t.Run("out-of-service", func(t *testing.T) {
		rep := qualify(t, "testcsi-shared", classcheck.Options{Only: []string{classcheck.CheckNodeFailure}, NodeFailure: nf})
		ch := rep.Check(classcheck.CheckNodeFailure)
		if ch == nil || ch.Outcome != classcheck.Works || !strings.Contains(ch.Reason, "out-of-service taint") || !strings.Contains(ch.Reason, "records intact") ||
			!strings.Contains(ch.Reason, "verified gone: the writer pod's own process no longer answers") {
			t.Fatalf("node failure: %+v", ch)
		}
		t.Logf("%s: %s", ch.Took.Round(time.Millisecond), ch.Reason)
		for _, s := range ch.Stages {
			t.Logf("    %-14s %v", s.Name, s.Samples)
		}
		nodeRestored(t, client, failNode)
	})
	t.Run("ctrl-c", func(t *testing.T) {
		fakeNodes(t, client)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		runID := fmt.Sprintf("cn%06x", time.Now().UnixNano()&0xffffff)
		rep, err := classcheck.Qualify(ctx, cl, classcheck.Options{Class: "testcsi-shared", Image: realImage, PullPolicy: corev1.PullNever,
			Timeout: time.Minute, RunID: runID, Only: []string{classcheck.CheckNodeFailure}, NodeFailure: nf,
			Progress: func(m string) {
				t.Log(m)
				if strings.HasSuffix(m, classcheck.CheckNodeFailure+" ...") {
					time.AfterFunc(20*time.Second, cancel) // the node is stopped by then (after the writer and the prober), not yet NotReady
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		if ch := rep.Check(classcheck.CheckNodeFailure); ch == nil || ch.Outcome != classcheck.Skipped {
			t.Errorf("node failure after Ctrl-C: %+v", ch)
		}
		nothingLeft(t, client, runID)
		if len(rep.Leaks) > 0 {
			t.Errorf("leaks %v", rep.Leaks)
		}
		nodeRestored(t, client, failNode)
	})
}

// halfStop stops a node's kubelet and containerd and leaves its shims and
// containers running, as `systemctl stop k3s-agent` does on k3s (the unit's
// KillMode is process); halfStart starts them again (containerd takes the
// running shims back).
const (
	halfStop  = "kill -9 $(cat $KAPI_ROOT/run/nodes/{node}/run/kubelet.pid) $(cat $KAPI_ROOT/run/nodes/{node}/run/containerd.pid)"
	halfStart = "KAPI_ROOT=$KAPI_ROOT bash " + "$SCRIPTS/nodes.sh start 2"
)

// A node "stopped" so that its containers keep running goes NotReady, but
// the writer pod's own process still answers: the node is not tainted
// out-of-service, no second writer starts on the volume, and the report
// says why. Cost on the harness: 28 s (02:35 UTC).
func TestClusterQualifyNodeFailureContainersStillRun(t *testing.T) {
	_, client := connect(t)
	needClass(t, client, "testcsi-shared")
	scripts, err := filepath.Abs(filepath.Join("..", "..", "test", "cluster"))
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	nf := nodeCommands(t, client, halfStop, strings.ReplaceAll(halfStart, "$SCRIPTS", scripts))
	tainted := make(chan string, 1)
	go watchTaint(t, client, tainted)
	rep := qualify(t, "testcsi-shared", classcheck.Options{Only: []string{classcheck.CheckNodeFailure}, NodeFailure: nf})
	ch := rep.Check(classcheck.CheckNodeFailure)
	t.Logf("%s wall: %+v", time.Since(start).Round(time.Second), ch)
	if ch == nil || ch.Outcome != classcheck.Failed || !strings.Contains(ch.Reason, "its containers still run") ||
		!strings.Contains(ch.Reason, "not tainted out-of-service") || !strings.Contains(ch.Reason, "k3s-killall.sh") {
		t.Errorf("node failure with the containers still running: %+v", ch)
	}
	select {
	case n := <-tainted:
		t.Errorf("node %s was tainted out-of-service while its containers ran", n)
	default:
	}
	nodeRestored(t, client, failNode)
}

// watchTaint reports the first node seen with the out-of-service taint,
// until the test ends.
func watchTaint(t *testing.T, client kubernetes.Interface, seen chan<- string) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	for ctx.Err() == nil {
		nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
		if err == nil {
			for _, n := range nodes.Items {
				for _, tn := range n.Spec.Taints {
					if tn.Key == corev1.TaintNodeOutOfService {
						select {
						case seen <- n.Name:
						default:
						}
						return
					}
				}
			}
		}
		time.Sleep(200 * time.Millisecond)
	}
}
