package kube_test

// Integration tests against the project's test cluster (test/cluster/cluster.sh:
// a control plane on 127.0.0.1, kwok fake nodes, and real nodes, of which
// these use the host's own, kreal-node). scripts/k8s-integration.sh brings
// it up and runs these with STORBENCH_K8S_INTEGRATION=1 and KUBECONFIG set.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	"sigs.k8s.io/yaml"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/kubetest"
)

const (
	realNode  = "kreal-node"
	realImage = "localhost/kreal/fio:3.33"
)

// tinySuite runs in about two seconds per target.
const tinySuite = `name: tiny
workloads:
  - {name: randread, rw: randread, bs: 4KiB, size: 8MiB, runtime: 1s, ioengine: psync}
  - {name: seqwrite, rw: write, bs: 1MiB, size: 8MiB, runtime: 1s, ioengine: psync}
`

type env struct {
	kubeconfig string
	client     kubernetes.Interface
}

func integration(t *testing.T) *env {
	t.Helper()
	client, kc := kubetest.Cluster(t)
	return &env{kubeconfig: kc, client: client}
}

func unique(prefix string) string {
	return fmt.Sprintf("%s-%x", prefix, time.Now().UnixNano()&0xffffff)
}

// class creates a no-provisioner StorageClass, removed at the end.
func (e *env) class(t *testing.T, name string) {
	t.Helper()
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	_, err := e.client.StorageV1().StorageClasses().Create(context.Background(), &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: kubekit.NoProvisioner, VolumeBindingMode: &wffc,
		Parameters: nil}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.client.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting StorageClass %s: %v", name, err)
		}
	})
}

// pv creates a static PV, removed at the end.
func (e *env) pv(t *testing.T, pv *corev1.PersistentVolume) {
	t.Helper()
	if _, err := e.client.CoreV1().PersistentVolumes().Create(context.Background(), pv, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.client.CoreV1().PersistentVolumes().Delete(context.Background(), pv.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			t.Errorf("deleting PV %s: %v", pv.Name, err)
		}
	})
}

// fakePVs gives a class n PVs that kwok nodes can use (never mounted).
func (e *env) fakePVs(t *testing.T, class string, n int) {
	for i := 1; i <= n; i++ {
		e.pv(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", class, i)},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:         corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
				AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName: class,
				PersistentVolumeSource: corev1.PersistentVolumeSource{
					HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/" + class}},
			}})
	}
}

// realPV gives a class a local PV on the real node: a directory, or with
// block set, a device.
func (e *env) realPV(t *testing.T, class, path, size string, block bool) {
	mode := corev1.PersistentVolumeFilesystem
	if block {
		mode = corev1.PersistentVolumeBlock
	}
	e.pv(t, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: class + "-pv"},
		Spec: corev1.PersistentVolumeSpec{
			Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(size)},
			AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			StorageClassName:              class,
			VolumeMode:                    &mode,
			PersistentVolumeReclaimPolicy: corev1.PersistentVolumeReclaimRetain,
			PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: path}},
			NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
				MatchExpressions: []corev1.NodeSelectorRequirement{{Key: "kubernetes.io/hostname", Operator: corev1.NodeSelectorOpIn, Values: []string{realNode}}},
			}}}},
		}})
}

var (
	nodesOnce sync.Once
	nodesErr  error
)

// kwokNodes are three fake nodes: two labelled storage=nvme, one storage=sd.
var kwokNodes = map[string]string{"sb-it-node-1": "nvme", "sb-it-node-2": "nvme", "sb-it-node-3": "sd"}

func (e *env) fakeNodes(t *testing.T) {
	t.Helper()
	nodesOnce.Do(func() {
		ctx := context.Background()
		for name, storage := range kwokNodes {
			n := &corev1.Node{
				ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
					Labels: map[string]string{"kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "arm64", "storage": storage}},
				Status: corev1.NodeStatus{
					Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
					Capacity:    corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")},
				},
			}
			if _, err := e.client.CoreV1().Nodes().Create(ctx, n, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
				nodesErr = err
				return
			}
		}
		deadline := time.Now().Add(60 * time.Second)
		for name := range kwokNodes {
			for {
				n, err := e.client.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
				if err == nil && kubekit.NodeReady(*n) {
					break
				}
				if time.Now().After(deadline) {
					nodesErr = fmt.Errorf("node %s not Ready within 60s", name)
					return
				}
				time.Sleep(200 * time.Millisecond)
			}
		}
	})
	if nodesErr != nil {
		t.Fatal(nodesErr)
	}
}

// labelled counts the pods and PVCs storbench left anywhere: a check for a
// test that holds the cluster alone (kubetest.Shared: a shared one sees
// the other package's test's objects; it uses labelledOf).
func (e *env) labelled(t *testing.T) []result.KubeObject {
	t.Helper()
	objs, err := kubekit.FindLeftovers(context.Background(), e.client, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return objs
}

// labelledOf counts the pods and PVCs storbench left of targets on the
// classes, which the test made (unique) and no other test uses: its own
// runs' leftovers, whatever runs beside it, even for a run whose ID the
// test never learns (killed, refused). An object that names no target is
// counted too: every pod and claim storbench makes names its target.
func (e *env) labelledOf(t *testing.T, classes ...string) []result.KubeObject {
	t.Helper()
	var mine []result.KubeObject
	for _, o := range e.labelled(t) {
		for _, c := range classes {
			if o.Target == "" || strings.HasPrefix(o.Target, kube.TargetName(c, "")) {
				mine = append(mine, o)
				break
			}
		}
	}
	return mine
}

type cliRun struct {
	code        int
	out, errOut string
}

func storbench(ctx context.Context, t *testing.T, args ...string) cliRun {
	t.Helper()
	var out, errOut bytes.Buffer
	code := app.Run(ctx, cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errOut}, args, os.Getenv)
	return cliRun{code: code, out: out.String(), errOut: errOut.String()}
}

func suiteFile(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "suite.yaml")
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

type runJSON struct {
	Run     result.Run      `json:"run"`
	Results []result.Result `json:"results"`
}

func parseRun(t *testing.T, r cliRun) runJSON {
	t.Helper()
	var out runJSON
	if err := json.Unmarshal([]byte(r.out), &out); err != nil {
		t.Fatalf("run output is not JSON (%v): %s\nstderr: %s", err, r.out, r.errOut)
	}
	return out
}

func TestClusterKwokConformance(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-conf")
	e.class(t, class)
	e.fakePVs(t, class, 1)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	p := prepare(t, kube.NewTarget(c, class, "kwok-node-0", 1, kube.TargetOptions{Timeout: time.Minute}))
	runnertest.Conformance(t, func(t *testing.T) runnertest.Env {
		// kwok's exec loses exit codes (they show only in the error text).
		return runnertest.Env{Cmder: p.Cmder, ExitCodeKnown: false}
	})
}

func TestClusterRealNodeConformance(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-realconf")
	e.class(t, class)
	e.realPV(t, class, t.TempDir(), "1Gi", false)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	p := prepare(t, kube.NewTarget(c, class, realNode, 1, kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}))
	runnertest.Conformance(t, func(t *testing.T) runnertest.Env {
		return runnertest.Env{Cmder: p.Cmder, ExitCodeKnown: true}
	})

	// A cancelled command is stopped inside the container, not only cut off.
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	err = p.Cmder.Command(ctx, "fio", "--name=long", "--filename=stop.dat", "--size=16M", "--rw=randwrite", "--time_based", "--runtime=60").Run()
	if err == nil {
		t.Fatal("a cancelled fio reported success")
	}
	out, err := execx.Output(p.Cmder.Command(context.Background(), "sh", "-c", "cat /proc/[0-9]*/comm 2>/dev/null; rm -f stop.dat"))
	if err != nil {
		t.Fatal(err)
	}
	for _, comm := range strings.Fields(string(out)) {
		if strings.HasPrefix(comm, "fio") {
			t.Errorf("fio still runs in the container after its context was cancelled: %s", out)
		}
	}
}

func prepare(t *testing.T, tg *kube.Target) *runner.Prepared {
	t.Helper()
	need := runner.Need{RunID: strings.ToLower(unique("it")), FileSize: 16 << 20}
	if err := tg.Check(context.Background(), need); err != nil {
		t.Fatal(err)
	}
	p, err := tg.Prepare(context.Background(), need)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Cleanup(context.Background()); err != nil {
			t.Errorf("cleanup: %v", err)
		}
	})
	return p
}

func TestClusterRealNodeEndToEnd(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-real")
	dir := t.TempDir()
	e.class(t, class)
	e.realPV(t, class, dir, "1Gi", false)
	db := filepath.Join(t.TempDir(), "r.db")
	r := storbench(context.Background(), t, "run", "--db", db, "--suite", suiteFile(t, tinySuite), "--target", "k8s:"+class,
		"--nodes", realNode, "--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	out := parseRun(t, r)
	if len(out.Results) != 2 {
		t.Fatalf("%d results, want 2", len(out.Results))
	}
	for _, res := range out.Results {
		if res.Status != result.StatusComplete || len(res.Directions()) == 0 {
			t.Errorf("result %s: %s %s", res.Workload, res.Status, res.Error)
		}
		for k, want := range map[string]string{"node": realNode, "storage_class": class, "provisioner": kubekit.NoProvisioner,
			"pv": class + "-pv", "volume_node": realNode, "fio_version": "fio-3.33", "target_kind": "kubernetes"} {
			if res.Labels[k] != want {
				t.Errorf("%s: label %s = %q, want %q", res.Workload, k, res.Labels[k], want)
			}
		}
	}
	if left := e.labelledOf(t, class); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left on the volume: %v", entries)
	}
	if !strings.Contains(r.errOut, "kubectl delete pv "+class+"-pv") {
		t.Errorf("the Retained PV is not reported with its command; stderr: %s", r.errOut)
	}
}

func TestClusterRealNodeBlock(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	testenv.Loop(t)
	img := filepath.Join(t.TempDir(), "block.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 256<<20); err != nil {
		t.Fatal(err)
	}
	dev := testenv.AttachLoop(t, img)
	class := unique("sb-block")
	e.class(t, class)
	e.realPV(t, class, dev, "256Mi", true)
	r := storbench(context.Background(), t, "run", "--db", filepath.Join(t.TempDir(), "r.db"), "--suite", suiteFile(t, tinySuite),
		"--target", "k8s:"+class, "--nodes", realNode, "--volume-mode", "Block", "--size", "256Mi",
		"--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	res := parseRun(t, r).Results
	if len(res) != 2 {
		t.Fatalf("%d results, want 2", len(res))
	}
	for _, x := range res {
		if x.Status != result.StatusComplete || result.LabelVolumeMode.Of(x.Labels) != "Block" {
			t.Errorf("%s: %s %s (volume_mode %q)", x.Workload, x.Status, x.Error, result.LabelVolumeMode.Of(x.Labels))
		}
	}
	if left := e.labelledOf(t, class); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
}

// TestClusterRealNodeInterrupt cancels a run mid-workload, as Ctrl-C does: fio
// stops in the container and no labelled object remains.
func TestClusterRealNodeInterrupt(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-intr")
	dir := t.TempDir()
	e.class(t, class)
	e.realPV(t, class, dir, "1Gi", false)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan cliRun, 1)
	go func() {
		done <- storbench(ctx, t, "run", "--db", filepath.Join(t.TempDir(), "r.db"), "--suite", suiteFile(t, `name: long
workloads:
  - {name: w, rw: randwrite, bs: 4KiB, size: 16MiB, runtime: 60s, ioengine: psync}
`), "--target", "k8s:"+class, "--nodes", realNode, "--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m")
	}()
	// Wait until fio runs on the volume, seen from the host.
	deadline := time.Now().Add(90 * time.Second)
	for len(fioOn(dir)) == 0 {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("fio never started; run: %+v", <-done)
		}
		time.Sleep(200 * time.Millisecond)
	}
	time.Sleep(time.Second)
	start := time.Now()
	cancel()
	r := <-done
	if r.code != cli.ExitInterrupted {
		t.Errorf("exit %d, want %d: %s", r.code, cli.ExitInterrupted, r.errOut)
	}
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("stopping took %s", took)
	}
	if pids := fioOn(dir); len(pids) > 0 {
		t.Errorf("fio still runs on the volume: pids %v", pids)
	}
	if left := e.labelledOf(t, class); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
}

// fioOn lists fio processes on this host whose working directory is dir
// (the real node's containers run here).
func fioOn(dir string) []string {
	want, err := os.Stat(dir)
	if err != nil {
		return nil
	}
	matches, _ := filepath.Glob("/proc/[0-9]*/comm")
	var out []string
	for _, m := range matches {
		comm, err := os.ReadFile(m)
		if err != nil || !strings.HasPrefix(string(comm), "fio") {
			continue
		}
		// The path is the container's; the directory itself is the volume's.
		cwd, err := os.Stat(filepath.Join(filepath.Dir(m), "cwd"))
		if err == nil && os.SameFile(cwd, want) {
			out = append(out, filepath.Base(filepath.Dir(m)))
		}
	}
	return out
}

func TestClusterKwokRoundsAndGrouping(t *testing.T) {
	e := integration(t)
	e.fakeNodes(t)
	class := unique("sb-rounds")
	e.class(t, class)
	e.fakePVs(t, class, 3)
	db := filepath.Join(t.TempDir(), "r.db")
	r := storbench(context.Background(), t, "run", "--db", db, "--suite", suiteFile(t, tinySuite), "--target", "k8s:"+class,
		"--nodes", "sb-it-node-1,sb-it-node-2,sb-it-node-3", "--rounds", "isolated,parallel", "--timeout", "1m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.errOut)
	}
	out := parseRun(t, r)
	if len(out.Results) != 12 {
		t.Fatalf("%d results, want 2 rounds x 3 targets x 2 workloads", len(out.Results))
	}
	rounds := map[string]int{}
	for _, res := range out.Results {
		rounds[res.Round]++
		if res.Status != result.StatusComplete {
			t.Errorf("%s %s: %s", res.Target, res.Workload, res.Error)
		}
		node := result.LabelNode.Of(res.Labels)
		if kube.TargetName(class, node) != res.Target {
			t.Errorf("result of %s ran on node %q", res.Target, node)
		}
		if res.Labels["storage"] != kwokNodes[node] {
			t.Errorf("%s: storage label %q, want %q", res.Target, res.Labels["storage"], kwokNodes[node])
		}
		if res.Round == result.RoundParallel && result.LabelStartSkew.Of(res.Labels) == "" {
			t.Errorf("%s: parallel result without start skew", res.Target)
		}
	}
	if rounds[result.RoundIsolated] != 6 || rounds[result.RoundParallel] != 6 {
		t.Errorf("results per round: %v", rounds)
	}
	cmp := storbench(context.Background(), t, "compare", "--db", db, out.Run.ID, "--group-by", "storage", "--output", "json")
	if cmp.code != 0 {
		t.Fatalf("compare --group-by storage: exit %d: %s", cmp.code, cmp.errOut)
	}
	for _, g := range []string{"nvme", "sd"} {
		if !strings.Contains(cmp.out, g) {
			t.Errorf("compare --group-by storage lacks group %s: %s", g, cmp.out)
		}
	}
	if left := e.labelled(t); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
}

func TestClusterKwokClassThatNeverBinds(t *testing.T) {
	e := integration(t)
	e.fakeNodes(t)
	good, never := unique("sb-good"), unique("sb-never")
	e.class(t, good)
	e.class(t, never)
	e.fakePVs(t, good, 1)
	start := time.Now()
	r := storbench(context.Background(), t, "run", "--db", filepath.Join(t.TempDir(), "r.db"), "--suite", suiteFile(t, tinySuite),
		"--target", "k8s:"+never, "--target", "k8s:"+good, "--nodes", "sb-it-node-1", "--timeout", "4s", "--output", "json")
	if took := time.Since(start); took > 60*time.Second {
		t.Errorf("took %s with --timeout 4s", took)
	}
	if r.code != cli.ExitFailed {
		t.Errorf("exit %d, want %d", r.code, cli.ExitFailed)
	}
	for _, res := range parseRun(t, r).Results {
		switch res.Target {
		case kube.TargetName(good, "sb-it-node-1"):
			if res.Status != result.StatusComplete {
				t.Errorf("the good class was affected: %s %s", res.Status, res.Error)
			}
		case kube.TargetName(never, "sb-it-node-1"):
			if res.Status != result.StatusFailed || !strings.Contains(res.Error, "didn't find available persistent volumes to bind") {
				t.Errorf("the failure does not carry the binding event: %s", res.Error)
			}
		default:
			t.Errorf("unexpected target %s", res.Target)
		}
	}
	if left := e.labelled(t); len(left) != 0 {
		t.Errorf("objects left: %v", left)
	}
}

// TestClusterRBACIsSufficient applies deploy/base/rbac.yaml, runs storbench with the
// ServiceAccount's token, then removes one verb and expects doctor to name
// the missing permission.
func TestClusterRBACIsSufficient(t *testing.T) {
	e := integration(t)
	e.fakeNodes(t)
	ctx := context.Background()
	role := applyRBAC(t, e)
	tok, err := e.client.CoreV1().ServiceAccounts("storbench").CreateToken(ctx, "storbench", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	kc, err := clientcmd.LoadFromFile(e.kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	// Same cluster, the ServiceAccount's token instead of the admin's.
	kc.AuthInfos = map[string]*clientcmdapi.AuthInfo{"storbench-sa": {Token: tok.Status.Token}}
	for _, c := range kc.Contexts {
		c.AuthInfo = "storbench-sa"
	}
	saKubeconfig := filepath.Join(t.TempDir(), "sa.kubeconfig")
	if err := clientcmd.WriteToFile(*kc, saKubeconfig); err != nil {
		t.Fatal(err)
	}

	class := unique("sb-rbac")
	e.class(t, class)
	e.fakePVs(t, class, 1)
	r := storbench(ctx, t, "run", "--kubeconfig", saKubeconfig, "--db", filepath.Join(t.TempDir(), "r.db"), "--suite", suiteFile(t, tinySuite),
		"--target", "k8s:"+class, "--nodes", "sb-it-node-2", "--timeout", "1m", "--output", "json")
	if r.code != 0 {
		t.Fatalf("run as the storbench ServiceAccount: exit %d: %s", r.code, r.errOut)
	}
	if d := storbench(ctx, t, "doctor", "--k8s", "--kubeconfig", saKubeconfig, "--db", filepath.Join(t.TempDir(), "d.db")); d.code != 0 {
		t.Errorf("doctor with the documented RBAC: exit %d\n%s", d.code, d.out)
	}
	if c := storbench(ctx, t, "cleanup", "--k8s", "--kubeconfig", saKubeconfig); c.code != 0 {
		t.Errorf("cleanup with the documented RBAC: exit %d\n%s%s", c.code, c.out, c.errOut)
	}
	optInRBAC(t, e, saKubeconfig)

	// Remove "delete" from the PVC rule.
	for i, rule := range role.Rules {
		if len(rule.Resources) == 1 && rule.Resources[0] == "persistentvolumeclaims" {
			role.Rules[i].Verbs = []string{"create", "get", "list"}
		}
	}
	if _, err := e.client.RbacV1().Roles("storbench").Update(ctx, role, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	accessSettled(ctx, t, saClient(t, saKubeconfig), []kubekit.Permission{{Verb: "delete", Resource: "persistentvolumeclaims", Namespaced: true}}, false)
	d := storbench(ctx, t, "doctor", "--k8s", "--kubeconfig", saKubeconfig, "--db", filepath.Join(t.TempDir(), "d.db"))
	if d.code != cli.ExitFailed || !strings.Contains(d.out, "missing permission: delete persistentvolumeclaims in namespace storbench") {
		t.Errorf("doctor does not name the missing permission (exit %d):\n%s", d.code, d.out)
	}
}

// saClient connects with the ServiceAccount's kubeconfig.
func saClient(t *testing.T, kubeconfig string) kubernetes.Interface {
	t.Helper()
	sa, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: kubeconfig, Namespace: "storbench"})
	if err != nil {
		t.Fatal(err)
	}
	return sa.Client
}

// applyRBAC creates (or replaces) every object of deploy/base/rbac.yaml and
// returns the Role.
func applyRBAC(t *testing.T, e *env) *rbacv1.Role {
	t.Helper()
	ctx := context.Background()
	data, err := os.ReadFile("../../../deploy/base/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var role *rbacv1.Role
	for _, doc := range strings.Split(string(data), "\n---\n") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
		if err != nil {
			t.Fatalf("deploy/base/rbac.yaml: %v", err)
		}
		if err := apply(ctx, e.client, obj); err != nil {
			t.Fatal(err)
		}
		if r, ok := obj.(*rbacv1.Role); ok && r.Name == "storbench" { // not the optional blocks' Roles
			role = r
		}
	}
	t.Cleanup(func() { // restore the documented Role for later tests
		if err := apply(context.Background(), e.client, role.DeepCopy()); err != nil {
			t.Error(err)
		}
	})
	got, err := e.client.RbacV1().Roles("storbench").Get(ctx, role.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

func apply(ctx context.Context, c kubernetes.Interface, obj runtime.Object) error {
	var err error
	switch o := obj.(type) {
	case *corev1.Namespace:
		_, err = c.CoreV1().Namespaces().Create(ctx, o, metav1.CreateOptions{})
	case *corev1.ServiceAccount:
		_, err = c.CoreV1().ServiceAccounts(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.Role:
		if _, err = c.RbacV1().Roles(o.Namespace).Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			cur, gerr := c.RbacV1().Roles(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur.Rules = o.Rules
			_, err = c.RbacV1().Roles(o.Namespace).Update(ctx, cur, metav1.UpdateOptions{})
		}
	case *rbacv1.RoleBinding:
		_, err = c.RbacV1().RoleBindings(o.Namespace).Create(ctx, o, metav1.CreateOptions{})
	case *rbacv1.ClusterRole:
		if _, err = c.RbacV1().ClusterRoles().Create(ctx, o, metav1.CreateOptions{}); apierrors.IsAlreadyExists(err) {
			cur, gerr := c.RbacV1().ClusterRoles().Get(ctx, o.Name, metav1.GetOptions{})
			if gerr != nil {
				return gerr
			}
			cur.Rules = o.Rules
			_, err = c.RbacV1().ClusterRoles().Update(ctx, cur, metav1.UpdateOptions{})
		}
	case *rbacv1.ClusterRoleBinding:
		_, err = c.RbacV1().ClusterRoleBindings().Create(ctx, o, metav1.CreateOptions{})
	default:
		return fmt.Errorf("deploy/base/rbac.yaml: unexpected %T", obj)
	}
	if apierrors.IsAlreadyExists(err) {
		return nil
	}
	return err
}

// optInRBAC: the base's ServiceAccount may not patch nodes, delete
// PersistentVolumes or get nodes/proxy (as kubectl auth can-i asks: a
// SelfSubjectAccessReview with its own token), and doctor says those
// blocks are not granted and what they unlock; once the class checks'
// opt-in component is applied, it may patch nodes and delete PVs.
func optInRBAC(t *testing.T, e *env, saKubeconfig string) {
	ctx := context.Background()
	sa := saClient(t, saKubeconfig)
	optIn := append(append([]kubekit.Permission{}, classcheck.NodeChangePermissions...), kube.KubeletStatsPermissions...)
	access, err := kubekit.CheckAccess(ctx, sa, "storbench", optIn)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range access {
		if a.Allowed {
			t.Errorf("the base's ServiceAccount may %s by default", a.Permission)
		}
	}
	d := storbench(ctx, t, "doctor", "--k8s", "--kubeconfig", saKubeconfig, "--db", filepath.Join(t.TempDir(), "d.db"))
	for _, want := range []string{"class checks' node changes (opt-in)", "not granted", "kubectl apply -k deploy/overlays/class-checks", "kubelet stats (opt-in)"} {
		if !strings.Contains(d.out, want) {
			t.Errorf("doctor does not say %q:\n%s", want, d.out)
		}
	}
	data, err := os.ReadFile("../../../deploy/components/class-node-changes/rbac.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, doc := range strings.Split(string(data), "\n---\n") {
		js, err := yaml.YAMLToJSON([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(js, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if err := apply(ctx, e.client, obj); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		e.client.RbacV1().ClusterRoleBindings().Delete(context.Background(), "storbench-class-node-changes", metav1.DeleteOptions{})
		e.client.RbacV1().ClusterRoles().Delete(context.Background(), "storbench-class-node-changes", metav1.DeleteOptions{})
	})
	for _, a := range accessSettled(ctx, t, sa, classcheck.NodeChangePermissions, true) {
		if !a.Allowed {
			t.Errorf("with deploy/components/class-node-changes the ServiceAccount may still not %s", a.Permission)
		}
	}
}

// accessSettled asks, every 200 ms for at most 30 s, whether the client may
// do each of perms, until every answer is want, and returns the last
// answers. The API server's RBAC authorizer reads roles and bindings from
// its watch cache, so a grant or a revocation just written takes effect a
// moment later (a CI run asked within that moment, under load, and was refused).
func accessSettled(ctx context.Context, t *testing.T, c kubernetes.Interface, perms []kubekit.Permission, want bool) []kubekit.AccessResult {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		access, err := kubekit.CheckAccess(ctx, c, "storbench", perms)
		if err != nil {
			t.Fatal(err)
		}
		settled := true
		for _, a := range access {
			settled = settled && a.Allowed == want
		}
		if settled || time.Now().After(deadline) {
			return access
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// An image the node cannot pull stops the target at its first pull
// failure, well within a minute (not the 2-minute wait), naming the ways
// out, and leaves nothing. Cost on the harness: 3.7 s (02:35 UTC).
func TestClusterRealNodeImageCannotBePulled(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	class := unique("sb-pull")
	e.class(t, class)
	e.realPV(t, class, t.TempDir(), "1Gi", false)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: e.kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	tg := kube.NewTarget(c, class, realNode, 1, kube.TargetOptions{Timeout: 2 * time.Minute,
		Image: "registry.invalid/storbench/storbench-fio:v0.0.0-none", PullPolicy: corev1.PullAlways})
	start := time.Now()
	p, err := tg.Prepare(context.Background(), runner.Need{RunID: unique("pull"), FileSize: 8 << 20})
	took := time.Since(start)
	if err == nil {
		p.Cleanup(context.Background())
		t.Fatal("a pod whose image cannot be pulled was prepared")
	}
	t.Logf("%s: %v", took.Round(time.Millisecond), err)
	var ie *kubekit.ImageError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "--image") || !strings.Contains(err.Error(), "ctr images import") {
		t.Errorf("want the ways out, got %v", err)
	}
	if took > time.Minute {
		t.Errorf("took %s to give up on the image", took)
	}
	if left := e.labelledOf(t, class); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}
