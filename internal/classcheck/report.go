// Package classcheck qualifies a StorageClass by measuring it on the
// cluster: what the class, its CSI driver and its snapshot classes declare
// (kept apart), then provisioning timed from storbench's own watches of the
// objects, persistence, snapshot and restore, clone, expansion, block mode,
// non-root writes, every node, graceful failover and ReadWriteMany, each
// with its data checked by checksum. Everything it creates carries the
// run's labels and is removed on success, failure and cancellation; what
// could not be removed is reported as a leak.
package classcheck

import (
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Outcome is how a check ended.
type Outcome string

// The outcomes a check can have. A declared capability that does not work
// is Failed, never NotSupportedMeasured.
const (
	Works                Outcome = "works"
	NotSupportedDeclared Outcome = "not supported (declared)"
	NotSupportedMeasured Outcome = "not supported (measured)"
	Failed               Outcome = "failed"
	Skipped              Outcome = "skipped"
)

// Profile chooses how much is measured.
type Profile string

// The profiles: quick by default, full on request.
const (
	Quick Profile = "quick"
	Full  Profile = "full"
)

// Check names, as stored (workload "check:NAME").
const (
	CheckProvisioning     = "provisioning"
	CheckPersistence      = "persistence"
	CheckSnapshot         = "snapshot"
	CheckClone            = "clone"
	CheckExpansionOnline  = "expansion-online"
	CheckExpansionOffline = "expansion-offline"
	CheckBlock            = "block"
	CheckNonRoot          = "non-root"
	CheckEveryNode        = "every-node"
	CheckFailover         = "failover"
	CheckNodeFailure      = "node-failure"
	CheckReadWriteMany    = "read-write-many"
	CheckCleanup          = "cleanup"
)

// Check is one check's answer.
type Check struct {
	Name    string  `json:"name"`
	Outcome Outcome `json:"outcome"`
	// Reason says why (not supported, failed, skipped) or what was seen
	// (works: "node-pinned", the path a failover took).
	Reason string `json:"reason,omitempty"`
	// Took is the check's own time: for works the measured answer (for
	// example the failover time), for failed how long until it failed.
	Took   time.Duration `json:"took_ns"`
	Stages []Stage       `json:"stages,omitempty"`
}

// Stage is one timed step of a check, one sample per volume.
type Stage struct {
	Name    string          `json:"name"`
	Samples []time.Duration `json:"samples_ns"`
}

// Declared is what the cluster's objects say about the class, before
// anything is measured.
type Declared struct {
	Class       string `json:"class"`
	Provisioner string `json:"provisioner"`
	BindingMode string `json:"binding_mode"`
	Reclaim     string `json:"reclaim_policy"`
	Expansion   bool   `json:"allow_volume_expansion"`
	// CSIDriver is nil when the provisioner has no CSIDriver object (not
	// CSI, or a driver that did not create one).
	CSIDriver *DriverFacts `json:"csi_driver,omitempty"`
	// Nodes lists, per node, whether its CSINode lists the driver and the
	// volume limit it declares.
	Nodes []NodeFacts `json:"nodes,omitempty"`
	// SnapshotClasses are the VolumeSnapshotClasses for the driver.
	SnapshotClasses []string `json:"snapshot_classes,omitempty"`
	// SnapshotAPI is false when the snapshot CRDs are not installed.
	SnapshotAPI bool `json:"snapshot_api"`
}

// DriverFacts is what a CSIDriver object declares.
type DriverFacts struct {
	AttachRequired  bool     `json:"attach_required"`
	FSGroupPolicy   string   `json:"fs_group_policy"`
	PodInfoOnMount  bool     `json:"pod_info_on_mount"`
	StorageCapacity bool     `json:"storage_capacity"`
	LifecycleModes  []string `json:"volume_lifecycle_modes,omitempty"`
}

// NodeFacts is one node's CSINode entry for the driver.
type NodeFacts struct {
	Node string `json:"node"`
	// Driver is true when the node's CSINode lists the driver.
	Driver bool `json:"driver"`
	// VolumeLimit is allocatable.count; 0 when not declared.
	VolumeLimit  int32    `json:"volume_limit,omitempty"`
	TopologyKeys []string `json:"topology_keys,omitempty"`
}

// Report is one qualification.
type Report struct {
	RunID    string    `json:"run_id"`
	Class    string    `json:"class"`
	Profile  Profile   `json:"profile"`
	Started  time.Time `json:"started"`
	Finished time.Time `json:"finished"`
	Declared Declared  `json:"declared"`
	Checks   []Check   `json:"checks"`
	// Leaks are objects cleanup could not remove, named.
	Leaks []string `json:"leaks,omitempty"`
	// Notes are things the user should know that are not failures.
	Notes []string `json:"notes,omitempty"`
	// Apps are the app-fit check's answers and figures, stored as they are.
	Apps []result.Result `json:"-"`
}

// Check returns the named check, or nil.
func (r *Report) Check(name string) *Check {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}
