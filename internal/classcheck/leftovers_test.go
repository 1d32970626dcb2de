package classcheck_test

// Cluster tests of what a class measurement leaves, and of what it uses:
// a run killed outright (SIGKILL) mid-failover, two runs on one class at
// once, and the snapshot class beside a backup class.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/test/kubetest"
)

// killHelperEnv, when set to a run ID, makes the test binary a storbench
// qualification to be killed: it runs the snapshot and failover checks on
// testcsi-shared, printing its progress, until its parent SIGKILLs it.
const killHelperEnv = "STORBENCH_CLASSCHECK_KILL_HELPER"

// killNodeFailureEnv, set beside killHelperEnv to a NodeFailureRequest
// (JSON), makes the helper run the node-failure check instead.
const killNodeFailureEnv = "STORBENCH_CLASSCHECK_KILL_NODEFAILURE"

func TestMain(m *testing.M) {
	if runID := os.Getenv(killHelperEnv); runID != "" {
		o := classcheck.Options{Class: "testcsi-shared", Image: realImage, PullPolicy: corev1.PullNever, Timeout: time.Minute, RunID: runID,
			Only: []string{classcheck.CheckSnapshot, classcheck.CheckFailover}, Progress: func(m string) { fmt.Println(m) }}
		var err error
		if js := os.Getenv(killNodeFailureEnv); js != "" {
			var req storbench.NodeFailureRequest
			if err = json.Unmarshal([]byte(js), &req); err == nil {
				o.NodeFailure, err = storbench.NodeFailure(req)
				o.Only = []string{classcheck.CheckNodeFailure}
			}
		}
		var c *kubekit.Cluster
		if err == nil {
			c, err = kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")})
		}
		if err == nil {
			_, err = classcheck.Qualify(context.Background(), c, o)
		}
		fmt.Println("helper ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// A qualification SIGKILLed during the graceful failover check leaves its
// cordon (marked with its run ID), its snapshot, claims and pods; the next
// run names the cordon and the snapshot before it starts, and cleanup
// --k8s lists and removes them all. Cost on the harness: 23 s (02:35 UTC).
func TestClusterKilledRunLeavesWhatCleanupUndoes(t *testing.T) {
	c, client := connect(t)
	needClass(t, client, "testcsi-shared")
	fakeNodes(t, client)
	start := time.Now()
	runID := fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102-150405"), time.Now().UnixNano()&0xffff)
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), killHelperEnv+"="+runID)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Killed once the failover check has cordoned its node.
	failoverStarted := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(out)
		once := sync.Once{}
		for sc.Scan() {
			t.Log("killed run: " + sc.Text())
			if strings.HasSuffix(sc.Text(), classcheck.CheckFailover+" ...") {
				once.Do(func() { close(failoverStarted) })
			}
		}
	}()
	select {
	case <-failoverStarted:
	case <-time.After(3 * time.Minute):
		child.Process.Kill()
		t.Fatal("the run never reached the failover check")
	}
	var marks []kubekit.NodeMark
	for deadline := time.Now().Add(time.Minute); len(marks) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if marks, err = kubekit.FindNodeMarks(context.Background(), client, runID); err != nil {
			t.Fatal(err)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if len(marks) != 1 || marks[0].What != kubekit.MarkCordon {
		t.Fatalf("marks of the killed run: %v", marks)
	}
	t.Cleanup(func() { kubekit.UndoNodeMark(context.Background(), client, marks[0]) }) // when the test fails before cleanup
	snaps, err := kubekit.FindSnapshots(context.Background(), client, "", runID)
	if err != nil || len(snaps) != 1 {
		t.Fatalf("snapshots of the killed run: %v %v", snaps, err)
	}

	// The next run says what it found.
	next, err := classcheck.Qualify(context.Background(), c, classcheck.Options{Class: "testcsi-shared", Image: realImage, PullPolicy: corev1.PullNever,
		RunID: runID + "-next", Only: []string{"nothing"}})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(next.Notes, "\n")
	for _, want := range []string{marks[0].String(), snaps[0].String() + " of run " + runID, "storbench cleanup --k8s --run " + runID} {
		if !strings.Contains(notes, want) {
			t.Errorf("the next run's notes lack %q:\n%s", want, notes)
		}
	}

	rep, err := storbench.CleanupKube(context.Background(), storbench.KubeCleanupRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
		RunID: runID, Timeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	js, _ := json.Marshal(rep)
	t.Logf("cleanup: %s", js)
	if len(rep.Failed) > 0 || !strings.Contains(strings.Join(rep.Notes, "\n"), "lifted the cordon storbench run "+runID+" left on node "+marks[0].Node) {
		t.Errorf("cleanup did not lift the cordon: %s", js)
	}
	found := map[string]int{}
	for _, o := range rep.Found {
		found[o.Kind]++
	}
	if found["volumesnapshot"] != 1 || found["pvc"] == 0 || found["pod"] == 0 {
		t.Errorf("cleanup found %v, want the snapshot, claims and pods", found)
	}
	n, err := client.CoreV1().Nodes().Get(context.Background(), marks[0].Node, metav1.GetOptions{})
	if err != nil || n.Spec.Unschedulable || n.Annotations[kubekit.AnnotationCordonedBy] != "" {
		t.Errorf("node %s after cleanup: unschedulable %v, annotations %v (%v)", marks[0].Node, n.Spec.Unschedulable, n.Annotations, err)
	}
	nothingLeft(t, client, runID)
	if left, _ := kubekit.FindSnapshots(context.Background(), client, "", runID); len(left) > 0 {
		t.Errorf("snapshots left: %v", left)
	}
	t.Logf("killed run and its cleanup: %s", time.Since(start).Round(time.Second))
}

// Two measurements of one class at once both complete, and neither's
// cleanup touches the other's objects: each finds its own by its labels
// and the names it created. Cost on the harness: about 30 s.
func TestClusterTwoRunsOnOneClass(t *testing.T) {
	kubetest.Shared(t) // no cordon, no rate, checks by run ID
	c, client := connect(t)
	needClass(t, client, "testcsi-shared")
	fakeNodes(t, client)
	start := time.Now()
	stamp := time.Now().UTC().Format("20060102-150405")
	var wg sync.WaitGroup
	reps := make([]*classcheck.Report, 2)
	errs := make([]error, 2)
	for i := range reps {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			reps[i], errs[i] = classcheck.Qualify(context.Background(), c, classcheck.Options{Class: "testcsi-shared", Image: realImage,
				PullPolicy: corev1.PullNever, Timeout: 90 * time.Second, RunID: fmt.Sprintf("%s-%04x", stamp, i),
				Only: []string{classcheck.CheckProvisioning, classcheck.CheckPersistence, classcheck.CheckSnapshot}})
		}(i)
	}
	wg.Wait()
	for i, rep := range reps {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for _, ch := range rep.Checks {
			if ch.Outcome != classcheck.Works && ch.Outcome != classcheck.Skipped {
				t.Errorf("run %s: %s: %s %s", rep.RunID, ch.Name, ch.Outcome, ch.Reason)
			}
		}
		if len(rep.Leaks) > 0 {
			t.Errorf("run %s leaks %v", rep.RunID, rep.Leaks)
		}
		nothingLeft(t, client, rep.RunID)
	}
	t.Logf("two runs at once: %s", time.Since(start).Round(time.Second))
}

// With two snapshot classes for the driver, the one marked default making
// backups, the snapshot check uses the other and says so. Cost on the
// harness: about 15 s.
func TestClusterSnapshotClassNeverABackup(t *testing.T) {
	_, client := connect(t)
	needClass(t, client, "testcsi-shared")
	classes, err := kubekit.SnapshotClasses(context.Background(), client)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := client.StorageV1().StorageClasses().Get(context.Background(), "testcsi-shared", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var usual string
	for _, cl := range classes {
		if cl.Driver == sc.Provisioner {
			usual = cl.Name
		}
	}
	if usual == "" {
		t.Fatalf("no VolumeSnapshotClass for %s on the harness", sc.Provisioner)
	}
	backup := fmt.Sprintf("sbq-backup-%d", os.Getpid())
	body, _ := json.Marshal(map[string]any{"apiVersion": "snapshot.storage.k8s.io/v1", "kind": "VolumeSnapshotClass",
		"metadata": map[string]any{"name": backup, "annotations": map[string]string{kubekit.AnnotationDefaultSnapshotClass: "true"}},
		"driver":   sc.Provisioner, "deletionPolicy": "Delete", "parameters": map[string]string{"type": "bak"}})
	rc := client.Discovery().RESTClient()
	if err := rc.Post().AbsPath(kubekit.SnapshotAPI, "volumesnapshotclasses").SetHeader("Content-Type", "application/json").Body(body).Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.Delete().AbsPath(kubekit.SnapshotAPI, "volumesnapshotclasses", backup).Do(context.Background()).Error(); err != nil {
			t.Error(err)
		}
	})
	rep := qualify(t, "testcsi-shared", classcheck.Options{Only: []string{classcheck.CheckSnapshot}})
	ch := rep.Check(classcheck.CheckSnapshot)
	if ch == nil || ch.Outcome != classcheck.Works || !strings.Contains(ch.Reason, "VolumeSnapshotClass "+usual) || !strings.Contains(ch.Reason, "not "+backup) {
		t.Errorf("snapshot beside a backup class: %+v", ch)
	}
}

// A qualification SIGKILLed during the node-failure check, once its node
// is stopped and tainted out-of-service, leaves the taint and the stopped
// node, both marked with its run ID and the stop with the run's start
// command; the next run names them, and cleanup --k8s starts the node with
// that command (only that node: the one the run stopped), lifts the taint
// and removes the run's pods and claims. The node is Ready afterwards.
// Cost on the harness: 45 s (04:30 UTC; killed 30 s in).
func TestClusterKilledNodeFailureRunIsUndoneByCleanup(t *testing.T) {
	c, client := connect(t)
	needClass(t, client, "testcsi-shared")
	req := nodeFailureRequest(t, client, "stop", "start")
	fakeNodes(t, client)
	start := time.Now()
	runID := fmt.Sprintf("%s-%04x", time.Now().UTC().Format("20060102-150405"), time.Now().UnixNano()&0xffff)
	js, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	child := exec.Command(os.Args[0], "-test.run=^$")
	child.Env = append(os.Environ(), killHelperEnv+"="+runID, killNodeFailureEnv+"="+string(js))
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	// Whatever happens below, the node is brought back for the tests after this one.
	t.Cleanup(func() { bringBack(t, client, req, runID) })
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			t.Log("killed run: " + sc.Text())
		}
	}()
	// Killed once the out-of-service taint is on the node, as the API shows it.
	if err := waitTainted(client, failNode, runID, 3*time.Minute); err != nil {
		child.Process.Kill()
		child.Wait()
		t.Fatal(err)
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	t.Logf("killed after %s, with node %s stopped and tainted", time.Since(start).Round(time.Second), failNode)
	marks, err := kubekit.FindNodeMarks(context.Background(), client, runID)
	if err != nil {
		t.Fatal(err)
	}
	var what []string
	for _, m := range marks {
		what = append(what, m.What)
		if m.What == kubekit.MarkStopped && (m.Start == nil || m.Start.Command != strings.ReplaceAll(req.StartCommand, "{node}", failNode)) {
			t.Errorf("the stop's record lacks the run's start command: %+v", m.Start)
		}
	}
	if strings.Join(what, ",") != kubekit.MarkTaint+","+kubekit.MarkStopped && strings.Join(what, ",") != kubekit.MarkStopped+","+kubekit.MarkTaint {
		t.Fatalf("marks of the killed run: %v", marks)
	}

	next, err := classcheck.Qualify(context.Background(), c, classcheck.Options{Class: "testcsi-shared", Image: realImage, PullPolicy: corev1.PullNever,
		RunID: runID + "-next", Only: []string{"nothing"}})
	if err != nil {
		t.Fatal(err)
	}
	notes := strings.Join(next.Notes, "\n")
	for _, m := range marks {
		if !strings.Contains(notes, "found "+m.String()) {
			t.Errorf("the next run's notes lack %q:\n%s", m, notes)
		}
	}

	// The start command this machine kept before the stop is the one
	// cleanup runs: from a machine without that record (here, another
	// state directory), the node's annotation alone starts nothing.
	record := filepath.Join(req.StateDir, "stopped-nodes", runID+"_"+failNode+".json")
	if _, err := os.Stat(record); err != nil {
		t.Errorf("the run kept no start record on this machine: %v", err)
	}
	elsewhere, err := storbench.CleanupKube(context.Background(), storbench.KubeCleanupRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
		RunID: runID, Timeout: time.Minute, StateDir: t.TempDir(), DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(elsewhere.Notes, "\n"); !strings.Contains(got, "this machine has no record of it") || strings.Contains(got, "would start node") {
		t.Errorf("cleanup without this machine's record would start the node from its annotation:\n%s", got)
	}
	rep, err := storbench.CleanupKube(context.Background(), storbench.KubeCleanupRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
		RunID: runID, Timeout: time.Minute, StateDir: req.StateDir})
	if err != nil {
		t.Fatal(err)
	}
	rjs, _ := json.Marshal(rep)
	t.Logf("cleanup: %s", rjs)
	got := strings.Join(rep.Notes, "\n")
	for _, want := range []string{"started node " + failNode + ", which storbench run " + runID + " stopped", "ran `" + strings.ReplaceAll(req.StartCommand, "{node}", failNode) + "`",
		"lifted the " + kubekit.MarkTaint + " storbench run " + runID + " left on node " + failNode} {
		if !strings.Contains(got, want) {
			t.Errorf("cleanup's notes lack %q", want)
		}
	}
	if _, err := os.Stat(record); err == nil {
		t.Errorf("cleanup started the node and kept its start record %s", record)
	}
	if len(rep.Failed) > 0 {
		t.Errorf("cleanup failed: %v", rep.Failed)
	}
	nodeRestored(t, client, failNode)
	if left, _ := kubekit.FindNodeMarks(context.Background(), client, runID); len(left) > 0 {
		t.Errorf("marks left: %v", left)
	}
	nothingLeft(t, client, runID)
	t.Logf("killed node-failure run and its cleanup: %s", time.Since(start).Round(time.Second))
}

// waitTainted polls until the node carries the out-of-service taint with
// storbench's annotation naming runID.
func waitTainted(client kubernetes.Interface, node, runID string, d time.Duration) error {
	for deadline := time.Now().Add(d); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		n, err := client.CoreV1().Nodes().Get(context.Background(), node, metav1.GetOptions{})
		if err != nil {
			continue
		}
		for _, tn := range n.Spec.Taints {
			if tn.Key == corev1.TaintNodeOutOfService && n.Annotations[kubekit.AnnotationTaintedBy] == runID {
				return nil
			}
		}
	}
	return fmt.Errorf("node %s never got run %s's out-of-service taint within %s", node, runID, d)
}

// bringBack leaves the harness whole when the test failed before cleanup
// did: the node started and Ready, the run's marks and objects gone.
func bringBack(t *testing.T, client kubernetes.Interface, req storbench.NodeFailureRequest, runID string) {
	ctx := context.Background()
	if n, err := client.CoreV1().Nodes().Get(ctx, failNode, metav1.GetOptions{}); err == nil && !kubekit.NodeReady(*n) {
		t.Logf("the test left node %s down: starting it", failNode)
		if nf, err := storbench.NodeFailure(req); err != nil {
			t.Error(err)
		} else if err := nf.Start(ctx, failNode); err != nil {
			t.Error(err)
		}
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(time.Second) {
			if n, err := client.CoreV1().Nodes().Get(ctx, failNode, metav1.GetOptions{}); err == nil && kubekit.NodeReady(*n) {
				break
			}
		}
	}
	marks, _ := kubekit.FindNodeMarks(ctx, client, runID)
	for _, m := range marks {
		if err := kubekit.UndoNodeMark(ctx, client, m); err != nil {
			t.Error(err)
		}
	}
	if _, err := storbench.CleanupKube(ctx, storbench.KubeCleanupRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
		RunID: runID, Timeout: time.Minute}); err != nil {
		t.Error(err)
	}
}
