// Package runner says where a suite runs. A Target is what the user named
// (a directory or a device here, a Kubernetes StorageClass on a node, a
// directory or device on a host reached over SSH, an RBD image or Gluster
// volume fio reaches through its own engine), made by its Kind (kind.go);
// preparing it yields a Prepared target: an execx.Cmder that reaches the place
// fio runs, the file or device fio uses, whether that place is this host, a
// Sampler of its host where the runner can offer one, and a cleanup that
// removes everything storbench created there.
package runner

import (
	"context"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/safety"
)

// Target is a place to benchmark, before anything is created there.
type Target interface {
	// Name is the target as results show it.
	Name() string
	// Prepare checks safety and space and creates what fio needs. On error
	// nothing is left behind.
	Prepare(ctx context.Context, need Need) (*Prepared, error)
}

// Checker is a Target that can refuse a plan before anything is created or
// stored: unsafe devices, too little space, missing permissions.
type Checker interface {
	Check(ctx context.Context, need Need) error
}

// Need describes what a suite will do to a target.
type Need struct {
	RunID string
	// FileSize is the largest span any workload uses, in bytes.
	FileSize int64
	// Writers names the workloads that write; empty for read-only suites.
	Writers []string
	// Direct reports whether any workload uses O_DIRECT.
	Direct bool
}

// Prepared is a target ready for fio.
type Prepared struct {
	Name string
	// Kind says what the target is, as results label it (target_kind):
	// "directory", "device", "kubernetes", a kind's own name. It is for
	// people: what the engine does with a target follows the typed facts
	// below (Device, File.Engine, Owned, MemoryOf), never this name.
	Kind string
	// Device says File names a whole block device the target holds for
	// the run: preconditioning applies, the contention round's bulk writer
	// goes beside the probe on it, and a job that leaves its file to the
	// runner gets the device.
	Device bool
	// Owned are what this run created beyond fio's work directory that
	// the jobs may write without --destructive naming them: engine
	// targets by name (rbd:POOL/IMAGE, gluster:VOLUME/DIR; safety's
	// JobCheck.Owned).
	Owned []string
	// EngineFacts, for a kind whose engine targets can be in use by
	// others (an RBD image mapped elsewhere), reads it before a job writes
	// one; nil judges engine targets by Owned and --destructive only.
	EngineFacts safety.EngineFacts
	// MemoryOf names, for notices, whose memory the label mem_bytes the
	// runner sets is ("node worker-1"); empty says "label mem_bytes".
	MemoryOf string
	Cmder    execx.Cmder
	// Local says fio runs on this host: the engine reads the target's
	// paths, claims its devices and makes its work directories here
	// rather than through Cmder.
	Local bool
	// Telemetry makes the sampler of the host fio runs on; nil when the
	// runner cannot sample there, or an error saying why it could not
	// this time (the host's counters could not be streamed), and results
	// then carry no telemetry. The engine calls it once per prepared
	// target, and only when telemetry is asked for: finding the sources
	// takes time (a DNS lookup for a network mount's server).
	Telemetry func() (Sampler, error)
	// Dir is fio's working directory ("" for the Cmder's default).
	Dir string
	// File is the file or device the generated jobs use.
	File fio.File
	// Labels describe the environment: filesystem, device model, host.
	Labels map[string]string
	// Notices are things the user should know (a reduced file size).
	Notices []string
	// Devices, for a runner whose fio runs on another host that it can
	// read (SSH), is how the safety owner judges the block devices a job
	// file names there: read on that host, under the user's --destructive
	// as it applies there. Nil where fio runs here (the engine reads this
	// host itself) or where devices cannot be read; a job may then write
	// no device but one the runner made for the run.
	Devices *RemoteDevices
	// Net is where this target's fio can be reached by the others' for
	// the network round (internal/netround); nil where the runner offers
	// no such endpoint (a local target: there is no other node).
	Net *NetEndpoint
	// NetPeers, where the runner offers them, are more endpoints for the
	// network round, made on demand: the same node on another network
	// (a Kubernetes node's host network beside its pod network) and the
	// run's other nodes (replica or server nodes, marked Other); notices
	// say what could not be offered and why.
	NetPeers func(ctx context.Context) (eps []NetEndpoint, notices []string)
	// Cleanup removes what Prepare and fio created. It must be safe to call
	// with a fresh context after the run's context is cancelled.
	Cleanup func(ctx context.Context) error
}

// FioRunner runs fio for the target: through its Cmder, in its Dir, with
// the environment its engine target needs.
func (p *Prepared) FioRunner() fio.Runner {
	fr := fio.Runner{Cmder: p.Cmder, Dir: p.Dir}
	if p.File.Engine != nil {
		fr.Env = p.File.Engine.Env
	}
	return fr
}

// RemoteDevices reads and judges block devices on the host fio runs on.
type RemoteDevices struct {
	Facts  safety.Facts
	Policy safety.Policy
	// Hold opens a device the judged jobs write exclusively on that host
	// and judges it again under the hold, as safety.Policy.Claim does
	// here; the engine calls release once fio is done. Nil when the
	// runner cannot.
	Hold func(ctx context.Context, dev string, writers []string) (release func() error, err error)
}

// Sampler records the host fio runs on while one workload runs: its CPU,
// the target's device, I/O pressure, heat (internal/telemetry). A runner
// reads that host its own way: the local runner directly, a remote one
// through its own connection.
type Sampler interface {
	// Start takes a first reading now, before the workload begins, and
	// keeps recording until the Recording is stopped. A Sampler may be
	// started many times, one recording after the other.
	Start() Recording
}

// Recording is one workload's sampling.
type Recording interface {
	// Stop takes a last reading, ends the recording and returns what it
	// saw; calling it again returns the same.
	Stop() *result.Telemetry
}

// NetEndpoint is one node of the network round: fio runs there through
// Cmder, and the other nodes' fio connect to Address.
type NetEndpoint struct {
	// Node names the machine: a row and a column of the link matrix.
	Node string
	// Address is an IP address or host name the other nodes reach it by.
	Address string
	// Network is "host" (the node's own network) or "pod" (a CNI network).
	Network string
	Cmder   execx.Cmder
	// Other marks a node of the run that runs no fio (a replica or a
	// server): by default the round measures fio's nodes against the
	// others, and pairs of two other nodes only when all pairs are asked.
	Other bool
}
