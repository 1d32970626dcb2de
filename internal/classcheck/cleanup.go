package classcheck

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
)

// cleanup undoes everything the run did: nodes it cordoned are uncordoned,
// its snapshots, pods and claims deleted; then it waits for their
// snapshot contents, volumes and attachments to go. It returns what is
// still there (leaks) and notes for the user.
func (r *run) cleanup(ctx context.Context) (leaks, notes []string) {
	for _, n := range r.cordoned {
		if err := r.setUnschedulable(ctx, n, false); err != nil {
			leaks = append(leaks, fmt.Sprintf("node %s still cordoned: %v (kubectl uncordon %s)", n, err, n))
		}
	}
	r.cordoned = nil
	if r.o.CephFailure != nil {
		for _, e := range r.releaseHeld(ctx) {
			leaks = append(leaks, "Ceph: "+e)
		}
	}
	for _, n := range slices.Clone(r.stopped) {
		for _, e := range r.restoreNode(ctx, n) {
			leaks = append(leaks, "node "+n+": "+e)
		}
	}
	r.stopped = nil
	for _, n := range slices.Clone(r.tainted) {
		if err := r.setOutOfService(ctx, n, false); err != nil {
			leaks = append(leaks, fmt.Sprintf("node %s keeps the out-of-service taint: %v (kubectl taint nodes %s %s-)", n, err, n, corev1.TaintNodeOutOfService))
		}
	}
	if r.decl.SnapshotAPI {
		err := r.c.Client.Discovery().RESTClient().Delete().AbsPath(snapshotAPI, "namespaces", r.ns, "volumesnapshots").
			Param("labelSelector", kubekit.Selector(r.runID)).Do(ctx).Error()
		if err != nil && !apierrors.IsNotFound(err) {
			notes = append(notes, "deleting VolumeSnapshots: "+err.Error())
		}
	}
	objs, err := kubekit.FindLeftovers(ctx, r.c.Client, r.ns, r.runID)
	if err != nil {
		notes = append(notes, err.Error())
	}
	if out := kubekit.DeleteObjectsDetached(ctx, r.c.Client, objs, 2*time.Minute); out.Err() != nil {
		notes = append(notes, out.Err().Error())
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		leaks = r.remaining(ctx, &notes)
		if len(leaks) == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return leaks, notes
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// remaining lists what the run created and is still there. Released
// volumes of a Retain class are deleted here (the provisioner keeps their
// storage, which the note says).
func (r *run) remaining(ctx context.Context, notes *[]string) []string {
	var left []string
	if objs, err := kubekit.FindLeftovers(ctx, r.c.Client, r.ns, r.runID); err == nil {
		for _, o := range objs {
			left = append(left, o.String())
		}
	}
	pvs, err := r.c.Client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return append(left, "cannot list PersistentVolumes: "+err.Error())
	}
	ours := map[string]bool{}
	for _, pv := range pvs.Items {
		ref := pv.Spec.ClaimRef
		if ref == nil || ref.Namespace != r.ns || !r.createdClaim(ref.Name) {
			continue
		}
		ours[pv.Name] = true
		if pv.Status.Phase == corev1.VolumeReleased && pv.Spec.PersistentVolumeReclaimPolicy == corev1.PersistentVolumeReclaimRetain && pv.DeletionTimestamp == nil {
			if err := r.c.Client.CoreV1().PersistentVolumes().Delete(ctx, pv.Name, metav1.DeleteOptions{}); err == nil {
				*notes = append(*notes, fmt.Sprintf("deleted the Released PV %s (reclaim policy Retain: its storage is kept by %s)", pv.Name, r.decl.Provisioner))
			}
		}
		left = append(left, fmt.Sprintf("PersistentVolume %s (%s)", pv.Name, pv.Status.Phase))
	}
	if vas, err := r.c.Client.StorageV1().VolumeAttachments().List(ctx, metav1.ListOptions{}); err == nil {
		for _, va := range vas.Items {
			if s := va.Spec.Source.PersistentVolumeName; s != nil && ours[*s] {
				left = append(left, fmt.Sprintf("VolumeAttachment %s (%s on %s)", va.Name, *s, va.Spec.NodeName))
			}
		}
	}
	if r.decl.SnapshotAPI {
		left = append(left, r.remainingSnapshots(ctx)...)
	}
	sort.Strings(left)
	return left
}

func (r *run) remainingSnapshots(ctx context.Context) []string {
	var left []string
	rc := r.c.Client.Discovery().RESTClient()
	raw, err := rc.Get().AbsPath(snapshotAPI, "namespaces", r.ns, "volumesnapshots").Param("labelSelector", kubekit.Selector(r.runID)).DoRaw(ctx)
	var list struct {
		Items []struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
			Spec     struct {
				VolumeSnapshotRef corev1.ObjectReference `json:"volumeSnapshotRef"`
			} `json:"spec"`
		} `json:"items"`
	}
	if err == nil && json.Unmarshal(raw, &list) == nil {
		for _, s := range list.Items {
			left = append(left, "VolumeSnapshot "+r.ns+"/"+s.Metadata.Name)
		}
	}
	list.Items = nil
	raw, err = rc.Get().AbsPath(snapshotAPI, "volumesnapshotcontents").DoRaw(ctx)
	if err == nil && json.Unmarshal(raw, &list) == nil {
		for _, c := range list.Items {
			ref := c.Spec.VolumeSnapshotRef
			if ref.Namespace == r.ns && r.createdSnapshot(ref.Name) {
				left = append(left, "VolumeSnapshotContent "+c.Metadata.Name)
			}
		}
	}
	return left
}

// setUnschedulable cordons or uncordons a node, the cordon marked with
// the run's annotation (kubekit.SetCordon).
func (r *run) setUnschedulable(ctx context.Context, node string, on bool) error {
	if err := kubekit.SetCordon(ctx, r.c.Client, node, r.runID, on); err != nil {
		return fmt.Errorf("cordon %s=%t: %w", node, on, err)
	}
	return nil
}

// createdClaim and createdSnapshot report whether this run created the
// claim or VolumeSnapshot of that name.
func (r *run) createdClaim(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.claims[name]
}

func (r *run) createdSnapshot(name string) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.snapshots[name]
}
