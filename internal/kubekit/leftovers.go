package kubekit

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// DeleteOutcome is what deleting a set of objects achieved.
type DeleteOutcome struct {
	Deleted []result.KubeObject
	// Failed maps objects that could not be deleted, or did not go within
	// the timeout, to why.
	Failed map[result.KubeObject]error
}

// Err joins the failures, naming each object, or returns nil.
func (d DeleteOutcome) Err() error {
	if len(d.Failed) == 0 {
		return nil
	}
	var keys []result.KubeObject
	for o := range d.Failed {
		keys = append(keys, o)
	}
	sort.Slice(keys, func(i, j int) bool { return keys[i].String() < keys[j].String() })
	var errs []error
	for _, o := range keys {
		errs = append(errs, fmt.Errorf("%s not deleted: %w", o, d.Failed[o]))
	}
	return errors.Join(errs...)
}

// DeleteObjects deletes pods first (a PVC in use cannot go before its pod),
// then PVCs, and waits up to timeout, or ctx's deadline, for all of them to
// be gone.
func DeleteObjects(ctx context.Context, client kubernetes.Interface, objs []result.KubeObject, timeout time.Duration) DeleteOutcome {
	out := DeleteOutcome{Failed: map[result.KubeObject]error{}}
	grace := int64(5)
	bg := metav1.DeletePropagationBackground
	var pending []result.KubeObject
	for _, kind := range []string{"pod", "pvc"} {
		for _, o := range objs {
			if o.Kind != kind {
				continue
			}
			var err error
			switch o.Kind {
			case "pod":
				err = client.CoreV1().Pods(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{GracePeriodSeconds: &grace, PropagationPolicy: &bg})
			case "pvc":
				err = client.CoreV1().PersistentVolumeClaims(o.Namespace).Delete(ctx, o.Name, metav1.DeleteOptions{PropagationPolicy: &bg})
			default:
				err = fmt.Errorf("unknown kind %q", o.Kind)
			}
			switch {
			case err == nil:
				pending = append(pending, o)
			case apierrors.IsNotFound(err):
				out.Deleted = append(out.Deleted, o)
			default:
				out.Failed[o] = err
			}
		}
	}
	wctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tick := time.NewTicker(pollInterval)
	defer tick.Stop()
	for len(pending) > 0 {
		var still []result.KubeObject
		for _, o := range pending {
			gone, err := isGone(wctx, client, o)
			switch {
			case gone:
				out.Deleted = append(out.Deleted, o)
			case err != nil && wctx.Err() == nil:
				out.Failed[o] = err
			default:
				still = append(still, o)
			}
		}
		pending = still
		if len(pending) == 0 {
			break
		}
		select {
		case <-wctx.Done():
			for _, o := range pending {
				out.Failed[o] = fmt.Errorf("still present %s after deletion%s", timeoutWords(ctx, timeout), stuckReason(context.WithoutCancel(ctx), client, o))
			}
			return out
		case <-tick.C:
		}
	}
	return out
}

func timeoutWords(ctx context.Context, timeout time.Duration) string {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) < timeout {
		return "when the cleanup time ran out"
	}
	return fmt.Sprintf("%s", timeout)
}

func isGone(ctx context.Context, client kubernetes.Interface, o result.KubeObject) (bool, error) {
	var err error
	switch o.Kind {
	case "pod":
		_, err = client.CoreV1().Pods(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	case "pvc":
		_, err = client.CoreV1().PersistentVolumeClaims(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{})
	}
	if apierrors.IsNotFound(err) {
		return true, nil
	}
	return false, err
}

// stuckReason names the finalizers holding an object, for the report.
func stuckReason(ctx context.Context, client kubernetes.Interface, o result.KubeObject) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	var meta metav1.Object
	switch o.Kind {
	case "pod":
		if p, err := client.CoreV1().Pods(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
			meta = p
		}
	case "pvc":
		if p, err := client.CoreV1().PersistentVolumeClaims(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err == nil {
			meta = p
		}
	}
	if meta == nil || len(meta.GetFinalizers()) == 0 {
		return ""
	}
	return fmt.Sprintf(" (finalizers: %s)", strings.Join(meta.GetFinalizers(), ", "))
}

// Selector selects storbench's objects, all runs or one.
func Selector(runID string) string {
	s := LabelManagedBy + "=" + ManagedBy
	if runID != "" {
		s += "," + LabelRunID + "=" + runID
	}
	return s
}

// FindLeftovers lists the pods and PVCs storbench created, in namespace ns
// ("" for all namespaces), for one run or all.
func FindLeftovers(ctx context.Context, client kubernetes.Interface, ns, runID string) ([]result.KubeObject, error) {
	sel := metav1.ListOptions{LabelSelector: Selector(runID)}
	var out []result.KubeObject
	pods, err := client.CoreV1().Pods(ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	for _, p := range pods.Items {
		out = append(out, result.KubeObject{Kind: "pod", Namespace: p.Namespace, Name: p.Name, RunID: p.Labels[LabelRunID],
			Target: p.Annotations[AnnotationTarget], Created: p.CreationTimestamp.Time})
	}
	pvcs, err := client.CoreV1().PersistentVolumeClaims(ns).List(ctx, sel)
	if err != nil {
		return nil, fmt.Errorf("listing PVCs: %w", err)
	}
	for _, p := range pvcs.Items {
		out = append(out, result.KubeObject{Kind: "pvc", Namespace: p.Namespace, Name: p.Name, RunID: p.Labels[LabelRunID],
			Target: p.Annotations[AnnotationTarget], Created: p.CreationTimestamp.Time, Volume: p.Spec.VolumeName})
	}
	return out, nil
}

// objectNameRE matches objectName's output: storbench-RUNID-N.
var objectNameRE = regexp.MustCompile(`^storbench-\d{8}-\d{6}-[0-9a-f]{4}-\d+$`)

// FindReleasedVolumes lists PVs whose claim was one of storbench's (by name)
// and that their Retain policy keeps.
func FindReleasedVolumes(ctx context.Context, client kubernetes.Interface) ([]result.ReleasedVolume, error) {
	pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, fmt.Errorf("listing PVs: %w", err)
	}
	var out []result.ReleasedVolume
	for _, pv := range pvs.Items {
		ref := pv.Spec.ClaimRef
		if ref == nil || !objectNameRE.MatchString(ref.Name) {
			continue
		}
		if pv.Status.Phase != corev1.VolumeReleased && pv.Status.Phase != corev1.VolumeFailed {
			continue
		}
		out = append(out, result.ReleasedVolume{Name: pv.Name, Class: pv.Spec.StorageClassName, Claim: ref.Namespace + "/" + ref.Name,
			Phase: string(pv.Status.Phase), Command: "kubectl delete pv " + pv.Name})
	}
	return out, nil
}

// pollInterval is how often a wait for the API server looks again.
const pollInterval = 200 * time.Millisecond

// DetachWait bounds how long a deletion waits for a claim's volume to be
// detached before deleting the claim (DeleteObjectsDetached, the class
// checks' own deletion). A healthy node detaches in seconds; one that does
// not (a stopped node, another pod still using the volume there) only
// delays the PV's deletion.
var DetachWait = 20 * time.Second

// DeleteObjectsDetached deletes the pods, waits until they are gone, then
// until no VolumeAttachment names a claim's volume (at most DetachWait;
// not at all when attachments cannot be listed), then deletes the claims,
// and waits for them, all within timeout. A driver refuses to delete a
// volume still attached (Ceph RBD's, the test CSI driver), and the
// provisioner's retries back off to minutes: deleted together with their
// pods, such claims left their PVs Released for a minute and more.
func DeleteObjectsDetached(ctx context.Context, client kubernetes.Interface, objs []result.KubeObject, timeout time.Duration) DeleteOutcome {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var pods, claims []result.KubeObject
	for _, o := range objs {
		if o.Kind == "pod" {
			pods = append(pods, o)
		} else {
			claims = append(claims, o)
		}
	}
	out := DeleteObjects(ctx, client, pods, timeout)
	var pvs []string
	for _, o := range claims {
		if o.Kind != "pvc" {
			continue
		}
		if pvc, err := client.CoreV1().PersistentVolumeClaims(o.Namespace).Get(ctx, o.Name, metav1.GetOptions{}); err == nil && pvc.Spec.VolumeName != "" {
			pvs = append(pvs, pvc.Spec.VolumeName)
		}
	}
	waitDetached(ctx, client, pvs, DetachWait)
	rest := DeleteObjects(ctx, client, claims, timeout)
	out.Deleted = append(out.Deleted, rest.Deleted...)
	maps.Copy(out.Failed, rest.Failed)
	return out
}

// waitDetached waits until no VolumeAttachment names one of pvs, at most
// bound; it gives up at once when attachments cannot be listed.
func waitDetached(ctx context.Context, client kubernetes.Interface, pvs []string, bound time.Duration) {
	if len(pvs) == 0 {
		return
	}
	deadline := time.Now().Add(bound)
	for {
		vas, err := client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{})
		if err != nil {
			return
		}
		attached := false
		for _, va := range vas.Items {
			if n := va.Spec.Source.PersistentVolumeName; n != nil && slices.Contains(pvs, *n) {
				attached = true
				break
			}
		}
		if !attached || time.Now().After(deadline) {
			return
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(pollInterval):
		}
	}
}
