package kube

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// CleanOptions say which of the k8s kind's leftovers Kind.Clean removes.
type CleanOptions struct {
	// RunID cleans up only what this run left.
	RunID string
	// OlderThan leaves objects younger than this alone (a live run's).
	OlderThan time.Duration
	// DryRun lists what would be deleted and deletes nothing.
	DryRun bool
	// DeleteNamespace also deletes the namespaces storbench created, once
	// they hold no pods or PVCs.
	DeleteNamespace bool
	// Timeout bounds waiting for the objects to go.
	Timeout time.Duration
	// StartStopped brings back a node a killed run's node-failure check
	// stopped (MarkStopped), and notes what it did; the library gives it
	// (the start command runs over SSH with what the run kept on this
	// machine). Nil starts nothing: the notes say the node is down.
	StartStopped func(ctx context.Context, c *kubekit.Cluster, m kubekit.NodeMark, rep *result.KubeCleanup)
}

// Clean deletes, in k's cluster (its Cluster.Namespace, or every
// namespace), the pods, PVCs and VolumeSnapshots storbench's labels mark,
// after wiping the test file each pod left, lifts the cordons and
// out-of-service taints its annotations mark on nodes, waits for the
// objects to go, and lists the PersistentVolumes a Retain class kept.
// Deleting finishes even when ctx is cancelled: leftovers are what it
// exists to remove. Objects that could not be deleted are in the report's
// Failed, not an error. A cluster that cannot be reached with the
// configuration named is a *runner.RefusedError.
func (k Kind) Clean(ctx context.Context, req CleanOptions) (*result.KubeCleanup, error) {
	c, err := kubekit.Connect(k.Cluster)
	if err != nil {
		return nil, &runner.RefusedError{Err: err}
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), req.Timeout+30*time.Second)
	defer cancel()

	ns := k.Cluster.Namespace
	rep := &result.KubeCleanup{DryRun: req.DryRun, Namespace: ns, Found: []result.KubeObject{}, Deleted: []result.KubeObject{},
		Failed: []result.KubeFailure{}, Volumes: []result.ReleasedVolume{}}
	objs, err := kubekit.FindLeftovers(wctx, c.Client, ns, req.RunID)
	if apierrors.IsForbidden(err) && ns == "" {
		rep.Namespace = c.Namespace()
		objs, err = kubekit.FindLeftovers(wctx, c.Client, rep.Namespace, req.RunID)
	}
	if err != nil {
		return nil, fmt.Errorf("cleanup on %s: %w", c.Host, err)
	}
	for _, o := range objs {
		if req.OlderThan > 0 && time.Since(o.Created) < req.OlderThan {
			continue
		}
		rep.Found = append(rep.Found, o)
	}
	snaps, err := findSnapshots(wctx, c, rep.Namespace, req, rep) // cleanup_kube_marks.go
	if err != nil {
		rep.Notes = append(rep.Notes, "could not look for storbench's VolumeSnapshots: "+err.Error())
	}
	cleanupNodeMarks(wctx, c, req, rep)
	if !req.DryRun {
		deleteSnapshots(wctx, c, snaps, rep)
	}
	if !req.DryRun && len(objs) > 0 {
		for _, o := range rep.Found {
			if o.Kind != "pod" {
				continue
			}
			// A killed run's fio may still run; a Retain volume would keep the file.
			if err := WipePod(wctx, c, o.Namespace, o.Name); err != nil {
				rep.Notes = append(rep.Notes, err.Error())
			}
		}
		var podsAndClaims []result.KubeObject
		for _, o := range rep.Found {
			if o.Kind == "pod" || o.Kind == "pvc" {
				podsAndClaims = append(podsAndClaims, o)
			}
		}
		res := kubekit.DeleteObjectsDetached(wctx, c.Client, podsAndClaims, req.Timeout)
		rep.Deleted = append(rep.Deleted, res.Deleted...)
		for o, e := range res.Failed {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: o, Error: e.Error()})
		}
		sort.Slice(rep.Failed, func(i, j int) bool { return rep.Failed[i].String() < rep.Failed[j].String() })
	}
	k.cleanRBD(wctx, c, rep.Namespace, req, rep) // kindclean_rbd.go: k8s:rbd runs' Secrets and images
	if vols, err := kubekit.FindReleasedVolumes(wctx, c.Client); err == nil {
		rep.Volumes = append(rep.Volumes, vols...)
	} else if !apierrors.IsForbidden(err) {
		return nil, err
	}
	if req.DeleteNamespace && !req.DryRun && len(rep.Failed) == 0 {
		names, err := deleteNamespaces(wctx, c, ns)
		if err != nil {
			return nil, err
		}
		rep.Namespaces = names
	}
	return rep, nil
}

// deleteNamespaces removes namespaces storbench created (labelled) that hold
// no pods or PVCs any more.
func deleteNamespaces(ctx context.Context, c *kubekit.Cluster, only string) ([]string, error) {
	list, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kubekit.Selector("")})
	if err != nil {
		return nil, fmt.Errorf("listing storbench's namespaces: %w", err)
	}
	var out []string
	for _, ns := range list.Items {
		if only != "" && ns.Name != only {
			continue
		}
		pods, err := c.Client.CoreV1().Pods(ns.Name).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return out, err
		}
		pvcs, err := c.Client.CoreV1().PersistentVolumeClaims(ns.Name).List(ctx, metav1.ListOptions{Limit: 1})
		if err != nil {
			return out, err
		}
		if len(pods.Items) > 0 || len(pvcs.Items) > 0 {
			continue // someone else uses it
		}
		if err := c.Client.CoreV1().Namespaces().Delete(ctx, ns.Name, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return out, fmt.Errorf("deleting namespace %s: %w", ns.Name, err)
		}
		out = append(out, ns.Name)
	}
	return out, nil
}

// runStarted reads the time a run ID begins with (NewRunID's
// 20060102-150405); false for an ID that does not.
func runStarted(runID string) (time.Time, bool) {
	if len(runID) < 15 {
		return time.Time{}, false
	}
	t, err := time.Parse("20060102-150405", runID[:15])
	return t, err == nil
}

// youngerThan reports whether a run started less than d ago (a live run's
// change, which --older-than leaves alone). A run ID without a time counts
// as old.
func youngerThan(runID string, d time.Duration) bool {
	t, ok := runStarted(runID)
	return d > 0 && ok && time.Since(t) < d
}

// cleanupNodeMarks starts the nodes killed runs stopped (req.StartStopped),
// lifts the cordons and out-of-service taints they left on nodes (found by
// storbench's annotations), and says so in the report's notes; what it
// could not lift is a failure.
func cleanupNodeMarks(ctx context.Context, c *kubekit.Cluster, req CleanOptions, rep *result.KubeCleanup) {
	marks, err := kubekit.FindNodeMarks(ctx, c.Client, req.RunID)
	if err != nil {
		rep.Notes = append(rep.Notes, "could not look for cordons and taints storbench left on nodes: "+err.Error())
		return
	}
	// A stopped node is started first: its pods go, and its taint is
	// lifted, once it is back.
	sort.SliceStable(marks, func(i, j int) bool {
		return marks[i].What == kubekit.MarkStopped && marks[j].What != kubekit.MarkStopped
	})
	for _, m := range marks {
		if youngerThan(m.RunID, req.OlderThan) {
			continue
		}
		if m.What == kubekit.MarkStopped {
			if req.StartStopped != nil {
				req.StartStopped(ctx, c, m, rep)
			} else {
				rep.Notes = append(rep.Notes, fmt.Sprintf("node %s was stopped by storbench run %s: start it yourself if it is still down", m.Node, m.RunID))
			}
			continue
		}
		if req.DryRun {
			rep.Notes = append(rep.Notes, fmt.Sprintf("would lift the %s storbench run %s left on node %s", m.What, m.RunID, m.Node))
			continue
		}
		if err := kubekit.UndoNodeMark(ctx, c.Client, m); err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "node", Name: m.Node, RunID: m.RunID}, Error: err.Error()})
			rep.Notes = append(rep.Notes, fmt.Sprintf("could NOT lift the %s storbench run %s left on node %s: %v", m.What, m.RunID, m.Node, err))
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("lifted the %s storbench run %s left on node %s", m.What, m.RunID, m.Node))
	}
}

// findSnapshots adds the VolumeSnapshots storbench's labels mark to the
// report's Found (kind "volumesnapshot").
func findSnapshots(ctx context.Context, c *kubekit.Cluster, ns string, req CleanOptions, rep *result.KubeCleanup) ([]kubekit.Snapshot, error) {
	snaps, err := kubekit.FindSnapshots(ctx, c.Client, ns, req.RunID)
	if err != nil {
		return nil, err
	}
	var out []kubekit.Snapshot
	for _, s := range snaps {
		if youngerThan(s.RunID, req.OlderThan) {
			continue
		}
		out = append(out, s)
		rep.Found = append(rep.Found, result.KubeObject{Kind: "volumesnapshot", Namespace: s.Namespace, Name: s.Name, RunID: s.RunID})
	}
	return out, nil
}

// deleteSnapshots deletes them (their contents go as their class's
// deletionPolicy says) before the claims they were taken of.
func deleteSnapshots(ctx context.Context, c *kubekit.Cluster, snaps []kubekit.Snapshot, rep *result.KubeCleanup) {
	for _, s := range snaps {
		o := result.KubeObject{Kind: "volumesnapshot", Namespace: s.Namespace, Name: s.Name, RunID: s.RunID}
		if err := kubekit.DeleteSnapshot(ctx, c.Client, s); err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: o, Error: err.Error()})
			continue
		}
		rep.Deleted = append(rep.Deleted, o)
		if s.Content != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s's content %s goes as its VolumeSnapshotClass's deletionPolicy says (Retain keeps it: kubectl delete volumesnapshotcontent %s)", s, s.Content, s.Content))
		}
	}
}
