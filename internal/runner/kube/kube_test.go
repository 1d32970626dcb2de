package kube

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

const testRunID = "20261122-101500-abcd"

func need() runner.Need { return runner.Need{RunID: testRunID, FileSize: 8 << 20} }

func TestPrepareCreatesLabelledObjectsAndCleansUp(t *testing.T) {
	f := kubekittest.NewFake(t)
	var reports []string
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 5 * time.Second,
		Report: func(_, msg string) { reports = append(reports, msg) }})
	p, err := tg.Prepare(context.Background(), need())
	if err != nil {
		t.Fatal(err)
	}
	pod, err := f.Client.CoreV1().Pods("bench").Get(context.Background(), objectName(testRunID, 1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if pod.Labels[kubekit.LabelManagedBy] != kubekit.ManagedBy || pod.Labels[kubekit.LabelRunID] != testRunID {
		t.Errorf("pod labels = %v", pod.Labels)
	}
	if got := pod.Spec.NodeSelector["kubernetes.io/hostname"]; got != "node-a" {
		t.Errorf("pod pinned to %q, want node-a", got)
	}
	if wd := pod.Spec.Containers[0].WorkingDir; wd != WorkDir || pod.Spec.Containers[0].VolumeMounts[0].MountPath != WorkDir {
		t.Errorf("working directory %q is not the volume mount", wd)
	}
	for k, want := range map[string]string{"node": "node-a", "storage": "nvme", "storage_class": "fast",
		"provisioner": "driver.example.com", "class.numberOfReplicas": "3", "pv": "pv-" + objectName(testRunID, 1), "arch": "arm64", "mem_bytes": "8589934592"} {
		if p.Labels[k] != want {
			t.Errorf("label %s = %q, want %q", k, p.Labels[k], want)
		}
	}
	if p.File.Name != TestFileName {
		t.Errorf("fio file %q, want the relative %q", p.File.Name, TestFileName)
	}
	// fio runs in a pod on another node: its paths are not this host's;
	// that node is sampled through the pod (telemetry.go).
	if p.Local || p.Telemetry == nil {
		t.Errorf("a pod's target says Local %v, offers telemetry %v", p.Local, p.Telemetry != nil)
	}
	if f.Labelled() != 2 {
		t.Errorf("%d labelled objects, want a pod and a PVC", f.Labelled())
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := f.Labelled(); n != 0 {
		t.Errorf("%d labelled objects left after cleanup", n)
	}
	if len(reports) != 1 || !strings.Contains(reports[0], "kubectl delete pv pv-"+objectName(testRunID, 1)) {
		t.Errorf("Retain volume not reported with its command: %q", reports)
	}
	var wiped bool
	for _, c := range f.Exec.Commands() {
		if strings.Contains(strings.Join(c, " "), "rm -f "+TestFileName) {
			wiped = true
		}
	}
	if !wiped {
		t.Error("cleanup did not remove the test file through the pod")
	}
}

func TestPreparationFailuresExplainAndLeaveNothing(t *testing.T) {
	name := objectName(testRunID, 1)
	ev := func(kind, reason, msg string) runtime.Object {
		return &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + "." + reason, Namespace: "bench"},
			InvolvedObject: corev1.ObjectReference{Kind: kind, Name: name, Namespace: "bench"},
			Reason:         reason, Message: msg, Type: corev1.EventTypeWarning, Count: 3}
	}
	cases := []struct {
		name       string
		noBind     bool
		noSchedule bool
		events     []runtime.Object
		want       []string
	}{
		{
			name: "PVC never binds", noBind: true,
			events: []runtime.Object{
				ev("PersistentVolumeClaim", "ProvisioningFailed", "failed to provision volume: executable file not found: iscsiadm"),
				ev("Pod", "FailedScheduling", "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind."),
			},
			want: []string{"not bound", "ProvisioningFailed", "iscsiadm", "didn't find available persistent volumes", "x3"},
		},
		{
			name: "pod unschedulable", noSchedule: true,
			want: []string{"not scheduled", "untolerated taint"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := kubekittest.NewFake(t, tc.events...)
			f.NoBind, f.NoSchedule = tc.noBind, tc.noSchedule
			tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 600 * time.Millisecond})
			start := time.Now()
			_, err := tg.Prepare(context.Background(), need())
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %s with a 600ms timeout", took)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if n := f.Labelled(); n != 0 {
				t.Errorf("%d labelled objects left after a failed Prepare", n)
			}
		})
	}
}

func TestPodThatStopsFailsAtOnce(t *testing.T) {
	f := kubekittest.NewFake(t)
	f.MutatePod = func(pod *corev1.Pod) {
		pod.Status.Phase = corev1.PodFailed
		pod.Status.Conditions = nil
		pod.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubekit.ContainerName, State: corev1.ContainerState{
			Terminated: &corev1.ContainerStateTerminated{ExitCode: 1, Message: "storbench: this image has no fio"}}}}
	}
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: time.Minute})
	start := time.Now()
	_, err := tg.Prepare(context.Background(), need())
	if err == nil || !strings.Contains(err.Error(), "has no fio") {
		t.Fatalf("want the container's message, got %v", err)
	}
	if time.Since(start) > 10*time.Second {
		t.Error("a stopped pod was waited for until the timeout")
	}
}

func TestExecErrors(t *testing.T) {
	cases := []struct {
		name     string
		err      error
		wantCode int
	}{
		{"exit code known", utilexec.CodeExitError{Err: errors.New("command terminated with non-zero exit code"), Code: 2}, 2},
		{"transport failure", errors.New("error dialing backend: connection refused"), -1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			le := &kubekittest.LocalExec{Root: t.TempDir(), Fail: tc.err}
			c := &kubekit.PodCmder{Exec: le, Namespace: "bench", Pod: "p", Container: kubekit.ContainerName}
			err := c.Command(context.Background(), "fio", "--version").Run()
			var re *execx.RunError
			if !errors.As(err, &re) {
				t.Fatalf("want *execx.RunError, got %T %v", err, err)
			}
			if re.ExitCode != tc.wantCode || !strings.Contains(re.Error(), tc.err.Error()) {
				t.Errorf("got %v (code %d)", re, re.ExitCode)
			}
			fr := fio.Runner{Cmder: c}
			if _, err := fr.Version(context.Background()); err == nil || !strings.Contains(err.Error(), tc.err.Error()) {
				t.Errorf("fio version error hides the exec error: %v", err)
			}
		})
	}
}

func TestDeletionErrorIsReported(t *testing.T) {
	f := kubekittest.NewFake(t)
	f.Client.PrependReactor("delete", "persistentvolumeclaims", func(k8stesting.Action) (bool, runtime.Object, error) {
		return true, nil, errors.New("etcdserver: request timed out")
	})
	tg := NewTarget(f.Cluster(), "fast", "node-b", 1, TargetOptions{Timeout: time.Second})
	p, err := tg.Prepare(context.Background(), need())
	if err != nil {
		t.Fatal(err)
	}
	err = p.Cleanup(context.Background())
	if err == nil {
		t.Fatal("cleanup swallowed a deletion error")
	}
	for _, w := range []string{"pvc bench/" + objectName(testRunID, 1), "not deleted", "request timed out"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("cleanup error lacks %q: %v", w, err)
		}
	}
}

func TestCheck(t *testing.T) {
	f := kubekittest.NewFake(t)
	cases := []struct {
		name, class, node string
		opts              TargetOptions
		fileSize          int64
		want              string
	}{
		{"fits by default", "fast", "node-a", TargetOptions{}, 4 << 30, ""},
		{"too small", "fast", "node-a", TargetOptions{Size: 1 << 30}, 4 << 30, "needs a 4.0 GiB test file but a 1.0 GiB PVC holds at most 921.6 MiB"},
		{"block uses it all", "fast", "node-a", TargetOptions{Size: 1 << 30, VolumeMode: corev1.PersistentVolumeBlock}, 1 << 30, ""},
		{"no such class", "slow", "node-a", TargetOptions{}, 1 << 20, `StorageClass "slow" does not exist`},
		{"no such node", "fast", "node-z", TargetOptions{}, 1 << 20, `node "node-z" does not exist`},
		{"overrides that break the pod", "fast", "node-a", TargetOptions{PodOverrides: []byte(`{"spec":{"containers":[{"name":"other","image":"x"}]}}`)}, 1 << 20, "first container must stay"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tg := NewTarget(f.Cluster(), tc.class, tc.node, 1, tc.opts)
			err := tg.Check(context.Background(), runner.Need{RunID: testRunID, FileSize: tc.fileSize})
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected refusal: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("want %q, got %v", tc.want, err)
			}
		})
	}
	if n := f.Labelled(); n != 0 {
		t.Errorf("Check created %d objects", n)
	}
}

func TestPodOverridesMerge(t *testing.T) {
	patch := []byte(`{"spec":{"tolerations":[{"key":"node-role.kubernetes.io/control-plane","operator":"Exists","effect":"NoSchedule"}],
		"priorityClassName":"bench","containers":[{"name":"fio","resources":{"limits":{"cpu":"2"}}}]}}`)
	tg := NewTarget(nil, "fast", "node-a", 3, TargetOptions{PodOverrides: patch})
	pod, err := tg.podSpec("n", "ns", testRunID, map[string]string{"kubernetes.io/hostname": "node-a"})
	if err != nil {
		t.Fatal(err)
	}
	if len(pod.Spec.Tolerations) != 1 || pod.Spec.PriorityClassName != "bench" {
		t.Errorf("overrides not applied: %+v", pod.Spec)
	}
	c := pod.Spec.Containers[0]
	if c.Resources.Limits.Cpu().String() != "2" || c.Image != kubekit.DefaultImage || c.WorkingDir != WorkDir {
		t.Errorf("container not merged by name: %+v", c)
	}
	if pod.Labels[kubekit.LabelManagedBy] != kubekit.ManagedBy {
		t.Error("managed-by label lost")
	}
	if tol := kubekit.OverrideTolerations(patch); len(tol) != 1 {
		t.Errorf("tolerations read from the patch: %v", tol)
	}
}

func TestResolveNodes(t *testing.T) {
	tainted := kubekittest.Node("cp", map[string]string{"node-role.kubernetes.io/control-plane": "true"})
	tainted.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	notReady := kubekittest.Node("down", nil)
	notReady.Status.Conditions[0].Status = corev1.ConditionFalse
	fake := kubekittest.Node("kwok-node-1", nil) // Ready, untainted: kwok's fake node runs no container
	fake.Annotations = map[string]string{"kwok.x-k8s.io/node": "fake"}
	cordoned := kubekittest.Node("drained", nil)
	cordoned.Spec.Unschedulable = true
	f := kubekittest.NewFake(t, tainted, notReady, fake, cordoned)
	cases := []struct {
		name        string
		ch          kubekit.NodeChoice
		want        string
		wantSkipped int
		wantErr     string
	}{
		{"all", kubekit.NodeChoice{Names: []string{"all"}}, "node-a,node-b", 4, ""},
		{"selector", kubekit.NodeChoice{Selector: "storage=sd"}, "node-b", 0, ""},
		{"named tainted node is kept", kubekit.NodeChoice{Names: []string{"cp", "node-a"}}, "cp,node-a", 0, ""},
		{"tolerated taint", kubekit.NodeChoice{Tolerations: []corev1.Toleration{{Key: "node-role.kubernetes.io/control-plane", Operator: corev1.TolerationOpExists}}}, "cp,node-a,node-b", 3, ""},
		{"missing node", kubekit.NodeChoice{Names: []string{"nope"}}, "", 0, `node "nope" does not exist`},
		{"nothing matches", kubekit.NodeChoice{Selector: "storage=tape"}, "", 0, "no usable node matches"},
		{"bad selector", kubekit.NodeChoice{Selector: "a=b=c"}, "", 0, "NodeChoice.Selector"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			nodes, skipped, err := kubekit.ResolveNodes(context.Background(), f.Client, tc.ch)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("want error %q, got %v", tc.wantErr, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(nodes, ","); got != tc.want || len(skipped) != tc.wantSkipped {
				t.Errorf("nodes %s skipped %v; want %s and %d skipped", got, skipped, tc.want, tc.wantSkipped)
			}
		})
	}
	// Each skipped node is named with why, for the plan printed before the run.
	_, skipped, err := kubekit.ResolveNodes(context.Background(), f.Client, kubekit.NodeChoice{Names: []string{"all"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"cp: control-plane node, taint", "down: not Ready", "kwok-node-1: a kwok fake node", "drained: cordoned"} {
		if !strings.Contains(strings.Join(skipped, "\n"), want) {
			t.Errorf("skipped %q lacks %q", skipped, want)
		}
	}
}

// TestPodCmderConformance runs the runner conformance suite through the pod
// wrapper with an exec transport that, like kwok's, leaves a cancelled
// process running: the stop exec must end it.
func TestPodCmderConformance(t *testing.T) {
	testenv.Fio(t)
	runnertest.Conformance(t, func(t *testing.T) runnertest.Env {
		le := &kubekittest.LocalExec{Root: t.TempDir()}
		t.Cleanup(func() {
			deadline := time.Now().Add(10 * time.Second)
			for le.Alive() > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if n := le.Alive(); n > 0 {
				t.Errorf("%d commands still run after their context was cancelled", n)
			}
		})
		return runnertest.Env{Cmder: &kubekit.PodCmder{Exec: le, Namespace: "ns", Pod: "pod", Container: kubekit.ContainerName}, ExitCodeKnown: true}
	})
}

func TestSetDirAndEnv(t *testing.T) {
	le := &kubekittest.LocalExec{Root: t.TempDir()}
	c := &kubekit.PodCmder{Exec: le, Namespace: "ns", Pod: "pod", Container: kubekit.ContainerName}
	out, err := execx.Output(c.Command(context.Background(), "sh", "-c", "mkdir -p sub && echo ok").SetDir(""))
	if err != nil || strings.TrimSpace(string(out)) != "ok" {
		t.Fatal(out, err)
	}
	out, err = execx.Output(c.Command(context.Background(), "sh", "-c", `echo "$PWD $GREETING"`).SetDir("sub").SetEnv("GREETING=hi"))
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != filepath.Join(le.Root, "ns", "pod", "sub")+" hi" {
		t.Errorf("got %q", got)
	}
}

// TestInterruptDeletesEverything cancels a parallel run mid-workload: fio
// is stopped in every pod and no labelled object remains.
func TestInterruptDeletesEverything(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	f := kubekittest.NewFake(t)
	c := f.Cluster()
	var targets []runner.Target
	for i, n := range []string{"node-a", "node-b"} {
		targets = append(targets, NewTarget(c, "fast", n, i+1, TargetOptions{Timeout: 5 * time.Second}))
	}
	s, err := spec.Parse([]byte(`
name: long
workloads:
  - {name: w, rw: randwrite, bs: 4KiB, size: 4MiB, runtime: 30s, ioengine: psync}
`), "long")
	if err != nil {
		t.Fatal(err)
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx, cancel := context.WithCancel(context.Background())
	obs := &cancelOnStart{cancel: cancel, want: len(targets)}
	start := time.Now()
	run, err := (&engine.Engine{Store: st, Observer: obs}).Run(ctx, engine.Plan{
		Suite: s, Targets: targets, Rounds: []string{result.RoundParallel}, CleanupTimeout: 20 * time.Second})
	if !errors.Is(err, engine.ErrInterrupted) {
		t.Fatalf("want ErrInterrupted, got %v", err)
	}
	if took := time.Since(start); took > 25*time.Second {
		t.Errorf("interrupt took %s", took)
	}
	if run.Status != result.StatusInterrupted {
		t.Errorf("run status %s", run.Status)
	}
	if n := f.Labelled(); n != 0 {
		t.Errorf("%d labelled objects left", n)
	}
	deadline := time.Now().Add(5 * time.Second)
	for f.Exec.Alive() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	if n := f.Exec.Alive(); n != 0 {
		t.Errorf("%d fio processes outlived the interrupt", n)
	}
	var stops int
	for _, c := range f.Exec.Commands() {
		if len(c) > 3 && c[3] == "storbench-stop" {
			stops++
		}
	}
	if stops < len(targets) {
		t.Errorf("%d stop execs, want one per target", stops)
	}
}

// cancelOnStart cancels the run once every target has started a workload
// and fio has had a moment to begin.
type cancelOnStart struct {
	mu      sync.Mutex
	started int
	want    int
	cancel  context.CancelFunc
}

func (o *cancelOnStart) RunStarted(*result.Run) {}
func (o *cancelOnStart) Notice(string, string)  {}
func (o *cancelOnStart) WorkloadStarted(engine.Step) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.started++
	if o.started == o.want {
		time.AfterFunc(1500*time.Millisecond, o.cancel)
	}
}
func (o *cancelOnStart) WorkloadProgress(engine.Step, result.Progress) {}
func (o *cancelOnStart) WorkloadFinished(engine.Step, *result.Result)  {}

func TestFitSize(t *testing.T) {
	for _, tc := range []struct{ file, want int64 }{{1 << 20, 1 << 30}, {1 << 30, 2 << 30}, {4 << 30, 6 << 30}} {
		if got := FitSize(tc.file); got != tc.want {
			t.Errorf("FitSize(%d) = %d, want %d", tc.file, got, tc.want)
		}
	}
}

func TestNodeMemory(t *testing.T) {
	big := kubekittest.Node("big", nil)
	big.Status.Capacity[corev1.ResourceMemory] = *resource.NewQuantity(32<<30, resource.BinarySI)
	blind := kubekittest.Node("blind", nil)
	blind.Status.Capacity = nil
	f := kubekittest.NewFake(t, big, blind)
	for _, tc := range []struct {
		nodes []string
		want  int64
		known bool
	}{
		{[]string{"node-a", "node-b"}, 8 << 30, true},
		{[]string{"node-a", "big"}, 32 << 30, true},
		{[]string{"blind"}, 0, false},
		{[]string{"blind", "node-b"}, 8 << 30, true},
		{[]string{"gone"}, 0, false},
	} {
		got, known, err := kubekit.NodeMemory(context.Background(), f.Client, tc.nodes)
		if err != nil || got != tc.want || known != tc.known {
			t.Errorf("%v: %d %v %v, want %d %v", tc.nodes, got, known, err, tc.want, tc.known)
		}
	}
}

// A claim its provisioner fails, and an image its node cannot pull, end
// the wait at once (not after the timeout), with the provisioner's words
// or the ways to get the image, and leave nothing.
func TestHopelessWaitsEndAtOnce(t *testing.T) {
	name := objectName(testRunID, 1)
	failedEvent := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: name + ".pf", Namespace: "bench"},
		InvolvedObject: corev1.ObjectReference{Kind: "PersistentVolumeClaim", Name: name, Namespace: "bench"},
		Reason:         "ProvisioningFailed", Message: "rpc error: code = ResourceExhausted desc = no space left on pool", Type: corev1.EventTypeWarning}
	cases := []struct {
		name   string
		events []runtime.Object
		noBind bool
		mutate func(*corev1.Pod)
		want   []string
	}{
		{name: "provisioner failed", noBind: true, events: []runtime.Object{failedEvent},
			want: []string{"not bound: its provisioner failed", "no space left on pool"}},
		{name: "image not pullable", mutate: func(p *corev1.Pod) {
			p.Status.Phase, p.Status.Conditions = corev1.PodPending, nil
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: kubekit.ContainerName, Image: p.Spec.Containers[0].Image, State: corev1.ContainerState{
				Waiting: &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: `Back-off pulling image "ghcr.io/storbench/storbench-fio:v0"`}}}}
		}, want: []string{"cannot be had on node node-a", "ImagePullBackOff", "k3s ctr images import", "--image alpine"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := kubekittest.NewFake(t, tc.events...)
			f.NoBind, f.MutatePod = tc.noBind, tc.mutate
			tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: time.Minute})
			start := time.Now()
			_, err := tg.Prepare(context.Background(), need())
			if err == nil {
				t.Fatal("Prepare succeeded")
			}
			if took := time.Since(start); took > 10*time.Second {
				t.Errorf("took %s: waited for the timeout", took)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q: %v", w, err)
				}
			}
			if n := f.Labelled(); n != 0 {
				t.Errorf("%d labelled objects left", n)
			}
		})
	}
}

// TestPrepareTouchesTheClaimOfAPodTheSchedulerMissed: the claim binds, but
// the pod stays set aside for an unbound claim, in kube-scheduler's words,
// until the claim changes; Prepare touches the claim after the grace, says
// so, and the pod then lands and runs.
func TestPrepareTouchesTheClaimOfAPodTheSchedulerMissed(t *testing.T) {
	saved := schedulerNudge
	schedulerNudge = kubekit.BindingNudge{Grace: 300 * time.Millisecond, Every: 300 * time.Millisecond}
	t.Cleanup(func() { schedulerNudge = saved })
	f := kubekittest.NewFake(t)
	f.MutatePod = func(pod *corev1.Pod) {
		pod.Spec.NodeName, pod.Status.Phase = "", corev1.PodPending
		pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: corev1.PodReasonUnschedulable,
			Message: "0/2 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling."}}
	}
	var touches int
	f.Client.PrependReactor("patch", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		touches++
		pod, err := f.Client.Tracker().Get(corev1.SchemeGroupVersion.WithResource("pods"), "bench", objectName(testRunID, 1))
		if err != nil {
			return true, nil, err
		}
		p := pod.(*corev1.Pod).DeepCopy()
		p.Spec.NodeName, p.Status.Phase = "node-a", corev1.PodRunning
		p.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		return false, nil, f.Client.Tracker().Update(corev1.SchemeGroupVersion.WithResource("pods"), p, "bench")
	})
	var reports []string
	var mu sync.Mutex
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 10 * time.Second,
		Report: func(_, msg string) { mu.Lock(); reports = append(reports, msg); mu.Unlock() }})
	p, err := tg.Prepare(context.Background(), need())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Cleanup(context.Background())
	pvc, err := f.Client.CoreV1().PersistentVolumeClaims("bench").Get(context.Background(), objectName(testRunID, 1), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if touches != 1 || pvc.Annotations[kubekit.AnnotationRequeued] == "" {
		t.Errorf("%d touches, claim annotations %v; want one touch", touches, pvc.Annotations)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(reports) != 1 || !strings.Contains(reports[0], "still sets pod "+objectName(testRunID, 1)+" aside") {
		t.Errorf("reports %q, want one on the touch", reports)
	}
}
