package classcheck_test

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/test/kubetest"
)

// appFitCase is one class measured by the app-fit check alone (the quick
// profile: the semantics, and SQLite's WAL/FULL from one client for 1 s;
// SQLite's own behaviour is the host tier's, internal/appfit), and what
// its answers must show.
type appFitCase struct {
	name, class string
	// interruptAt, when set, cancels the run (as Ctrl-C does) once its
	// progress says this: what the check made must be gone all the same.
	interruptAt string
	want        func(t *testing.T, ch *classcheck.Check, got map[string]result.Result)
}

// appFitRun is one case's qualification.
type appFitRun struct {
	runID string
	rep   *classcheck.Report
	err   error
	took  time.Duration
}

var appFitCases = []appFitCase{
	{
		// testcsi-netfs: every node mounts the netfs export itself (two
		// sshfs mounts of one export): the files are shared, the locks not.
		name: "netfs-two-mounts", class: "testcsi-netfs",
		want: func(t *testing.T, ch *classcheck.Check, got map[string]result.Result) {
			wantSemantic(t, got, "appfit:fcntl-lock", "broken", "both clients held the same write lock", "one client on ")
			wantSemantic(t, got, "appfit:flock", "broken", "both clients held the same write lock", "one client on ")
			if !strings.Contains(ch.Reason, "file locks are not shared between nodes") {
				t.Errorf("app-fit: %s %q", ch.Outcome, ch.Reason)
			}
		},
	},
	{
		// netfs: the harness's class over ONE node's sshfs mount, used by
		// the pods of every node: one FUSE filesystem, so one lock table.
		name: "netfs-one-mount", class: "netfs",
		want: func(t *testing.T, ch *classcheck.Check, got map[string]result.Result) {
			wantSemantic(t, got, "appfit:fcntl-lock", "works", "", "one client on ")
			wantSemantic(t, got, "appfit:flock", "works", "", "one client on ")
			if strings.Contains(ch.Reason, "locks are not shared") {
				t.Errorf("app-fit: %s %q", ch.Outcome, ch.Reason)
			}
		},
	},
	{
		// local-path is ReadWriteOnce: two processes in one pod.
		name: "local-path", class: "local-path",
		want: func(t *testing.T, ch *classcheck.Check, got map[string]result.Result) {
			wantSemantic(t, got, "appfit:fcntl-lock", "works", "", "two processes on ")
			wantSemantic(t, got, "appfit:fsync-read-back", "works", "", "two processes on ")
			// Its outcome also weighs SQLite's speed, which a loaded CI
			// machine may slow: the semantics decide here.
			if !strings.Contains(ch.Reason, "locks work") || strings.Contains(ch.Reason, "fsync reaches the disk:") {
				t.Errorf("app-fit: %s %q", ch.Outcome, ch.Reason)
			}
			if _, ok := got["sqlite:wal-full"]; !ok {
				t.Error("no SQLite WAL/FULL result")
			}
		},
	},
	{
		// The test driver's no-fsync mode publishes its volume through an
		// overlay mounted volatile: fsync returns without writing.
		name: "testcsi-no-fsync", class: "testcsi-no-fsync",
		want: func(t *testing.T, ch *classcheck.Check, got map[string]result.Result) {
			wantSemantic(t, got, "appfit:fsync-read-back", "broken", "", "")
			if ch.Outcome != classcheck.Failed {
				t.Errorf("app-fit: %s %q", ch.Outcome, ch.Reason)
			}
		},
	},
	{
		// Ctrl-C while the two nodes' clients probe: the pods, the claim,
		// its PV and each node's mount are gone all the same.
		name: "interrupted", class: "testcsi-netfs", interruptAt: "probing the filesystem",
		want: func(t *testing.T, ch *classcheck.Check, _ map[string]result.Result) {
			if ch.Outcome != classcheck.Skipped || ch.Reason != "interrupted" {
				t.Errorf("app-fit after Ctrl-C: %s %q", ch.Outcome, ch.Reason)
			}
		},
	},
}

// Every case at once (each class its own claims and pods, on the three
// real nodes): the app-fit answers of each class, and nothing of any run
// left afterwards, whether it passed, failed or was interrupted.
// The test shares the cluster: it cordons nothing, asserts no rate, and
// checks only its own runs' objects and mounts.
func TestClusterAppFit(t *testing.T) {
	kubetest.Shared(t)
	c, client := connect(t)
	env := kubetest.Env(t)
	fakeNodes(t, client)
	bin := appBinary(t)
	runs := make([]appFitRun, len(appFitCases))
	volumes := watchVolumes(t, client)
	start := time.Now()
	var wg sync.WaitGroup
	for i, tc := range appFitCases {
		if _, err := client.StorageV1().StorageClasses().Get(context.Background(), tc.class, metav1.GetOptions{}); err != nil {
			continue // the case's subtest skips
		}
		runs[i].runID = fmt.Sprintf("af%d%06x", i, time.Now().UnixNano()&0xffffff)
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			t0 := time.Now()
			o := classcheck.Options{Class: tc.class, Image: realImage, PullPolicy: corev1.PullNever, Timeout: 90 * time.Second,
				RunID: runs[i].runID, Only: []string{classcheck.CheckAppFit}, AppBinary: bin,
				Progress: func(m string) {
					t.Logf("%s %s: %s", tc.name, time.Since(t0).Round(100*time.Millisecond), m)
					if tc.interruptAt != "" && strings.Contains(m, tc.interruptAt) {
						go func() { time.Sleep(time.Second); cancel() }()
					}
				}}
			runs[i].rep, runs[i].err = classcheck.Qualify(ctx, c, o)
			runs[i].took = time.Since(t0)
		}()
	}
	wg.Wait()
	t.Logf("all app-fit cases: %s wall", time.Since(start).Round(time.Second))
	claims := volumes()
	for i, tc := range appFitCases {
		t.Run(tc.name, func(t *testing.T) {
			needClass(t, client, tc.class)
			run := runs[i]
			if run.err != nil {
				t.Fatal(run.err)
			}
			t.Logf("%s wall", run.took.Round(time.Second))
			nothingLeft(t, client, run.runID)
			noSnapshotsLeft(t, client, run.runID)
			if ch := run.rep.Check(classcheck.CheckCleanup); ch == nil || ch.Outcome != classcheck.Works || len(run.rep.Leaks) > 0 {
				t.Errorf("cleanup %+v, leaks %v", ch, run.rep.Leaks)
			}
			ch := run.rep.Check(classcheck.CheckAppFit)
			if ch == nil {
				t.Fatal("no app-fit check")
			}
			t.Logf("%s: %s", ch.Outcome, ch.Reason)
			got := map[string]result.Result{}
			for _, r := range run.rep.Results() {
				if r.Round == result.RoundApp {
					got[r.Workload] = r
					t.Logf("%s: %s %s %s", r.Workload, result.LabelCheckOutcome.Of(r.Labels), result.LabelCheckReason.Of(r.Labels), result.LabelAppClients.Of(r.Labels))
				}
			}
			tc.want(t, ch, got)
		})
	}
	// No node still holds a mount of the runs' testcsi-netfs volumes.
	ours := map[string]bool{}
	for _, run := range runs {
		n := 0
		for pv, claim := range claims {
			if run.runID != "" && strings.HasPrefix(claim, "sbq-"+strings.ToLower(run.runID)+"-") {
				ours[pv] = true
				n++
			}
		}
		if run.runID != "" && n == 0 {
			t.Errorf("run %s: no volume of its claims seen, so none of its mounts checked", run.runID)
		}
	}
	for _, m := range sshfsMountsUnder(t, env, ours) {
		t.Errorf("left mounted: %s", m)
	}
}

// watchVolumes watches PVs from now on and, when called, stops and gives
// every PV seen with its claim's name: the runs' volumes, which live
// only while the runs do. The test driver's netfs mounts are named by
// their PV (test/testcsi: the volume's ID is the PV's name).
func watchVolumes(t *testing.T, client kubernetes.Interface) (stop func() map[string]string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := client.CoreV1().PersistentVolumes().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	seen := map[string]string{}
	ended := make(chan bool)
	go func() {
		for ev := range w.ResultChan() {
			if pv, ok := ev.Object.(*corev1.PersistentVolume); ok && pv.Spec.ClaimRef != nil {
				seen[pv.Name] = pv.Spec.ClaimRef.Name
			}
		}
		ended <- ctx.Err() == nil
	}()
	return func() map[string]string {
		cancel()
		w.Stop()
		if <-ended {
			t.Error("the PVs' watch ended before the runs did: the runs' volumes may be missing from the mounts' check")
		}
		return seen
	}
}

// wantSemantic checks one semantic's answer: its outcome, what was seen
// (when want is set) and the clients' description's start.
func wantSemantic(t *testing.T, got map[string]result.Result, workload, outcome, seen, clients string) {
	t.Helper()
	r, ok := got[workload]
	if !ok {
		t.Errorf("no %s answer", workload)
		return
	}
	if result.LabelCheckOutcome.Of(r.Labels) != outcome || !strings.Contains(result.LabelCheckReason.Of(r.Labels), seen) ||
		!strings.HasPrefix(result.LabelAppClients.Of(r.Labels), clients) {
		t.Errorf("%s: want %s (%q, clients %q...), got %v", workload, outcome, seen, clients, r.Labels)
	}
}

// appBinary builds the storbench the check copies into its pods, stripped
// (about 60 MB instead of 88: each pod gets its own copy through the API
// server).
func appBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "storbench")
	if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "github.com/storbench/storbench/cmd/storbench").CombinedOutput(); err != nil {
		t.Fatalf("go build storbench: %v\n%s", err, out)
	}
	return bin
}

// sshfsMountsUnder lists the sshfs mounts under any real node's kubelet
// root of the volumes named (by PV): what the test driver's netfs mode
// mounts per node, host:SHARE/PV (the harness's own netfs mounts live
// elsewhere; another test's volumes are not the test's to judge).
func sshfsMountsUnder(t *testing.T, env kubetest.ClusterEnv, volumes map[string]bool) []string {
	t.Helper()
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		_, after, ok := strings.Cut(sc.Text(), " - ")
		if !ok || len(fields) < 5 || !strings.HasPrefix(after, "fuse.sshfs ") {
			continue
		}
		if src := strings.Fields(after); len(src) < 2 || !volumes[path.Base(src[1])] {
			continue
		}
		for _, n := range env.Nodes() {
			if root := env.Node(n, "KUBELET_ROOT"); root != "" && strings.HasPrefix(fields[4], root+"/") {
				out = append(out, fields[4]+" ("+after+")")
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}
