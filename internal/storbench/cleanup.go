package storbench

import (
	"context"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
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
	Cluster kubekit.ConnectOptions
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
	// Ceph also lets back the OSDs killed runs held down (the
	// ceph-osd-failure check), with the ceph CLI on this host (CephConf,
	// else CEPH_CONF).
	Ceph     bool
	CephConf string
	// CephToolbox, when set, is the namespace of Rook's toolbox whose
	// ceph CLI is used instead (kubekit.RookToolbox).
	CephToolbox string
}

// CleanupKube deletes the pods, PVCs and VolumeSnapshots storbench's
// labels mark, after wiping the test file each pod left, lifts the cordons
// and out-of-service taints its annotations mark on nodes, waits for the
// objects to go, and lists the PersistentVolumes a Retain class kept
// (the k8s kind's Clean). Deleting finishes even when ctx is cancelled:
// leftovers are what it exists to remove. Objects that could not be
// deleted are in the report's Failed, not an error. A cluster that cannot
// be reached with the configuration named is an *RequestError.
func CleanupKube(ctx context.Context, req KubeCleanupRequest) (*result.KubeCleanup, error) {
	if !req.Ceph && (req.CephConf != "" || req.CephToolbox != "") {
		f := FieldCleanupCephConf
		if req.CephToolbox != "" {
			f = FieldCleanupCephToolbox
		}
		return nil, badRequest("%s says how to reach the Ceph whose held-down OSDs %s lets back: set %s too, or leave it out", f, FieldCleanupCeph, FieldCleanupCeph)
	}
	if req.CephConf != "" && req.CephToolbox != "" {
		return nil, badRequest("the ceph CLI on this host (%s) or Rook's toolbox's (%s), not both", FieldCleanupCephConf, FieldCleanupCephToolbox)
	}
	rep, err := kube.Kind{Cluster: req.Cluster}.Clean(ctx, kube.CleanOptions{RunID: req.RunID, OlderThan: req.OlderThan,
		DryRun: req.DryRun, DeleteNamespace: req.DeleteNamespace, Timeout: req.Timeout,
		StartStopped: func(ctx context.Context, c *kubekit.Cluster, m kubekit.NodeMark, rep *result.KubeCleanup) {
			startStoppedNode(ctx, c, req, m, rep) // cleanup_kube_stopped.go
		}})
	if err != nil {
		return nil, groupErr(err)
	}
	if req.Ceph {
		cleanupCephHolds(ctx, req, rep) // classceph.go
	}
	return rep, nil
}
