// Command k8s measures storbench's Kubernetes orchestration overhead against
// the loopback control plane of test/cluster/cluster.sh with N kwok fake nodes:
//
//   - per target, the time from the start of the run (before connecting) to
//     its first workload starting, and from its last workload ending to its
//     pod and PVC being gone;
//   - the parallel round's start skew across all targets, per workload.
//
// It creates its own fake nodes, StorageClass and static PVs, and removes
// them afterwards. Run it through run.sh, which brings the cluster up and down.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

func main() {
	nodes := flag.Int("nodes", 10, "fake nodes (one target each)")
	rounds := flag.String("rounds", "parallel", "rounds to run: parallel, or isolated,parallel")
	flag.Parse()
	if err := run(*nodes, *rounds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/k8s:", err)
		os.Exit(1)
	}
}

const suiteYAML = `name: bench-k8s
workloads:
  - {name: randread-4k, rw: randread, bs: 4KiB, size: 8MiB, runtime: 1s, ioengine: psync}
  - {name: randwrite-4k, rw: randwrite, bs: 4KiB, size: 8MiB, runtime: 1s, ioengine: psync}
  - {name: seqwrite-1m, rw: write, bs: 1MiB, size: 8MiB, runtime: 1s, ioengine: psync}
`

// timing records what happened to one target, on storbench's clock.
type timing struct {
	prepared, cleanStart     time.Time
	cleaned                  time.Time
	firstStart, lastFinished time.Time
}

type timedTarget struct {
	runner.Target
	t *timing
}

func (tt *timedTarget) Check(ctx context.Context, need runner.Need) error {
	return tt.Target.(runner.Checker).Check(ctx, need)
}

func (tt *timedTarget) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	p, err := tt.Target.Prepare(ctx, need)
	if err != nil {
		return nil, err
	}
	tt.t.prepared = time.Now()
	clean := p.Cleanup
	p.Cleanup = func(ctx context.Context) error {
		tt.t.cleanStart = time.Now()
		err := clean(ctx) // returns once the pod and PVC are gone
		tt.t.cleaned = time.Now()
		return err
	}
	return p, nil
}

type observer struct {
	mu      sync.Mutex
	timings map[string]*timing
}

func (o *observer) RunStarted(*result.Run)                        {}
func (o *observer) Notice(string, string)                         {}
func (o *observer) WorkloadProgress(engine.Step, result.Progress) {}
func (o *observer) WorkloadStarted(s engine.Step) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if t := o.timings[s.Target]; t.firstStart.IsZero() {
		t.firstStart = time.Now()
	}
}
func (o *observer) WorkloadFinished(s engine.Step, _ *result.Result) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.timings[s.Target].lastFinished = time.Now()
}

func run(n int, rounds string) error {
	kc := os.Getenv("KUBECONFIG")
	if kc == "" {
		return fmt.Errorf("set KUBECONFIG (run.sh does)")
	}
	ctx := context.Background()
	start := time.Now()
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: kc})
	if err != nil {
		return err
	}
	class := fmt.Sprintf("bench-k8s-%x", time.Now().UnixNano()&0xffffff)
	names, undo, err := fixtures(ctx, c.Client, class, n)
	defer undo()
	if err != nil {
		return err
	}
	s, err := spec.Parse([]byte(suiteYAML), "bench-k8s")
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp("", "bench-k8s-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	st, err := store.Open(ctx, filepath.Join(dir, "r.db"))
	if err != nil {
		return err
	}
	defer st.Close()

	obs := &observer{timings: map[string]*timing{}}
	var targets []runner.Target
	req := storbench.DefaultRunRequest()
	req.SuiteSpec, req.Targets, req.Rounds, req.Telemetry = s, []string{storbench.KubeTargetPrefix + class}, splitComma(rounds), false
	kube := storbench.DefaultKubeRequest()
	kube.Kubeconfig, kube.Nodes, kube.Timeout = kc, names, 2*time.Minute
	req.Kube = &kube
	req.Wrap = func(t runner.Target) runner.Target {
		obs.timings[t.Name()] = &timing{}
		tt := &timedTarget{Target: t, t: obs.timings[t.Name()]}
		targets = append(targets, tt)
		return tt
	}
	start = time.Now() // the run starts here: fixtures are not storbench's cost
	r, err := storbench.Run(ctx, st, req, obs)
	if err != nil {
		return err
	}
	total := time.Since(start)

	fmt.Printf("targets: %d kwok nodes, class %s, rounds %s, suite of %d workloads (1 s each)\n", n, class, rounds, len(s.Workloads))
	printTimings(obs, targets, start)

	if err := printSkew(ctx, st, r.ID); err != nil {
		return err
	}
	fmt.Printf("whole run: %s\n", total.Round(time.Millisecond))
	return nil
}

// printTimings prints, per target and as median and max, how long after the
// run's start it was prepared and first loaded, and how long it took to go.
func printTimings(obs *observer, targets []runner.Target, start time.Time) {
	fmt.Printf("%-34s %14s %14s %14s\n", "TARGET", "RUN->PREPARED", "RUN->1ST LOAD", "END->GONE")
	var toFirst, toGone []time.Duration
	for _, t := range targets {
		tm := obs.timings[t.Name()]
		a, b := tm.firstStart.Sub(start), tm.cleaned.Sub(tm.lastFinished)
		toFirst, toGone = append(toFirst, a), append(toGone, b)
		fmt.Printf("%-34s %14s %14s %14s\n", t.Name(), ms(tm.prepared.Sub(start)), ms(a), ms(b))
	}
	fmt.Printf("%-34s %14s %14s %14s\n", "median", "", ms(median(toFirst)), ms(median(toGone)))
	fmt.Printf("%-34s %14s %14s %14s\n", "max", "", ms(maxOf(toFirst)), ms(maxOf(toGone)))
}

// printSkew prints the parallel round's start skew across targets for each
// workload and the worst of them against the 250 ms target.
func printSkew(ctx context.Context, st store.Reader, runID string) error {
	res, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{runID}, Round: result.RoundParallel})
	if err != nil {
		return err
	}
	skews := map[string]string{}
	var order []string
	for _, x := range res {
		if _, seen := skews[x.Workload]; !seen {
			order = append(order, x.Workload)
		}
		skews[x.Workload] = result.LabelStartSkew.Of(x.Labels)
	}
	if os.Getenv("BENCH_DEBUG") != "" {
		printFioTimes(ctx, st, res)
	}
	fmt.Println("parallel round start skew across targets (fio's clock):")
	worst := 0.0
	for _, w := range order {
		v, _ := strconv.ParseFloat(skews[w], 64)
		worst = max(worst, v)
		fmt.Printf("  %-20s %8s ms\n", w, skews[w])
	}
	fmt.Printf("  worst %.1f ms (target <= 250 ms): %s\n", worst, map[bool]string{true: "met", false: "NOT met"}[worst <= 250])
	return nil
}

// printFioTimes prints, for debugging, each result's start and fio's own end,
// runtime and elapsed time from its raw JSON.
func printFioTimes(ctx context.Context, st store.Reader, res []result.Result) {
	for _, x := range res {
		raw, _ := st.RawFioJSON(ctx, x.ID)
		var doc struct {
			TS   int64 `json:"timestamp_ms"`
			Jobs []struct {
				RT int64 `json:"job_runtime"`
				El int64 `json:"elapsed"`
			} `json:"jobs"`
		}
		if err := json.Unmarshal(raw, &doc); err != nil || len(doc.Jobs) == 0 {
			continue
		}
		fmt.Printf("  %s %s started %s end %d rt %d el %d ioStart %s\n", x.Workload, x.Target, x.Started.Format("05.000"), doc.TS%100000, doc.Jobs[0].RT, doc.Jobs[0].El, time.UnixMilli(doc.TS-doc.Jobs[0].RT).Format("05.000"))
	}
}

func splitComma(s string) []string {
	var out []string
	start := 0
	for i := 0; i <= len(s); i++ {
		if i == len(s) || s[i] == ',' {
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return out
}

func ms(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxOf(d []time.Duration) time.Duration {
	var m time.Duration
	for _, v := range d {
		m = max(m, v)
	}
	return m
}

// fixtures creates n Ready fake nodes, a no-provisioner class and one
// static PV per node; undo removes them.
func fixtures(ctx context.Context, c kubernetes.Interface, class string, n int) ([]string, func(), error) {
	var names []string
	var undos []func()
	undo := func() {
		for i := len(undos) - 1; i >= 0; i-- {
			undos[i]()
		}
	}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	if _, err := c.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: class},
		Provisioner: kubekit.NoProvisioner, VolumeBindingMode: &wffc}, metav1.CreateOptions{}); err != nil {
		return nil, undo, err
	}
	undos = append(undos, func() {
		report(c.StorageV1().StorageClasses().Delete(context.Background(), class, metav1.DeleteOptions{}))
	})
	res := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("4"), corev1.ResourceMemory: resource.MustParse("8Gi"), corev1.ResourcePods: resource.MustParse("110")}
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("bench-node-%d", i)
		_, err := c.CoreV1().Nodes().Create(ctx, &corev1.Node{
			ObjectMeta: metav1.ObjectMeta{Name: name, Annotations: map[string]string{"kwok.x-k8s.io/node": "fake"},
				Labels: map[string]string{"kubernetes.io/hostname": name, "storage": "nvme"}},
			Status: corev1.NodeStatus{Allocatable: res, Capacity: res}}, metav1.CreateOptions{})
		if err != nil && !apierrors.IsAlreadyExists(err) {
			return nil, undo, err
		}
		undos = append(undos, func() { report(c.CoreV1().Nodes().Delete(context.Background(), name, metav1.DeleteOptions{})) })
		pv := fmt.Sprintf("%s-%d", class, i)
		_, err = c.CoreV1().PersistentVolumes().Create(ctx, &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: pv},
			Spec: corev1.PersistentVolumeSpec{
				Capacity:               corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("100Gi")},
				AccessModes:            []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				StorageClassName:       class,
				PersistentVolumeSource: corev1.PersistentVolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/nonexistent/" + pv}},
			}}, metav1.CreateOptions{})
		if err != nil {
			return nil, undo, err
		}
		undos = append(undos, func() {
			report(c.CoreV1().PersistentVolumes().Delete(context.Background(), pv, metav1.DeleteOptions{}))
		})
		names = append(names, name)
	}
	deadline := time.Now().Add(time.Minute)
	for _, name := range names {
		for {
			nd, err := c.CoreV1().Nodes().Get(ctx, name, metav1.GetOptions{})
			if err == nil && kubekit.NodeReady(*nd) {
				break
			}
			if time.Now().After(deadline) {
				return nil, undo, fmt.Errorf("node %s not Ready within a minute", name)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	return names, undo, nil
}

func report(err error) {
	if err != nil && !apierrors.IsNotFound(err) {
		fmt.Fprintln(os.Stderr, "bench/k8s: removing a fixture:", err)
	}
}
