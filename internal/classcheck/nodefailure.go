package classcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/storbench/storbench/internal/kubekit"
)

// NodeFailure asks for the failover after a node failure, which stops a
// node: opt-in, and only with the user's own commands.
type NodeFailure struct {
	// Node is the node to stop, the user's choice (the writer is placed
	// there); required.
	Node string
	// Stop stops the node as a failure would, containers and all (on k3s
	// `k3s-killall.sh`, run over SSH on the node's own host); required.
	Stop func(ctx context.Context, node string) error
	// Start brings the node back; nil leaves that to the user, whom the
	// report tells how (StartHint).
	Start     func(ctx context.Context, node string) error
	StartHint string
	// StartRecord says how Start starts the node, recorded on the node
	// (kubekit.SetStopped) before it is stopped, so that cleanup --k8s can
	// start it after storbench itself was killed; its Command is "" when
	// Start is nil.
	StartRecord kubekit.NodeStart
	// RecordStop, when set, keeps StartRecord on the machine storbench
	// runs on before the stop (where cleanup --k8s trusts it, unlike the
	// node's annotation); ForgetStop drops it once the node is back.
	RecordStop func(runID, node string) error
	ForgetStop func(runID, node string)
	// StopCommand names what Stop runs, for the report.
	StopCommand string
	// HostName and HostAddress are the inventory host the commands run
	// on: it must be the node's own (its name, hostname label or an
	// address), or the check is refused. Both "" skip that check.
	HostName, HostAddress string
	// OutOfService applies the non-graceful shutdown taint
	// (node.kubernetes.io/out-of-service=nodeshutdown:NoExecute) once the
	// node is NotReady: its pods are force-deleted and its volumes detached
	// at once instead of after the 6-minute force detach. The taint is
	// always removed again.
	OutOfService bool
	// Wait bounds the wait for the writer to run again elsewhere; 0 means
	// Options.Timeout with the taint and 8 minutes without it (the
	// attach-detach controller's 6-minute force detach, and margin).
	Wait time.Duration
}

// The taint of the non-graceful node shutdown (Kubernetes 1.28 on).
const (
	forceDetachTimer   = 6 * time.Minute  // the attach-detach controller's maxWaitForUnmountDuration
	defaultNodeGrace   = 50 * time.Second // kube-controller-manager's --node-monitor-grace-period default (v1.33)
	defaultEvictionSec = 300              // the DefaultTolerationSeconds admission's not-ready/unreachable toleration
)

// nodeFailure stops the user's node (--node) with the user's command,
// with the writer placed on it, and times until every acknowledged record
// reads back on another node. Records the old writer may add after the
// stop do not count; none acknowledged before it may be lost. Nothing acts
// as if the node were dead (the out-of-service taint, a replacement
// writer on its volume) before its workloads are verified gone.
func (r *run) nodeFailure(ctx context.Context) Check {
	start := time.Now()
	nf := r.o.NodeFailure
	switch {
	case nf == nil || nf.Stop == nil:
		return Check{Outcome: Skipped, Reason: "opt-in: it stops a node with a command you give (--node-stop-command)"}
	case len(r.nodes) < 2:
		return Check{Outcome: Skipped, Reason: "needs two schedulable nodes"}
	case !slices.Contains(r.nodes, nf.Node):
		return Check{Outcome: Skipped, Reason: fmt.Sprintf("node %s is not one a check may use (%s)", nf.Node, strings.Join(r.nodes, ", "))}
	}
	w, err := r.startWriter(ctx, nf.Node)
	defer func() { r.release(ctx, w.vols) }()
	if err != nil {
		return failed(start, err)
	}
	from := w.from
	if from != nf.Node {
		w.stop()
		return failed(start, fmt.Errorf("the writer runs on %s, not on the node to stop (%s)", from, nf.Node))
	}
	pr, err := r.startProber(ctx, w)
	if err != nil {
		w.stop()
		return failed(start, err)
	}

	// The failure. From here on the node is brought back and the taint
	// removed whatever happens (Ctrl-C included), before the claim goes.
	r.stopped = append(r.stopped, from)
	defer func() {
		if n := len(r.stopped); n > 0 && r.stopped[n-1] == from {
			if errs := r.restoreNode(context.WithoutCancel(ctx), from); len(errs) == 0 {
				r.stopped = r.stopped[:n-1]
			}
		}
	}()
	if nf.RecordStop != nil {
		if err := nf.RecordStop(r.runID, from); err != nil {
			w.stop()
			return failed(start, err)
		}
	}
	if err := kubekit.SetStopped(ctx, r.c.Client, from, r.runID, nf.StartRecord, true); err != nil {
		w.stop()
		return failed(start, fmt.Errorf("recording on node %s that this run stops it: %w", from, err))
	}
	t0 := time.Now()
	stopErr := nf.Stop(ctx, from)
	acked := w.acks.value() // acknowledged up to the node's death: none may be lost
	w.stop()
	select {
	case <-w.done:
	case <-time.After(10 * time.Second):
	}
	if stopErr != nil && !lostConnection(stopErr) {
		return failed(start, fmt.Errorf("stopping node %s: %w", from, stopErr))
	}
	notReady, err := r.waitNodeReady(ctx, from, false, defaultNodeGrace+r.o.Timeout)
	if err != nil {
		return failed(start, err)
	}
	verified, err := r.workloadsGone(ctx, pr, from)
	if err != nil {
		return failed(start, err)
	}
	r.progress("%s: %s: node %s %s", r.o.Class, CheckNodeFailure, from, verified)
	return r.failOver(ctx, w, acked, t0, notReady, verified)
}

// lostConnection is a stop command whose SSH connection died with the
// node (a power-off run on the node itself): the stop may have worked,
// and the checks that follow say whether it did.
func lostConnection(err error) bool {
	return strings.Contains(err.Error(), "connection lost")
}

// failOver moves the writer off the stopped, verified-dead node: the
// out-of-service taint when asked for, the old pod deleted (it cannot
// finish terminating on a dead node, as a StatefulSet's controller would
// see it), its replacement started on the claim, the records read back.
func (r *run) failOver(ctx context.Context, w *writer, acked int, t0, notReady time.Time, verified string) Check {
	nf, from := r.o.NodeFailure, w.from
	path := "timers only: the pod deleted by storbench (as its controller would), the volume detached by the attach-detach controller's force detach"
	wait := nf.Wait
	if wait <= 0 {
		wait = forceDetachTimer + 2*time.Minute
	}
	var tainted time.Time
	if nf.OutOfService {
		if err := r.setOutOfService(ctx, from, true); err != nil {
			return failed(t0, err)
		}
		tainted = time.Now()
		path = "out-of-service taint: the pod force-deleted and the volume detached at once (non-graceful node shutdown)"
		if nf.Wait <= 0 {
			wait = r.o.Timeout
		}
	}
	if err := r.c.Client.CoreV1().Pods(r.ns).Delete(ctx, w.v.pod, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return failed(t0, fmt.Errorf("deleting pod %s: %w", w.v.pod, err))
	}
	moved, err := r.moveWriter(ctx, w, wait)
	var pinned *errPinned
	if errors.As(err, &pinned) {
		return Check{Outcome: NotSupportedMeasured, Reason: "node-pinned: the scheduler: " + pinned.event, Took: time.Since(t0)}
	}
	if err != nil {
		return failed(t0, fmt.Errorf("after node %s stopped (%s): %w", from, path, err))
	}
	n, to, stages, err := r.readBack(ctx, w, moved, acked, t0)
	if err != nil {
		return failed(t0, fmt.Errorf("after node %s stopped: %w", from, err))
	}
	head := []Stage{{Name: "not-ready", Samples: []time.Duration{notReady.Sub(t0)}}}
	if !tainted.IsZero() {
		head = append(head, Stage{Name: "tainted", Samples: []time.Duration{tainted.Sub(t0)}})
	}
	stages = append(head, stages...)
	return Check{Outcome: Works, Took: stages[len(stages)-1].Samples[0], Stages: stages,
		Reason: fmt.Sprintf("node %s stopped (%s); its workloads %s; %s; %d acknowledged records intact on %s; timers: %s",
			from, nf.StopCommand, verified, path, n, to, r.timers(ctx, notReady.Sub(t0), nf.OutOfService))}
}

// timers says which Kubernetes timers bound a node failure's time: the
// node-monitor grace as the cluster configures it where it can be read
// (kube-controller-manager's flags in its pod), else the default and what
// was seen; the pod eviction and the force detach, and whether they were
// waited for.
func (r *run) timers(ctx context.Context, seenNotReady time.Duration, outOfService bool) string {
	grace := fmt.Sprintf("node-monitor grace: not readable from the cluster (no kube-controller-manager pod in kube-system, or not allowed to list it): the default is %s; this node was NotReady %s after the stop, so here it is at most that",
		defaultNodeGrace, seenNotReady.Round(100*time.Millisecond))
	if v := r.controllerFlag(ctx, "--node-monitor-grace-period"); v != "" {
		grace = fmt.Sprintf("node-monitor grace %s (kube-controller-manager's --node-monitor-grace-period); NotReady %s after the stop", v, seenNotReady.Round(100*time.Millisecond))
	}
	eviction := fmt.Sprintf("pod eviction (the not-ready/unreachable toleration, %d s by default) not waited for: storbench deleted the pod", defaultEvictionSec)
	detach := fmt.Sprintf("force detach (%s after the pod's deletion on an unhealthy node) bounded the time", forceDetachTimer)
	if outOfService {
		detach = fmt.Sprintf("the %s force detach not waited for: the out-of-service taint detaches at once", forceDetachTimer)
	}
	return grace + "; " + eviction + "; " + detach
}

// controllerFlag reads a flag of the kube-controller-manager pod in
// kube-system (kubeadm's and most distributions' static pod); "" when
// there is none or it cannot be read (k3s runs it inside its server).
func (r *run) controllerFlag(ctx context.Context, flag string) string {
	pods, err := r.c.Client.CoreV1().Pods("kube-system").List(ctx, metav1.ListOptions{LabelSelector: "component=kube-controller-manager"})
	if err != nil {
		return ""
	}
	for _, p := range pods.Items {
		for _, c := range p.Spec.Containers {
			for _, a := range append(slices.Clone(c.Command), c.Args...) {
				if v, ok := strings.CutPrefix(a, flag+"="); ok {
					return v
				}
			}
		}
	}
	return ""
}

// waitNodeReady watches a node until its Ready condition is True (ready)
// or not True, and returns when that was seen.
func (r *run) waitNodeReady(ctx context.Context, node string, ready bool, timeout time.Duration) (time.Time, error) {
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	want := "Ready"
	if !ready {
		want = "NotReady"
	}
	for {
		list, err := r.c.Client.CoreV1().Nodes().List(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node).String()})
		if err != nil {
			return time.Time{}, fmt.Errorf("node %s not %s: %w", node, want, err)
		}
		if len(list.Items) == 1 && kubekit.NodeReady(list.Items[0]) == ready {
			return time.Now(), nil
		}
		w, err := r.c.Client.CoreV1().Nodes().Watch(wctx, metav1.ListOptions{FieldSelector: fields.OneTermEqualSelector("metadata.name", node).String(),
			ResourceVersion: list.ResourceVersion})
		if err != nil {
			return time.Time{}, fmt.Errorf("node %s not %s: %w", node, want, err)
		}
		for ev := range w.ResultChan() {
			if n, ok := ev.Object.(*corev1.Node); ok && ev.Type != watch.Deleted && kubekit.NodeReady(*n) == ready {
				w.Stop()
				return time.Now(), nil
			}
		}
		w.Stop()
		if wctx.Err() != nil {
			if ctx.Err() != nil {
				return time.Time{}, ctx.Err()
			}
			return time.Time{}, fmt.Errorf("node %s not %s within %s", node, want, timeout)
		}
	}
}

// setOutOfService adds or removes the out-of-service taint, marked with
// the run's annotation (kubekit.SetOutOfService), and keeps r.tainted.
func (r *run) setOutOfService(ctx context.Context, node string, on bool) error {
	if on {
		r.tainted = append(r.tainted, node)
	}
	if err := kubekit.SetOutOfService(ctx, r.c.Client, node, r.runID, on); err != nil {
		return fmt.Errorf("out-of-service taint on %s (on=%t): %w", node, on, err)
	}
	if !on {
		r.tainted = slices.DeleteFunc(r.tainted, func(s string) bool { return s == node })
	}
	return nil
}

// restoreNode undoes a node failure: the taint removed, the node started
// with the user's command and waited for until Ready; without a start
// command, the run's pods left on it are force-deleted (the node is dead:
// nothing runs them) and the user told how to bring it back.
func (r *run) restoreNode(ctx context.Context, node string) (errs []string) {
	if err := r.setOutOfService(ctx, node, false); err != nil {
		errs = append(errs, err.Error()+" (kubectl taint nodes "+node+" "+corev1.TaintNodeOutOfService+"-)")
	}
	nf := r.o.NodeFailure
	if nf != nil && nf.Start != nil {
		if err := nf.Start(ctx, node); err != nil {
			errs = append(errs, fmt.Sprintf("starting node %s: %v", node, err))
		} else if _, err := r.waitNodeReady(ctx, node, true, 2*time.Minute); err != nil {
			errs = append(errs, err.Error())
		}
		if len(errs) > 0 {
			return append(errs, fmt.Sprintf("node %s keeps storbench's record of the stop (%s): storbench cleanup --k8s --run %s starts it again", node, kubekit.AnnotationStoppedBy, r.runID))
		}
	} else {
		hint := "start its kubelet again (on k3s: systemctl start k3s-agent)"
		if nf != nil && nf.StartHint != "" {
			hint = nf.StartHint
		}
		r.notes = append(r.notes, fmt.Sprintf("node %s was stopped for the node-failure check and is not started by storbench: %s", node, hint))
		r.forceDeletePodsOn(ctx, node)
	}
	if err := kubekit.SetStopped(ctx, r.c.Client, node, r.runID, kubekit.NodeStart{}, false); err != nil {
		errs = append(errs, fmt.Sprintf("removing the record that this run stopped node %s: %v (kubectl annotate node %s %s-)", node, err, node, kubekit.AnnotationStoppedBy))
	} else if nf != nil && nf.ForgetStop != nil {
		nf.ForgetStop(r.runID, node)
	}
	return errs
}

// forceDeletePodsOn removes the run's pods bound to a node that will not
// come back by itself.
func (r *run) forceDeletePodsOn(ctx context.Context, node string) {
	pods, err := r.c.Client.CoreV1().Pods(r.ns).List(ctx, metav1.ListOptions{LabelSelector: kubekit.Selector(r.runID)})
	if err != nil {
		return
	}
	zero := int64(0)
	for _, p := range pods.Items {
		if p.Spec.NodeName == node {
			r.c.Client.CoreV1().Pods(r.ns).Delete(ctx, p.Name, metav1.DeleteOptions{GracePeriodSeconds: &zero})
		}
	}
}
