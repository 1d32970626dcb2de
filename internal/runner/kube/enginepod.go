package kube

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/gluster"
	"github.com/storbench/storbench/internal/safety"
)

// podEngine is a target that fio reaches through an I/O engine of its own
// (fio.EngineTarget), run from a pod on each chosen node with no volume:
// the engine's kind gives the engine's options, the data the run shares
// across nodes (made once, removed by the last node), the file each
// node's fio writes, and what the jobs own (safety's engine names).
type podEngine interface {
	// String is the engine's target as its own kind names it
	// (gluster://SERVER/VOLUME).
	String() string
	// Describe says, for a dry run, what a pod's fio reaches.
	Describe() string
	// setUp makes what the run's pods share and returns its labels and
	// notices; tearDown removes it.
	setUp(ctx context.Context, runID string) (map[string]string, []string, error)
	tearDown(ctx context.Context, runID string) error
	// file is what the fio of node writes.
	file(runID, node string, size int64) fio.File
	// owned are the engine names the run's jobs may write (Prepared.Owned).
	owned(runID string) []string
	// doctor checks what the engine needs where storbench runs.
	doctor(ctx context.Context, o runner.Options) []result.Check
}

// parseEngine recognises k8s:ENGINETARGET: k8s:gluster://SERVER/VOLUME,
// k8s:rbd:POOL[/IMAGE][?...] (enginepod_rbd.go).
func parseEngine(rest string) (runner.Spec, bool, error) {
	if strings.HasPrefix(rest, rbdScheme) {
		return parseRBDEngine(rest)
	}
	if !strings.HasPrefix(rest, gluster.Scheme) {
		return nil, false, nil
	}
	s, _, err := gluster.Kind{}.Parse(rest)
	if err != nil {
		return nil, true, runner.FieldErrorf("%s: %s%s: write %sgluster://SERVER/VOLUME (choose nodes with %s or %s)",
			runner.Field("Targets"), TargetPrefix, rest, TargetPrefix, runner.Field("Kube.Nodes"), runner.Field("Kube.NodeSelector"))
	}
	return EngineSpec{engine: glusterEngine{spec: s.(gluster.Spec)}}, true, nil
}

// podEngineSetup is an engine whose pods need more than the shared
// setup: podSpec adds what each pod needs (the cluster's configuration),
// podSetUp runs in each pod once it is ready (the rbd CLI there makes
// the node's image) and returns what the node's target carries.
type podEngineSetup interface {
	podSpec(pod *corev1.Pod, runID string)
	podSetUp(ctx context.Context, runID, node string, size int64, cmder *kubekit.PodCmder) (*podStage, error)
}

// podStage is what podSetUp made in one pod: the target's labels and
// notices, the engine names its jobs own, how to read whether a name is
// in use (Prepared.EngineFacts), the file fio uses, and undo, which runs
// in the pod before it goes.
type podStage struct {
	labels  map[string]string
	notices []string
	owned   []string
	facts   safety.EngineFacts
	file    fio.File
	undo    func(context.Context) error
}

// clusterEngine is an engine that works with the cluster's API itself
// (the rbd engine's Secret): bind gives it the run's cluster.
type clusterEngine interface {
	bind(c *kubekit.Cluster) podEngine
}

// bindEngine is e bound to cluster c when it needs one.
func bindEngine(e podEngine, c *kubekit.Cluster) podEngine {
	if ce, ok := e.(clusterEngine); ok && c != nil {
		return ce.bind(c)
	}
	return e
}

// EngineSpec is an engine target reached from a pod on each chosen node:
// k8s:gluster://SERVER/VOLUME.
type EngineSpec struct {
	engine podEngine
}

// String implements runner.Spec.
func (s EngineSpec) String() string { return TargetPrefix + s.engine.String() }

// Describe implements runner.Spec.
func (s EngineSpec) Describe() string {
	return s.engine.Describe() + "; from a pod (no volume) on each chosen node, removed after the run"
}

// Target implements runner.Spec: made by Open, one per node.
func (EngineSpec) Target(runner.Options) (runner.Target, error) { return nil, runner.ErrGrouped }

// engineRun is what one engine spec's targets share in a run: the
// engine's setup, made by the first node's Prepare and torn down by the
// last node's cleanup (a sequential run makes it again for each node).
type engineRun struct {
	engine  podEngine
	mu      sync.Mutex
	users   int
	runID   string
	labels  map[string]string
	notices []string
}

func (r *engineRun) acquire(ctx context.Context, runID string) (map[string]string, []string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.users == 0 {
		labels, notices, err := r.engine.setUp(ctx, runID)
		if err != nil {
			return nil, nil, err
		}
		r.runID, r.labels, r.notices = runID, labels, notices
	} else if r.runID != runID {
		return nil, nil, fmt.Errorf("target %s: run %s is still set up while run %s starts", r.engine, r.runID, runID)
	}
	r.users++
	return maps.Clone(r.labels), r.notices, nil
}

func (r *engineRun) release(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.users--
	if r.users > 0 {
		return nil
	}
	return r.engine.tearDown(ctx, r.runID)
}

// EngineTarget is an engine target from a pod on one node: fio in the
// pod reaches the data through its engine; the pod has no volume.
type EngineTarget struct {
	base *Target // the node, the cluster, the pod's options
	run  *engineRun
}

var (
	_ runner.Target  = (*EngineTarget)(nil)
	_ runner.Checker = (*EngineTarget)(nil)
)

func newEngineTarget(c *kubekit.Cluster, run *engineRun, node string, index int, opts TargetOptions) *EngineTarget {
	opts.VolumeMode = corev1.PersistentVolumeFilesystem
	return &EngineTarget{base: NewTarget(c, run.engine.String(), node, index, opts), run: run}
}

// Name implements runner.Target: k8s:gluster://SERVER/VOLUME@NODE.
func (t *EngineTarget) Name() string { return t.base.Name() }

// Node is the target's node.
func (t *EngineTarget) Node() string { return t.base.node }

// Check implements runner.Checker: the node exists and the pod overrides
// apply. Nothing is created.
func (t *EngineTarget) Check(ctx context.Context, _ runner.Need) error {
	if _, err := t.base.cluster.Client.CoreV1().Nodes().Get(ctx, t.base.node, metav1.GetOptions{}); err != nil {
		if apierrors.IsNotFound(err) {
			return fmt.Errorf("target %s: node %q does not exist", t.Name(), t.base.node)
		}
		if !apierrors.IsForbidden(err) {
			return fmt.Errorf("target %s: %w", t.Name(), err)
		}
	}
	_, err := t.podSpec("check", t.base.cluster.Namespace(), "check", map[string]string{corev1.LabelHostname: t.base.node})
	return err
}

// podSpec is the class targets' pod with an emptyDir as its working
// directory in place of the PVC.
func (t *EngineTarget) podSpec(name, ns, runID string, sel map[string]string) (*corev1.Pod, error) {
	pod, err := t.base.podSpec(name, ns, runID, sel)
	if err != nil {
		return nil, err
	}
	for i, v := range pod.Spec.Volumes {
		if v.PersistentVolumeClaim != nil && v.PersistentVolumeClaim.ClaimName == name {
			pod.Spec.Volumes[i].VolumeSource = corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}
		}
	}
	if ps, ok := t.run.engine.(podEngineSetup); ok {
		ps.podSpec(pod, runID)
	}
	return pod, nil
}

// Prepare implements runner.Target: the engine's shared setup (the first
// node's), then the pod on the node, running with fio ready.
func (t *EngineTarget) Prepare(ctx context.Context, need runner.Need) (_ *runner.Prepared, err error) {
	engineLabels, notices, err := t.run.acquire(ctx, need.RunID)
	if err != nil {
		return nil, err
	}
	name := objectName(need.RunID, t.base.index)
	o := &objects{cluster: t.base.cluster, name: name, target: t.Name(), report: t.base.opts.Report, timeout: t.base.opts.Timeout}
	stage := &podStage{undo: func(context.Context) error { return nil }}
	defer func() {
		if err != nil {
			cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), t.base.opts.Timeout)
			defer cancel()
			if cerr := errors.Join(stage.undo(cctx), o.delete(cctx, false), t.run.release(cctx)); cerr != nil {
				err = errors.Join(err, fmt.Errorf("and cleaning up: %w", cerr))
			}
		}
	}()
	env, err := t.lookUp(ctx)
	if err != nil {
		return nil, err
	}
	o.ns = env.ns
	env.notices = append(env.notices, notices...)
	running, err := t.startPod(ctx, o, env, need.RunID)
	if err != nil {
		return nil, err
	}
	made, err := t.podSetUp(ctx, o, running, need)
	if err != nil {
		return nil, err
	}
	stage = made
	env.notices = append(env.notices, stage.notices...)
	labels := t.base.podLabels(env, running, 0)
	for _, k := range []result.LabelKey{result.LabelK8sPVC, result.LabelStorageClass, result.LabelVolumeMode, result.LabelAccessMode, result.LabelPVCSize} {
		delete(labels, string(k))
	}
	maps.Copy(labels, engineLabels)
	maps.Copy(labels, stage.labels)
	// The servers that are nodes hold the copies: the network round and
	// the node samplers reach them, and the breakdown reads their links.
	kubekit.ServersNodeLabels(ctx, t.base.cluster.Client, strings.Split(result.LabelVolumeServers.Of(labels), ","), labels)
	if env.restricted {
		result.LabelPodSecurity.Set(labels, "restricted")
	}
	p, err := t.base.prepared(ctx, o, running, labels, env.notices, need)
	if err != nil {
		return nil, err
	}
	p.File = t.run.engine.file(need.RunID, running.Spec.NodeName, need.FileSize)
	p.Owned = t.run.engine.owned(need.RunID)
	if stage.file.Engine != nil {
		p.File, p.Owned, p.EngineFacts = stage.file, stage.owned, stage.facts
	}
	podCleanup := p.Cleanup
	// The pod's own stage goes first, in the pod, before the pod goes.
	p.Cleanup = func(ctx context.Context) error {
		return errors.Join(stage.undo(ctx), podCleanup(ctx), t.run.release(ctx))
	}
	return p, nil
}

// podSetUp runs the engine's setup in the node's running pod, when the
// engine has one (podEngineSetup); an empty stage otherwise.
func (t *EngineTarget) podSetUp(ctx context.Context, o *objects, running *corev1.Pod, need runner.Need) (*podStage, error) {
	ps, ok := t.run.engine.(podEngineSetup)
	if !ok {
		return &podStage{undo: func(context.Context) error { return nil }}, nil
	}
	cmder := &kubekit.PodCmder{Exec: t.base.cluster.Exec, Namespace: o.ns, Pod: o.name, Container: kubekit.ContainerName}
	stage, err := ps.podSetUp(ctx, need.RunID, running.Spec.NodeName, need.FileSize, cmder)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	return stage, nil
}

// lookUp reads the namespace and the node, as a class target's does,
// with no class.
func (t *EngineTarget) lookUp(ctx context.Context) (*targetEnv, error) {
	ns, err := t.base.cluster.EnsureNamespace(ctx)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	env := &targetEnv{ns: ns, hostSel: map[string]string{corev1.LabelHostname: t.base.node}}
	if n := t.base.cluster.NamespaceNotice(); n != "" {
		env.notices = append(env.notices, n)
	}
	env.node, err = t.base.cluster.Client.CoreV1().Nodes().Get(ctx, t.base.node, metav1.GetOptions{})
	switch {
	case apierrors.IsForbidden(err):
		env.node = nil
	case err != nil:
		return nil, fmt.Errorf("target %s: node: %w", t.Name(), err)
	case env.node.Labels[corev1.LabelHostname] != "":
		env.hostSel[corev1.LabelHostname] = env.node.Labels[corev1.LabelHostname]
	}
	return env, nil
}

// startPod creates the pod pinned to the node and waits, bounded by the
// target's timeout, for it to run with fio ready.
func (t *EngineTarget) startPod(ctx context.Context, o *objects, env *targetEnv, runID string) (*corev1.Pod, error) {
	pod, err := t.podSpec(o.name, env.ns, runID, env.hostSel)
	if err != nil {
		return nil, err
	}
	restricted, err := kubekit.CreatePod(ctx, t.base.cluster.Client, pod)
	if err != nil {
		return nil, fmt.Errorf("target %s: creating pod %s/%s: %w", t.Name(), env.ns, o.name, err)
	}
	o.podCreated = true
	if restricted != "" {
		env.restricted = true
		env.notices = append(env.notices, restricted)
	}
	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		p, err := t.base.cluster.Client.CoreV1().Pods(env.ns).Get(wctx, o.name, metav1.GetOptions{})
		if err == nil {
			if ferr := errors.Join(podFailed(p), containerStuck(p)); ferr != nil {
				return nil, fmt.Errorf("target %s: %w", t.Name(), o.explain(ctx, ferr))
			}
			if p.Status.Phase == corev1.PodRunning && podReady(p) {
				return p, nil
			}
		} else if apierrors.IsNotFound(err) || apierrors.IsForbidden(err) {
			return nil, fmt.Errorf("target %s: reading pod %s/%s: %w", t.Name(), env.ns, o.name, err)
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("target %s: %w", t.Name(), o.explain(ctx, fmt.Errorf("pod %s not running with fio ready within %s", o.name, o.timeout)))
		case <-tick.C:
		}
	}
}
