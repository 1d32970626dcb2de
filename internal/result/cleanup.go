package result

import (
	"fmt"
	"time"
)

// What storbench cleanup finds and does: on this host (orphaned runs), in a
// cluster (pods, PVCs, released volumes) and on hosts reached over SSH
// (work directories). internal/orphan, internal/runner/kube and
// internal/runner/ssh find them; internal/storbench gathers them into a
// LocalCleanup, KubeCleanup or SSHCleanup.

// OrphanedRun is a run stored as running whose storbench process is gone,
// and the work directories it left.
type OrphanedRun struct {
	ID string `json:"run_id"`
	// Why its process is taken to be gone.
	Why  string        `json:"why"`
	Dirs []OrphanedDir `json:"work_dirs"`
	// Marked is true once the store records the run as abandoned.
	Marked bool `json:"marked"`
	// Stopped lists the processes (fio jobs orphaned with the run's
	// storbench) found working in its work directories and killed.
	Stopped []int `json:"stopped_pids,omitempty"`
	// Places are the run's work directories on local directory targets,
	// there or removed already: an orphaned fio keeps a removed one as its
	// working directory.
	Places []string `json:"-"`
}

// OrphanedDir is one orphaned run's work directory on one local target.
type OrphanedDir struct {
	Path  string   `json:"path"`
	Files []string `json:"files"`
	// Kept says why the directory is left alone (something in it is not
	// storbench's); empty when it is removed or would be.
	Kept    string `json:"kept,omitempty"`
	Removed bool   `json:"removed"`
}

// LocalCleanup is what a cleanup did on this host; its JSON is what
// storbench cleanup --output json prints.
type LocalCleanup struct {
	DryRun bool          `json:"dry_run"`
	Runs   []OrphanedRun `json:"abandoned_runs"`
}

// KubeObject is a namespaced object storbench created: a "pod" or a "pvc".
type KubeObject struct {
	Kind      string    `json:"kind"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	RunID     string    `json:"run_id,omitempty"`
	Target    string    `json:"target,omitempty"`
	Created   time.Time `json:"created,omitzero"`
	// Volume is the PV a PVC is bound to.
	Volume string `json:"volume,omitempty"`
}

func (o KubeObject) String() string { return fmt.Sprintf("%s %s/%s", o.Kind, o.Namespace, o.Name) }

// ReleasedVolume is a PV a Retain class kept after storbench's PVC went.
type ReleasedVolume struct {
	Name    string `json:"name"`
	Class   string `json:"storage_class"`
	Claim   string `json:"claim"`
	Phase   string `json:"phase"`
	Command string `json:"command"`
}

// KubeCleanup is what a Kubernetes cleanup found and did; its JSON is what
// storbench cleanup --k8s --output json prints.
type KubeCleanup struct {
	DryRun     bool             `json:"dry_run"`
	Namespace  string           `json:"namespace"` // "" for all
	Found      []KubeObject     `json:"found"`
	Deleted    []KubeObject     `json:"deleted"`
	Failed     []KubeFailure    `json:"failed"`
	Volumes    []ReleasedVolume `json:"released_volumes"`
	Namespaces []string         `json:"deleted_namespaces,omitempty"`
	// Notes are problems that did not stop the cleanup.
	Notes []string `json:"notes,omitempty"`
}

// KubeFailure is an object that could not be deleted.
type KubeFailure struct {
	KubeObject
	Error string `json:"error"`
}

// LeftoverDir is a work directory a run left on a host reached over SSH.
type LeftoverDir struct {
	Host  string   `json:"host"`
	Dir   string   `json:"dir"`
	RunID string   `json:"run_id"`
	Files []string `json:"files"`
	// Why the run is over (its storbench process is gone).
	Why string `json:"why,omitempty"`
	// Kept says why the directory is left alone; empty when it is
	// removed or would be.
	Kept    string `json:"kept,omitempty"`
	Removed bool   `json:"removed"`
}

// SSHCleanup is what a cleanup did on hosts reached over SSH; its JSON is
// what storbench cleanup --ssh --output json prints.
type SSHCleanup struct {
	DryRun  bool               `json:"dry_run"`
	Targets []SSHCleanupTarget `json:"targets"`
}

// SSHCleanupTarget is one target directory on one host: storbench's work
// directories found there, or why it could not be looked at.
type SSHCleanupTarget struct {
	Target string        `json:"target"`
	Error  string        `json:"error,omitempty"`
	Dirs   []LeftoverDir `json:"work_dirs"`
}
