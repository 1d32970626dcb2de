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
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/storbench"
)

// killHelperEnv, when set to a run ID, makes the test binary a storbench
// qualification to be killed: it runs the snapshot and failover checks on
// testcsi-shared, printing its progress, until its parent SIGKILLs it.
const killHelperEnv = "STORBENCH_CLASSCHECK_KILL_HELPER"

func TestMain(m *testing.M) {
	if runID := os.Getenv(killHelperEnv); runID != "" {
		c, err := kube.Connect(kube.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")})
		if err == nil {
			_, err = classcheck.Qualify(context.Background(), c, classcheck.Options{Class: "testcsi-shared", Image: realImage,
				PullPolicy: corev1.PullNever, Timeout: time.Minute, RunID: runID,
				Only:     []string{classcheck.CheckSnapshot, classcheck.CheckFailover},
				Progress: func(m string) { fmt.Println(m) }})
		}
		fmt.Println("helper ended:", err)
		os.Exit(3)
	}
	os.Exit(m.Run())
}

// A qualification SIGKILLed during the graceful failover check leaves its
// cordon (marked with its run ID), its snapshot, claims and pods; the next
// run names the cordon and the snapshot before it starts, and cleanup
// --k8s lists and removes them all. Cost on the harness: about 50 s.
func TestKilledRunLeavesWhatCleanupUndoes(t *testing.T) {
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
	var marks []kube.NodeMark
	for deadline := time.Now().Add(time.Minute); len(marks) == 0 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if marks, err = kube.FindNodeMarks(context.Background(), client, runID); err != nil {
			t.Fatal(err)
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if len(marks) != 1 || marks[0].What != kube.MarkCordon {
		t.Fatalf("marks of the killed run: %v", marks)
	}
	t.Cleanup(func() { kube.UndoNodeMark(context.Background(), client, marks[0]) }) // when the test fails before cleanup
	snaps, err := kube.FindSnapshots(context.Background(), client, "", runID)
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

	rep, err := storbench.CleanupKube(context.Background(), storbench.KubeCleanupRequest{Cluster: kube.ConnectOptions{Kubeconfig: os.Getenv("KUBECONFIG")},
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
	if err != nil || n.Spec.Unschedulable || n.Annotations[kube.AnnotationCordonedBy] != "" {
		t.Errorf("node %s after cleanup: unschedulable %v, annotations %v (%v)", marks[0].Node, n.Spec.Unschedulable, n.Annotations, err)
	}
	nothingLeft(t, client, runID)
	if left, _ := kube.FindSnapshots(context.Background(), client, "", runID); len(left) > 0 {
		t.Errorf("snapshots left: %v", left)
	}
	t.Logf("killed run and its cleanup: %s", time.Since(start).Round(time.Second))
}

// Two measurements of one class at once both complete, and neither's
// cleanup touches the other's objects: each finds its own by its labels
// and the names it created. Cost on the harness: about 30 s.
func TestTwoRunsOnOneClass(t *testing.T) {
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
func TestSnapshotClassNeverABackup(t *testing.T) {
	_, client := connect(t)
	needClass(t, client, "testcsi-shared")
	classes, err := kube.SnapshotClasses(context.Background(), client)
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
		"metadata": map[string]any{"name": backup, "annotations": map[string]string{kube.AnnotationDefaultSnapshotClass: "true"}},
		"driver":   sc.Provisioner, "deletionPolicy": "Delete", "parameters": map[string]string{"type": "bak"}})
	rc := client.Discovery().RESTClient()
	if err := rc.Post().AbsPath(kube.SnapshotAPI, "volumesnapshotclasses").SetHeader("Content-Type", "application/json").Body(body).Do(context.Background()).Error(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := rc.Delete().AbsPath(kube.SnapshotAPI, "volumesnapshotclasses", backup).Do(context.Background()).Error(); err != nil {
			t.Error(err)
		}
	})
	rep := qualify(t, "testcsi-shared", classcheck.Options{Only: []string{classcheck.CheckSnapshot}})
	ch := rep.Check(classcheck.CheckSnapshot)
	if ch == nil || ch.Outcome != classcheck.Works || !strings.Contains(ch.Reason, "VolumeSnapshotClass "+usual) || !strings.Contains(ch.Reason, "not "+backup) {
		t.Errorf("snapshot beside a backup class: %+v", ch)
	}
}
