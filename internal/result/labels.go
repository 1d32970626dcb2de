package result

import (
	"fmt"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
)

// LabelKey names a label: a fact about a result's target, host, conditions
// or checks, stored beside the figures. The runners and the engine write
// them, the analyses and reports read them; both sides name them through
// these constants, never through string literals. Users add labels of
// their own (--label key=value), which are plain strings.
type LabelKey string

// Of returns the label's value in labels, "" when absent.
func (k LabelKey) Of(labels map[string]string) string { return labels[string(k)] }

// In returns the label's value and whether labels has it.
func (k LabelKey) In(labels map[string]string) (string, bool) {
	v, ok := labels[string(k)]
	return v, ok
}

// Set stores v under the label in labels, which must not be nil.
func (k LabelKey) Set(labels map[string]string, v string) { labels[string(k)] = v }

// String returns the key as stored.
func (k LabelKey) String() string { return string(k) }

// The host a target lives on, read by the runner that prepared it.
const (
	LabelHostname LabelKey = "hostname"
	LabelKernel   LabelKey = "kernel"
	LabelArch     LabelKey = "arch"
	LabelCPUModel LabelKey = "cpu_model"
	// LabelMemBytes is memory that can cache the target, supplied by a
	// runner or the user.
	LabelMemBytes LabelKey = "mem_bytes"
)

// The storage under a local target.
const (
	LabelFSType          LabelKey = "fs_type"
	LabelMountPoint      LabelKey = "mount_point"
	LabelMountSource     LabelKey = "mount_source"
	LabelDevice          LabelKey = "device" // the block device holding the target, e.g. "sda1"
	LabelDisk            LabelKey = "disk"   // the whole disk of that device, e.g. "sda"
	LabelDeviceModel     LabelKey = "device_model"
	LabelRotational      LabelKey = "rotational"
	LabelLoopBackingFile LabelKey = "loop_backing_file"
	LabelScheduler       LabelKey = "scheduler"
)

// The links and settings under a target, read from /sys by
// internal/sysfacts on local, SSH and Kubernetes targets alike.
const (
	LabelBus            LabelKey = "bus"              // how the disk is attached: nvme, usb, sd, mmc, virtio, ata, scsi
	LabelPCIeLink       LabelKey = "pcie_link"        // the nearest PCIe link above the disk now, "5 GT/s x1"
	LabelPCIeLinkMax    LabelKey = "pcie_link_max"    // the most that link can do, "8 GT/s x4"
	LabelUSBSpeed       LabelKey = "usb_speed_mbps"   // the USB device's signalling rate
	LabelUSBDriver      LabelKey = "usb_driver"       // uas or usb-storage
	LabelUSBBridge      LabelKey = "usb_bridge"       // vendor:product and chip, "152d:0578 JMicron JMS567/JMS578"
	LabelUSBBridgeQuirk LabelKey = "usb_bridge_quirk" // what is known to go wrong with that chip
	LabelCardType       LabelKey = "card_type"        // SD or MMC (eMMC)
	LabelCardHost       LabelKey = "card_host"        // the MMC host controller's driver
	LabelNIC            LabelKey = "nic"              // the interface of the default route
	LabelNICSpeed       LabelKey = "nic_speed_mbps"
	LabelNICDuplex      LabelKey = "nic_duplex"
	LabelCPUGovernor    LabelKey = "cpu_governor"
	// LabelLinkCeilingBPS is what the slowest link under the disk allows,
	// in bytes per second; LabelLinkCeiling says it in words.
	LabelLinkCeilingBPS LabelKey = "link_ceiling_bps"
	LabelLinkCeiling    LabelKey = "link_ceiling"
)

// A Kubernetes target: its node, class and volume.
const (
	LabelNode           LabelKey = "node"
	LabelKubeletVersion LabelKey = "kubelet_version"
	LabelStorageClass   LabelKey = "storage_class"
	LabelProvisioner    LabelKey = "provisioner"
	LabelReclaimPolicy  LabelKey = "reclaim_policy"
	LabelVolumeMode     LabelKey = "volume_mode"
	LabelAccessMode     LabelKey = "access_mode"
	LabelPV             LabelKey = "pv"
	LabelPVCapacity     LabelKey = "pv_capacity"
	LabelVolumeNode     LabelKey = "volume_node"
	LabelCSIDriver      LabelKey = "csi_driver"
	LabelVolumeServer   LabelKey = "volume_server" // a network volume's server address (NFS, iSCSI portal, SMB)
	LabelK8sNamespace   LabelKey = "k8s_namespace"
	LabelK8sPod         LabelKey = "k8s_pod"
	LabelK8sPVC         LabelKey = "k8s_pvc"
	LabelPVCSize        LabelKey = "pvc_size"
	LabelImage          LabelKey = "image" // the container image fio ran in
	// LabelPodSecurity is "restricted" when the fio pod ran under Pod
	// Security's restricted profile (non-root) because its namespace
	// refused the usual pod.
	LabelPodSecurity LabelKey = "k8s_pod_security"
)

// Set by the engine on every run or result it measures.
const (
	LabelStorbenchVersion LabelKey = "storbench_version"
	LabelFioVersion       LabelKey = "fio_version"
	// LabelTargetKind is the runner's kind ("local", "kubernetes"); only
	// results storbench measured itself have it.
	LabelTargetKind LabelKey = "target_kind"
	// LabelStartSkew is how far apart, in milliseconds, the targets began
	// measuring one workload of a parallel round.
	LabelStartSkew LabelKey = "start_skew_ms"
	// LabelParallelTargets is how many targets ran the workload together.
	LabelParallelTargets LabelKey = "parallel_targets"
	// LabelContention is a contention result's role: alone, loaded or noise.
	LabelContention LabelKey = "contention"
	// LabelProbe names the probe on all three results of a contention round.
	LabelProbe LabelKey = "probe"
	// LabelNoiseTarget names where the bulk writer of a contention round ran.
	LabelNoiseTarget LabelKey = "noise_target"
	// LabelInFlight is how many I/Os the workload kept in flight: its
	// iodepth times its numjobs, counting 1 per job for a synchronous
	// engine (fio.InFlight). The breakdown's queueing model reads it.
	LabelInFlight LabelKey = "in_flight"
)

// Set on the results of the network round (internal/netround): each
// result is one measurement from one node to another.
const (
	LabelNetFrom    LabelKey = "net_from"    // the node that sends
	LabelNetTo      LabelKey = "net_to"      // the node that receives (and echoes, for round trips)
	LabelNetAddress LabelKey = "net_address" // the address the sender connected to
	LabelNetwork    LabelKey = "network"     // "host" (the nodes' own network) or "pod" (a CNI network)
)

// What the breakdown of a network-backed or replicated result reads
// (internal/analysis, docs/breakdown.md); users give them with --label
// where the runner cannot read them.
const (
	// LabelReplicas is how many copies of each write the storage keeps
	// (Longhorn's numberOfReplicas, a Ceph pool's size).
	LabelReplicas LabelKey = "replicas"
	// LabelReplicasSource says where a runner read LabelReplicas (for
	// example a Rook-Ceph pool's spec.replicated.size); absent when the
	// user gave it.
	LabelReplicasSource LabelKey = "replicas_source"
	// LabelReplicaNodes are the nodes holding the copies, or serving a
	// network filesystem, comma separated.
	LabelReplicaNodes LabelKey = "replica_nodes"
	// LabelReplicaNodesSource says where a runner read LabelReplicaNodes
	// (Longhorn's replica resources); absent when the user gave them.
	LabelReplicaNodesSource LabelKey = "replica_nodes_source"
	// LabelBaseline names the target whose results are the local disk
	// under the storage (a local-path class, a host directory).
	LabelBaseline LabelKey = "baseline"
	// LabelReplicationModel is how the copies travel (values
	// ReplicationClient, ReplicationPrimary, ReplicationServer); absent:
	// the breakdown infers it (Ceph is primary-copy) or takes client-side.
	LabelReplicationModel LabelKey = "replication_model"
)

// Set by the rbd target kind (internal/runner/rbd) on what it measured.
const (
	LabelCephPool  LabelKey = "ceph_pool"  // the RBD image's pool
	LabelCephImage LabelKey = "ceph_image" // the image fio's rbd engine wrote or read
	LabelCephOSDs  LabelKey = "ceph_osds"  // the OSDs acting for the pool's PGs, "osd.0,osd.1,osd.2"
)

// ClassParameter is the label a Kubernetes target carries for one of its
// StorageClass's parameters ("class.numberOfReplicas").
func ClassParameter(name string) LabelKey { return LabelKey("class." + name) }

// Set by the importer on what it reads.
const (
	LabelSource   LabelKey = "source"  // the tool whose output it was: fio, iozone, dd, csv...
	LabelJob      LabelKey = "job"     // fio's job name
	LabelSection  LabelKey = "section" // the section of a fio text report
	LabelPath     LabelKey = "path"    // the file a figure was read from
	LabelFileSize LabelKey = "file_size"
)

// Labels carrying a result's measurement checks, so analyses over Figures
// (which hold labels but not the full result) see them. They describe one
// result, not its target; see ResultLabel.
const (
	LabelSteadyState      LabelKey = "steady_state"       // "reached" or "not_reached"
	LabelSteadyStateAfter LabelKey = "steady_state_after" // a Go duration, e.g. "42s"
	LabelCacheRisk        LabelKey = "cache_risk"         // "span 1.0 GiB within 23.5 GiB host RAM"
	LabelCliffAtBytes     LabelKey = "write_cliff_at_bytes"
	LabelCliffBeforeBPS   LabelKey = "write_cliff_before_bps"
	LabelCliffAfterBPS    LabelKey = "write_cliff_after_bps"
	LabelSustainedBPS     LabelKey = "sustained_bps" // mean throughput of a sustained write without a cliff
	LabelPrecondition     LabelKey = "precondition"  // "2x sequential"
	LabelCPUIdle          LabelKey = "cpu_idle_pct"  // mean host CPU idle while the workload ran
	LabelRepeatPrecision  LabelKey = "repeat_precision_pct"
	// LabelSubmissionBound: an asynchronous engine did each I/O inside
	// io_submit (ceph-fuse): what the I/O took, in words.
	LabelSubmissionBound LabelKey = "submission_bound"
)

// HostLabels describe the host a run measured on: the engine copies them
// from its first target to the run.
var HostLabels = []LabelKey{LabelHostname, LabelKernel, LabelArch, LabelCPUModel, LabelFioVersion}

// Automatic reports whether storbench sets the label on every run by itself,
// as opposed to a label the user gave.
func Automatic(key string) bool {
	switch LabelKey(key) {
	case LabelHostname, LabelKernel, LabelArch, LabelCPUModel, LabelFioVersion, LabelStorbenchVersion:
		return true
	}
	return false
}

// CheckUserLabel is the bound on a label a user gives (--label, a label of
// an imported CSV or JSON row): the key is a Kubernetes qualified name
// (a name of at most 63 characters of letters, digits, '-', '_' and '.',
// with an optional DNS prefix and '/'), the value at most 63 characters,
// as Kubernetes bounds label values. Labels storbench sets itself (paths,
// methods) are not bound by it.
func CheckUserLabel(key, value string) error {
	if errs := validation.IsQualifiedName(key); len(errs) > 0 {
		return fmt.Errorf("label key %s: %s", shortQuote(key), strings.Join(errs, "; "))
	}
	if len(value) > validation.LabelValueMaxLength {
		return fmt.Errorf("label %s: the value is %d characters long, more than the %d a label value may hold", key, len(value), validation.LabelValueMaxLength)
	}
	return nil
}

// shortQuote quotes s, cut to 80 bytes: an error need not repeat a huge
// input.
func shortQuote(s string) string {
	if len(s) > 80 {
		return strconv.Quote(s[:80]) + "..."
	}
	return strconv.Quote(s)
}

// A network filesystem mounted on a host, as internal/netfs explains it
// (the mount's type and source are LabelFSType and LabelMountSource).
const (
	// LabelVolumeServers are every server behind the mount, host:port at
	// the service's port, comma separated (a Gluster volume's bricks).
	LabelVolumeServers LabelKey = "volume_servers"
	// LabelServerRTT is the round trip to each server's port, measured
	// when the target was prepared: "10.0.0.5:2049 0.21 ms, ...".
	LabelServerRTT LabelKey = "server_rtt"
	// LabelServerLink says how the link to the servers was measured, or
	// that it was not and how to measure it.
	LabelServerLink LabelKey = "server_link"
)

// A network volume's server outside the cluster (a NAS), for the
// breakdown (internal/analysis, breakdown_server.go).
const (
	// LabelServerLinkBPS is the server's own link as measured (iperf3, or
	// a network round against it), in bytes per second: given with
	// --label until storbench measures the link to a server that is not
	// a node.
	LabelServerLinkBPS LabelKey = "server_link_bps"
)
