package kubekit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
)

// A pod that names a claim not yet bound is set aside by the scheduler
// ("pod has unbound immediate PersistentVolumeClaims") until the claim
// changes. In kube-scheduler 1.33 (and k3s built on it) the handler that
// takes the pod up again on that change and the scheduler's own copy of
// the claim (its assume cache) are two listeners of one informer, each
// with its own goroutine: on a loaded machine the pod can be tried again
// while the copy still says unbound, and is set aside once more with no
// change left to wake it. It then waits for the scheduler's periodic
// flush of set-aside pods, five minutes, though its claim is bound.
//
// storbench touches such a claim, one it created: an annotation changes,
// the claim's update event takes the pod up again (the volume binding
// plugin's queueing hint queues a pod on any update of a claim it names),
// and by then the copy is current.

// AnnotationRequeued is the annotation storbench sets on a claim it
// created to make the scheduler look again at the pod that uses it; its
// value is when.
const AnnotationRequeued = "storbench.io/requeued-at"

// unboundClaimReason is the volume binding plugin's reason (kube-scheduler
// 1.19 to 1.33) for setting aside a pod whose claim it sees unbound.
const unboundClaimReason = "pod has unbound immediate PersistentVolumeClaims"

// SetAsideForUnboundClaim reports whether the scheduler's last word on pod
// is that it cannot place it because a claim is unbound: PodScheduled
// False, reason Unschedulable, that message.
func SetAsideForUnboundClaim(pod *corev1.Pod) bool {
	if pod == nil || pod.Spec.NodeName != "" {
		return false
	}
	for _, c := range pod.Status.Conditions {
		if c.Type == corev1.PodScheduled {
			return c.Status == corev1.ConditionFalse && c.Reason == corev1.PodReasonUnschedulable &&
				strings.Contains(c.Message, unboundClaimReason)
		}
	}
	return false
}

// TouchClaim sets AnnotationRequeued on the claim (a merge patch of that
// annotation only), which the scheduler sees as an update of the claim.
func TouchClaim(ctx context.Context, client kubernetes.Interface, ns, claim string, now time.Time) error {
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"annotations": map[string]string{
		AnnotationRequeued: now.UTC().Format(time.RFC3339Nano)}}})
	if err != nil {
		return err
	}
	if _, err := client.CoreV1().PersistentVolumeClaims(ns).Patch(ctx, claim, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return fmt.Errorf("touching claim %s/%s so the scheduler looks again: %w", ns, claim, err)
	}
	return nil
}

// Default bounds of a BindingNudge.
const (
	// NudgeGrace is how long a pod may stay set aside after its claim was
	// seen bound before storbench touches the claim: the scheduler backs
	// a pod off for at most 10 s between tries (its default), so a pod
	// still set aside later than that was missed, not backed off.
	NudgeGrace = 12 * time.Second
	// NudgeEvery is the least time between two touches of one claim.
	NudgeEvery = 10 * time.Second
)

// BindingNudge decides, for one pod and its claim, when to touch the
// claim: the pod is set aside for an unbound claim (SetAsideForUnboundClaim)
// though the claim has been bound for Grace, and the last touch is Every
// ago. The zero value uses NudgeGrace and NudgeEvery.
type BindingNudge struct {
	Grace, Every time.Duration
	// Touches counts the touches Due allowed.
	Touches int
	last    time.Time
}

// Due reports whether to touch the claim now, and counts the touch.
// boundAt is when the claim was first seen bound (zero: not yet).
func (n *BindingNudge) Due(pod *corev1.Pod, boundAt, now time.Time) bool {
	grace, every := n.Grace, n.Every
	if grace == 0 {
		grace = NudgeGrace
	}
	if every == 0 {
		every = NudgeEvery
	}
	if boundAt.IsZero() || now.Sub(boundAt) < grace || !SetAsideForUnboundClaim(pod) {
		return false
	}
	if !n.last.IsZero() && now.Sub(n.last) < every {
		return false
	}
	n.last = now
	n.Touches++
	return true
}

// NudgeMessage says what a touch is for, for progress lines and errors.
func NudgeMessage(ns, claim, pod string, boundFor time.Duration) string {
	return fmt.Sprintf("claim %s/%s bound %s ago, but the scheduler still sets pod %s aside for an unbound claim; "+
		"touched the claim (annotation %s) so it looks again", ns, claim, boundFor.Round(time.Second), pod, AnnotationRequeued)
}
