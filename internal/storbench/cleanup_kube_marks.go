package storbench

import (
	"context"
	"fmt"
	"sort"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
)

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

// cleanupNodeMarks starts the nodes killed runs stopped, and lifts the
// cordons and out-of-service taints they left on nodes (found by storbench's annotations), and says so in
// the report's notes; what it could not lift is a failure.
func cleanupNodeMarks(ctx context.Context, c *kube.Cluster, req KubeCleanupRequest, rep *result.KubeCleanup) {
	marks, err := kube.FindNodeMarks(ctx, c.Client, req.RunID)
	if err != nil {
		rep.Notes = append(rep.Notes, "could not look for cordons and taints storbench left on nodes: "+err.Error())
		return
	}
	// A stopped node is started first: its pods go, and its taint is
	// lifted, once it is back.
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].What == kube.MarkStopped && marks[j].What != kube.MarkStopped })
	for _, m := range marks {
		if youngerThan(m.RunID, req.OlderThan) {
			continue
		}
		if m.What == kube.MarkStopped {
			startStoppedNode(ctx, c, req, m, rep) // cleanup_kube_stopped.go
			continue
		}
		if req.DryRun {
			rep.Notes = append(rep.Notes, fmt.Sprintf("would lift the %s storbench run %s left on node %s", m.What, m.RunID, m.Node))
			continue
		}
		if err := kube.UndoNodeMark(ctx, c.Client, m); err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "node", Name: m.Node, RunID: m.RunID}, Error: err.Error()})
			rep.Notes = append(rep.Notes, fmt.Sprintf("could NOT lift the %s storbench run %s left on node %s: %v", m.What, m.RunID, m.Node, err))
			continue
		}
		rep.Notes = append(rep.Notes, fmt.Sprintf("lifted the %s storbench run %s left on node %s", m.What, m.RunID, m.Node))
	}
}

// findSnapshots adds the VolumeSnapshots storbench's labels mark to the
// report's Found (kind "volumesnapshot").
func findSnapshots(ctx context.Context, c *kube.Cluster, ns string, req KubeCleanupRequest, rep *result.KubeCleanup) ([]kube.Snapshot, error) {
	snaps, err := kube.FindSnapshots(ctx, c.Client, ns, req.RunID)
	if err != nil {
		return nil, err
	}
	var out []kube.Snapshot
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
func deleteSnapshots(ctx context.Context, c *kube.Cluster, snaps []kube.Snapshot, rep *result.KubeCleanup) {
	for _, s := range snaps {
		o := result.KubeObject{Kind: "volumesnapshot", Namespace: s.Namespace, Name: s.Name, RunID: s.RunID}
		if err := kube.DeleteSnapshot(ctx, c.Client, s); err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: o, Error: err.Error()})
			continue
		}
		rep.Deleted = append(rep.Deleted, o)
		if s.Content != "" {
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s's content %s goes as its VolumeSnapshotClass's deletionPolicy says (Retain keeps it: kubectl delete volumesnapshotcontent %s)", s, s.Content, s.Content))
		}
	}
}
