package storbench

import (
	"context"
	"fmt"
	"sort"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/orphan"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/store"
)

// CleanupRequest says which runs' local leftovers to remove.
type CleanupRequest struct {
	// RunID cleans up only this run (an ID or unique prefix).
	RunID string
	// DryRun finds what would be removed and removes nothing.
	DryRun bool
}

// CleanupLocal finds the runs stored as running whose storbench process is
// gone, removes the work directories they left on local directory targets
// (only those holding nothing but storbench's files) and records them as
// abandoned. Removing finishes even when ctx is cancelled.
//
// A run that is not stored, or a read-only store with something to clean,
// gives a nil report and the error. When removing or recording fails, the
// report says what was done and the error says what failed.
func CleanupLocal(ctx context.Context, st store.Store, req CleanupRequest) (*result.LocalCleanup, error) {
	runs, err := orphan.Find(ctx, st, proc.Reader{}, req.RunID)
	if err != nil {
		return nil, err
	}
	if runs == nil {
		runs = []result.OrphanedRun{}
	}
	if st.ReadOnly() && !req.DryRun && len(runs) > 0 {
		// Files removed from a run the store cannot then mark would look
		// like a run still holding them.
		return nil, &store.ReadOnlyError{Path: st.Path()}
	}
	rep := &result.LocalCleanup{DryRun: req.DryRun, Runs: runs}
	if req.DryRun {
		return rep, nil
	}
	if err := orphan.Clean(context.WithoutCancel(ctx), st, runs); err != nil {
		return rep, fmt.Errorf("cleanup: %w", err)
	}
	return rep, nil
}

// KubeCleanupRequest says which Kubernetes leftovers to remove.
type KubeCleanupRequest struct {
	// Cluster names the cluster; its Namespace limits the cleanup to one
	// namespace ("" is all namespaces, or the context's namespace where
	// listing them all is forbidden).
	Cluster kube.ConnectOptions
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
	// StateDir is where the runs on this machine kept the start commands
	// of the nodes they stop; "" is DefaultStateDir(). A stopped node is
	// started only with a command found there.
	StateDir string
}

// CleanupKube deletes the pods, PVCs and VolumeSnapshots storbench's
// labels mark, after wiping the test file each pod left, lifts the cordons
// and out-of-service taints its annotations mark on nodes, waits for the
// objects to go, and lists the PersistentVolumes a Retain class kept. Deleting finishes even when ctx
// is cancelled: leftovers are what it exists to remove. Objects that could
// not be deleted are in the report's Failed, not an error. A cluster that
// cannot be reached with the configuration named is an *RequestError.
func CleanupKube(ctx context.Context, req KubeCleanupRequest) (*result.KubeCleanup, error) {
	c, err := kube.Connect(req.Cluster)
	if err != nil {
		return nil, &RequestError{err}
	}
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), req.Timeout+30*time.Second)
	defer cancel()

	ns := req.Cluster.Namespace
	rep := &result.KubeCleanup{DryRun: req.DryRun, Namespace: ns, Found: []result.KubeObject{}, Deleted: []result.KubeObject{},
		Failed: []result.KubeFailure{}, Volumes: []result.ReleasedVolume{}}
	objs, err := kube.FindLeftovers(wctx, c.Client, ns, req.RunID)
	if apierrors.IsForbidden(err) && ns == "" {
		rep.Namespace = c.Namespace()
		objs, err = kube.FindLeftovers(wctx, c.Client, rep.Namespace, req.RunID)
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
			if err := kube.WipePod(wctx, c, o.Namespace, o.Name); err != nil {
				rep.Notes = append(rep.Notes, err.Error())
			}
		}
		var podsAndClaims []result.KubeObject
		for _, o := range rep.Found {
			if o.Kind == "pod" || o.Kind == "pvc" {
				podsAndClaims = append(podsAndClaims, o)
			}
		}
		res := kube.DeleteObjects(wctx, c.Client, podsAndClaims, req.Timeout)
		rep.Deleted = append(rep.Deleted, res.Deleted...)
		for o, e := range res.Failed {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: o, Error: e.Error()})
		}
		sort.Slice(rep.Failed, func(i, j int) bool { return rep.Failed[i].String() < rep.Failed[j].String() })
	}
	if vols, err := kube.FindReleasedVolumes(wctx, c.Client); err == nil {
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
func deleteNamespaces(ctx context.Context, c *kube.Cluster, only string) ([]string, error) {
	list, err := c.Client.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: kube.Selector("")})
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
