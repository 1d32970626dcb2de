package kube

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/units"
)

// The saturation sweep on Kubernetes (docs/sweep.md): a step of N clients
// runs N pods per node and class. Client 1 is the target's own pod;
// clients 2..N are pods of their own beside it on the node, each with a
// PVC of its own of the class, or, with access mode ReadWriteMany, each
// mounting the target's own volume (every client a file of its own on
// it). Pods are made as steps need them, all at once, kept for the later
// steps and removed by ReleaseClients; they carry the run's labels, so
// cleanup finds what a killed run left.

// ClientStart is how long readying a step's new client pods may take
// (made at once: PVCs bound, pods scheduled, fio ready; the test cluster
// takes 5 to 10 s), counted per step in the sweep's estimate.
const ClientStart = 15 * time.Second

// sweepClientsFiles matches every file and log the sweep's clients leave
// in a pod's working directory (engine.SweepFilePrefix).
const sweepClientsFiles = "storbench-sweep-*"

var _ runner.Clients = (*Target)(nil)

// sweepClients are the client pods a target made for the sweep.
type sweepClients struct {
	mu sync.Mutex
	// main reaches the target's own pod (client 1).
	main *kubekit.PodCmder
	// pods are clients 2, 3, ... in order.
	pods []*clientPod
}

type clientPod struct {
	o      *objects
	cmder  *kubekit.PodCmder
	shared bool
}

// ClientGroup implements runner.Clients: a step runs every chosen node of
// the class together.
func (t *Target) ClientGroup() string { return TargetPrefix + t.class }

// ClientStart implements runner.Clients.
func (t *Target) ClientStart() time.Duration { return ClientStart }

// sharedVolume reports whether the clients share the target's volume.
func (t *Target) sharedVolume() bool { return t.opts.AccessMode == corev1.ReadWriteMany }

// Clients implements runner.Clients: the target's own pod, then the
// missing client pods made at once and waited for together.
func (t *Target) Clients(ctx context.Context, p *runner.Prepared, need runner.Need, n int) ([]runner.Client, error) {
	if t.opts.VolumeMode == corev1.PersistentVolumeBlock {
		return nil, runner.FieldErrorf("target %s: the sweep gives each client a file of its own; a Block volume has no filesystem: sweep with %s Filesystem",
			t.Name(), runner.Field("Kube.VolumeMode"))
	}
	main, ok := p.Cmder.(*kubekit.PodCmder)
	if !ok {
		return nil, fmt.Errorf("target %s: the prepared target does not run in a pod", t.Name())
	}
	if !t.sharedVolume() {
		if size := t.pvcSize(need); need.FileSize > t.usable(size) {
			return nil, fmt.Errorf("target %s: each client needs a %s file but a %s PVC holds at most %s of it: pass --size %s or more, or a smaller --max-size",
				t.Name(), units.Bytes(need.FileSize), units.Bytes(size), units.Bytes(t.usable(size)), quantity(FitSize(need.FileSize)))
		}
	}
	sc := &t.sweep
	sc.mu.Lock()
	defer sc.mu.Unlock()
	sc.main = main
	if missing := n - 1 - len(sc.pods); missing > 0 {
		if err := t.addClients(ctx, need, missing); err != nil {
			return nil, err
		}
	}
	out := []runner.Client{{Name: "pod " + main.Pod, Cmder: main}}
	for _, c := range sc.pods[:n-1] {
		out = append(out, runner.Client{Name: "pod " + c.cmder.Pod, Cmder: c.cmder})
	}
	return out, nil
}

// addClients makes count more client pods (and their PVCs) at once and
// waits until every one runs with fio ready. Each is recorded before it
// is created, so ReleaseClients removes it whatever happens.
func (t *Target) addClients(ctx context.Context, need runner.Need, count int) error {
	env, err := t.lookUp(ctx)
	if err != nil {
		return err
	}
	if err := t.podRoom(ctx, env, count); err != nil {
		return err
	}
	sc := &t.sweep
	first := len(sc.pods) + 2
	made := make([]*clientPod, count)
	for i := range made {
		name := fmt.Sprintf("%s-c%d", objectName(need.RunID, t.index), first+i)
		made[i] = &clientPod{o: &objects{cluster: t.cluster, ns: env.ns, name: name, target: t.Name(), report: t.opts.Report, timeout: t.opts.Timeout},
			cmder: &kubekit.PodCmder{Exec: t.cluster.Exec, Namespace: env.ns, Pod: name, Container: kubekit.ContainerName}, shared: t.sharedVolume()}
	}
	sc.pods = append(sc.pods, made...)
	errs := make([]error, count)
	var wg sync.WaitGroup
	for i, c := range made {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := t.startClient(ctx, env, need, c); err != nil {
				errs[i] = fmt.Errorf("target %s: client %d (pod %s): %w", t.Name(), first+i, c.o.name, err)
			}
		}()
	}
	wg.Wait()
	return firstOf(errs)
}

// firstOf is the first error of many, saying how many more failed: many
// clients usually fail alike (a node's pod limit).
func firstOf(errs []error) error {
	var first error
	n := 0
	for _, err := range errs {
		if err != nil {
			if first == nil {
				first = err
			}
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("%w (and %d more clients)", first, n-1)
	}
	return first
}

// podRoom refuses a step whose new pods the node cannot take (its
// allocatable pods, 110 by default), at once rather than after the
// scheduler's wait; a node or pods storbench may not read pass.
func (t *Target) podRoom(ctx context.Context, env *targetEnv, count int) error {
	if env.node == nil {
		return nil
	}
	q, ok := env.node.Status.Allocatable[corev1.ResourcePods]
	if !ok || q.Value() <= 0 {
		return nil
	}
	pods, err := t.cluster.Client.CoreV1().Pods("").List(ctx, metav1.ListOptions{FieldSelector: "spec.nodeName=" + t.node})
	if err != nil {
		return nil
	}
	running := 0
	for _, p := range pods.Items {
		if p.Status.Phase != corev1.PodSucceeded && p.Status.Phase != corev1.PodFailed {
			running++
		}
	}
	if free := int(q.Value()) - running; count > free {
		return fmt.Errorf("target %s: node %s runs %d of its %d pods: the step's %d more clients do not fit", t.Name(), t.node, running, q.Value(), count)
	}
	return nil
}

// startClient creates one client's pod (and PVC, unless it shares the
// target's) and waits for it to run.
func (t *Target) startClient(ctx context.Context, env *targetEnv, need runner.Need, c *clientPod) error {
	if !c.shared {
		if _, err := t.create(ctx, c.o, env, need); err != nil {
			return err
		}
		_, err := c.o.waitRunning(ctx)
		return err
	}
	pod, err := t.podSpec(c.o.name, env.ns, need.RunID, env.hostSel)
	if err != nil {
		return err
	}
	for i := range pod.Spec.Volumes {
		if v := pod.Spec.Volumes[i].PersistentVolumeClaim; v != nil && pod.Spec.Volumes[i].Name == "data" {
			v.ClaimName = objectName(need.RunID, t.index)
		}
	}
	if _, err := kubekit.CreatePod(ctx, t.cluster.Client, pod); err != nil {
		return fmt.Errorf("creating pod %s/%s: %w", env.ns, c.o.name, err)
	}
	c.o.podCreated = true
	return c.o.waitPodReady(ctx)
}

// waitPodReady waits for a pod on an already bound volume to run with fio
// ready, within the target's timeout.
func (o *objects) waitPodReady(ctx context.Context) error {
	wctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for {
		p, err := o.cluster.Client.CoreV1().Pods(o.ns).Get(wctx, o.name, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err) || apierrors.IsForbidden(err):
			return fmt.Errorf("reading pod %s/%s: %w", o.ns, o.name, err)
		case err == nil:
			if err := podFailed(p); err != nil {
				return o.explain(ctx, err)
			}
			if err := containerStuck(p); err != nil {
				return o.explain(ctx, err)
			}
			if p.Status.Phase == corev1.PodRunning && podReady(p) {
				return nil
			}
		}
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return o.explain(ctx, fmt.Errorf("pod %s not running with fio ready within %s", o.name, o.timeout))
		case <-tick.C:
		}
	}
}

// ReleaseClients implements runner.Clients: it removes the sweep's files
// from the target's own pod and every client pod (a Retain class keeps
// what a volume holds), then deletes the client pods and their PVCs at
// once.
func (t *Target) ReleaseClients(ctx context.Context) error {
	sc := &t.sweep
	sc.mu.Lock()
	defer sc.mu.Unlock()
	var mu sync.Mutex
	var errs []error
	add := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	if sc.main != nil {
		add(t.removeSweepFiles(ctx, sc.main))
	}
	var wg sync.WaitGroup
	for _, c := range sc.pods {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if !c.shared && c.o.podCreated {
				add(t.removeSweepFiles(ctx, c.cmder))
			}
			add(c.o.delete(ctx, false))
		}()
	}
	wg.Wait()
	sc.pods, sc.main = nil, nil
	return errors.Join(errs...)
}

// removeSweepFiles removes the sweep's files in a running pod; a pod that
// does not run has nothing to remove them with.
func (t *Target) removeSweepFiles(ctx context.Context, c *kubekit.PodCmder) error {
	p, err := t.cluster.Client.CoreV1().Pods(c.Namespace).Get(ctx, c.Pod, metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodRunning {
		return nil
	}
	rctx, cancel := context.WithTimeout(ctx, kubekit.StopTimeout)
	defer cancel()
	var errb strings.Builder
	err = t.cluster.Exec.Exec(rctx, kubekit.ExecRequest{Namespace: c.Namespace, Pod: c.Pod, Container: kubekit.ContainerName,
		Command: []string{"sh", "-c", "rm -f " + sweepClientsFiles}, Stdout: io.Discard, Stderr: &errb})
	if err != nil {
		return fmt.Errorf("removing the sweep's files in pod %s/%s: %w %s", c.Namespace, c.Pod, err, strings.TrimSpace(errb.String()))
	}
	return nil
}

// accessModeHint explains a volume that was never provisioned when the
// target asks for ReadWriteMany: most classes refuse it.
func (t *Target) accessModeHint(err error) error {
	if err == nil || t.opts.AccessMode != corev1.ReadWriteMany || !strings.Contains(err.Error(), "provisioner failed") {
		return err
	}
	return runner.FieldErrorf("%w: StorageClass %s does not provide ReadWriteMany volumes; leave out %s ReadWriteMany (a sweep then gives each client a volume of its own)",
		err, t.class, runner.Field("Kube.AccessMode"))
}
