// Package testcsi is a small CSI driver for storbench's own tests: volumes
// that behave like disks (a sparse image file per volume on the shared
// filesystem, attached as a loop device, ext4 or raw block), with
// snapshots, clones and expansion, in modes that keep their promises
// (local, shared) and modes that break one (bad-snapshot, stuck-expand,
// root-only), so tests can prove a broken capability is caught.
//
// One process serves one role: the controller (Identity and Controller
// services, beside the external sidecars) or the node plugin of one node
// (Identity and Node services, registered with that node's kubelet through
// its plugins_registry directory). All processes share one state directory;
// nothing here talks to the network. See docs/testcsi.md.
package testcsi

import (
	"fmt"
	"time"
)

// DefaultName is the driver's name (CSIDriver, StorageClass provisioner).
const DefaultName = "testcsi.storbench.io"

// TopologyKey is the topology segment every node reports: its node ID.
// Local volumes are accessible only where the key equals their node.
const TopologyKey = "topology.testcsi.storbench.io/node"

// ModeParameter is the StorageClass parameter that chooses a volume's Mode.
const ModeParameter = "mode"

// Mode is how a volume behaves; a StorageClass chooses it with its "mode"
// parameter and every later operation on the volume follows it.
type Mode string

const (
	// ModeLocal pins a volume to the node it was made for: its topology
	// names that node and NodeStage refuses every other.
	ModeLocal Mode = "local"
	// ModeShared volumes attach on any node, one at a time, as a network
	// volume would.
	ModeShared Mode = "shared"
	// ModeBadSnapshot is shared, but a restore from a snapshot returns its
	// source volume's current data instead of the snapshot's.
	ModeBadSnapshot Mode = "bad-snapshot"
	// ModeStuckExpand is shared, but ControllerExpandVolume never completes.
	ModeStuckExpand Mode = "stuck-expand"
	// ModeRootOnly is shared, but ignores the fsGroup the kubelet delegates
	// to it: only root can write its volumes.
	ModeRootOnly Mode = "root-only"
	// ModeNoFsync is shared, but publishes its volume through an overlay
	// mounted volatile: fsync returns at once and writes nothing.
	ModeNoFsync Mode = "no-fsync"
	// ModeNetfs volumes are directories of a network filesystem's share
	// (an SFTP server: StorageClass parameters ServerParameter and
	// ShareParameter), usable from many nodes at once: each node mounts
	// the volume itself with sshfs, so two nodes are two clients of one
	// export, as NFS clients are. No snapshots, clones or block access.
	ModeNetfs Mode = "netfs"
	// ModeCephFS volumes are directories of a CephFS (StorageClass
	// parameters CephConfParameter, CephPathParameter and ShareParameter),
	// usable from many nodes at once: each node mounts the volume itself
	// with its own ceph-fuse client, from its own network, as a
	// hyperconverged cluster's nodes do. No snapshots, clones or block access.
	ModeCephFS Mode = "cephfs"
)

// Modes lists every mode, capable ones first.
var Modes = []Mode{ModeLocal, ModeShared, ModeBadSnapshot, ModeStuckExpand, ModeRootOnly, ModeNoFsync, ModeNetfs, ModeCephFS}

// ParseMode returns the mode named s.
func ParseMode(s string) (Mode, error) {
	for _, m := range Modes {
		if string(m) == s {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q (want one of %v)", s, Modes)
}

// Role is what one driver process serves.
type Role string

const (
	RoleController Role = "controller"
	RoleNode       Role = "node"
)

// Config is one driver process's settings.
type Config struct {
	Name    string // driver name; DefaultName when empty
	Version string // vendor version reported to sidecars and the kubelet
	Role    Role
	// NodeID is the node this node plugin serves (its Kubernetes node name).
	NodeID string
	// StateDir holds every volume's image and metadata; all processes of
	// one driver share it.
	StateDir string
	// CapacityBytes bounds the sum of all volumes' sizes (GetCapacity and
	// CreateVolume's ResourceExhausted); 0 means 64 GiB.
	CapacityBytes int64
	// MaxVolumesPerNode is what NodeGetInfo reports (CSINode's
	// allocatable count); 0 means 8. It also bounds the loop devices one
	// node plugin holds.
	MaxVolumesPerNode int64
	// DefaultMode applies when a StorageClass names none; ModeShared when
	// empty.
	DefaultMode Mode
	// StuckExpandWait bounds how long a stuck expansion holds a request
	// when the caller set no deadline; 0 means 30 s. The expansion never
	// succeeds either way.
	StuckExpandWait time.Duration
}

func (c Config) withDefaults() Config {
	if c.Name == "" {
		c.Name = DefaultName
	}
	if c.Version == "" {
		c.Version = "0.1.0"
	}
	if c.CapacityBytes == 0 {
		c.CapacityBytes = 64 << 30
	}
	if c.MaxVolumesPerNode == 0 {
		c.MaxVolumesPerNode = 8
	}
	if c.DefaultMode == "" {
		c.DefaultMode = ModeShared
	}
	if c.StuckExpandWait == 0 {
		c.StuckExpandWait = 30 * time.Second
	}
	return c
}
