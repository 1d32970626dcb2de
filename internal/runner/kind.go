package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/storbench/storbench/internal/result"
)

// Kind is one kind of target (a directory or device here, an RBD image, a
// Gluster volume...), one package behind this interface, as kind's cluster
// providers and restic's location registry are: the kind recognises and
// parses its own target strings and makes Targets of them; a Target
// prepares itself and says, in the typed facts of its Prepared, what the
// engine may do with it (Prepared.Device, File.Engine, Owned...) and, in
// its Labels, the facts its results carry. A kind may also check its
// prerequisites (KindDoctor) and find and remove what runs left
// (KindLeftovers). The library loops over a Registry of kinds; nothing
// outside a kind's package compares its name.
type Kind interface {
	// Name names the kind in messages and registries: "rbd", "gluster".
	// Results say what a target is by its Prepared.Kind.
	Name() string
	// Parse recognises a target string of this kind. ok is false, and err
	// nil, for a string that is not this kind's; err (with ok) says why a
	// string of this kind is malformed, naming the request field
	// ("targets") rather than a flag.
	Parse(target string) (spec Spec, ok bool, err error)
}

// Spec is one target string parsed by its kind, before anything is
// reached or created.
type Spec interface {
	// String is the target as the user named it.
	String() string
	// Describe says, for a dry run, where fio would run and what Prepare
	// would create there ("an RBD image of the run's size in pool bench,
	// removed after the run; fio's rbd engine from this host").
	Describe() string
	// Target makes the runner.Target that checks and prepares it.
	Target(o Options) (Target, error)
}

// Options are the request's settings every kind may read.
type Options struct {
	// Destructive names what write workloads may destroy: device paths,
	// and engine targets by name (rbd:POOL/IMAGE, gluster:VOLUME;
	// docs/safety.md).
	Destructive []string
	// Getenv reads the caller's environment (CEPH_CONF and the like); nil
	// reads none.
	Getenv func(string) string
}

// Env is o.Getenv(key), "" without a Getenv.
func (o Options) Env(key string) string {
	if o.Getenv == nil {
		return ""
	}
	return o.Getenv(key)
}

// KindDoctor is a kind that checks what its targets need before a run:
// its tools, its configuration, and each target named (reachable, the
// pool or volume there, room for the run).
type KindDoctor interface {
	Kind
	// Doctor checks specs (this kind's, as the user named them). It
	// reports every finding as a check, failures with a fix; it returns
	// no error.
	Doctor(ctx context.Context, specs []Spec, o Options) []result.Check
}

// KindLeftovers is a kind that finds what runs left on its targets when
// storbench was killed before cleaning up (images, directories, pods),
// and removes it.
type KindLeftovers interface {
	Kind
	// FindLeftovers lists what runs left where spec reaches (a pool, a
	// volume); runID, when set, limits it to that run.
	FindLeftovers(ctx context.Context, spec Spec, runID string) ([]Leftover, error)
	// RemoveLeftover removes one thing FindLeftovers found. It must be
	// safe to call with a fresh context after the caller's is cancelled.
	RemoveLeftover(ctx context.Context, l Leftover) error
}

// Leftover is one thing a run left behind on a target (result.Leftover:
// Kind, Where, Name, RunID, Created, Detail).
type Leftover = result.Leftover

// Registry holds kinds in the order they recognise targets: the first
// kind whose Parse recognises a string makes its target, so a kind that
// takes any string (a local path) goes last.
type Registry struct {
	kinds []Kind
}

// NewRegistry holds kinds, in order.
func NewRegistry(kinds ...Kind) *Registry {
	r := &Registry{}
	for _, k := range kinds {
		r.Register(k)
	}
	return r
}

// Register adds k after the kinds already held. A second kind of one
// name is a programming error, and panics.
func (r *Registry) Register(k Kind) {
	for _, have := range r.kinds {
		if have.Name() == k.Name() {
			panic(fmt.Sprintf("runner: kind %q registered twice", k.Name()))
		}
	}
	r.kinds = append(r.kinds, k)
}

// With returns a new registry with k before the kinds r holds: how a
// caller (or a test) adds a kind of its own without changing r.
func (r *Registry) With(k Kind) *Registry {
	return NewRegistry(append([]Kind{k}, r.kinds...)...)
}

// Replace returns a new registry in which k takes the place of the kind
// of its name, in its order: how the library gives a kind the request's
// settings (ssh.Kind{Become: true}). A kind r does not hold is not added.
func (r *Registry) Replace(k Kind) *Registry {
	kinds := slices.Clone(r.kinds)
	for i, have := range kinds {
		if have.Name() == k.Name() {
			kinds[i] = k
		}
	}
	return NewRegistry(kinds...)
}

// Kinds returns the kinds, in order.
func (r *Registry) Kinds() []Kind { return slices.Clone(r.kinds) }

// Parse finds the kind of target and parses it. ok is false when no kind
// recognises it.
func (r *Registry) Parse(target string) (k Kind, spec Spec, ok bool, err error) {
	for _, k := range r.kinds {
		spec, ok, err := k.Parse(target)
		if ok || err != nil {
			return k, spec, true, err
		}
	}
	return nil, nil, false, nil
}

// KindGroup is a kind whose targets are opened together rather than one
// by one: they share a session (one SSH connection per host, however many
// of its paths and rounds are targets) or one target string makes several
// (a Kubernetes class makes a target per node). The library hands such a
// kind every spec of a request at once, and never calls their Spec.Target.
type KindGroup interface {
	Kind
	// Open reaches every spec at once and returns the group's targets, in
	// the order of specs (each spec makes one target or more). On error
	// nothing stays open. A target that cannot be reached is named in the
	// error.
	Open(ctx context.Context, specs []Spec, o GroupOptions) (*Group, error)
}

// GroupOptions are what a run asks of a group when it opens it.
type GroupOptions struct {
	Options
	// ReadMemory asks for the memory that can cache each target (a
	// host's, a node's): Group.Memory.
	ReadMemory bool
	// Report hears notices of the group's targets (a node skipped, a
	// class resolved), from their own goroutines during cleanup too; nil
	// hears none. target is "" for a notice about no one target.
	Report func(target, msg string)
}

// Group is an opened group of targets.
type Group struct {
	// Targets are the specs' targets, in order.
	Targets []Target
	// Memory is the memory that can cache the targets, when asked for
	// (GroupOptions.ReadMemory): one entry per machine.
	Memory []Memory
	// Close ends the session once every target has been cleaned up; nil
	// when there is none to end.
	Close func() error
}

// Memory is the memory of a machine that can cache targets: whose it is
// ("the largest node's memory") and its size, or why it is unknown.
type Memory struct {
	Whose string
	Bytes int64
	Err   error
}

// ErrGrouped is what Spec.Target of a grouped kind's spec returns: its
// targets are made by KindGroup.Open.
var ErrGrouped = errors.New("the targets of this kind are opened together (runner.KindGroup)")

// RefusedError is an error of KindGroup.Open that is the request's fault
// rather than the target's (a host key storbench may not trust): the
// library refuses the run as it refuses a malformed target.
type RefusedError struct{ Err error }

func (e *RefusedError) Error() string { return e.Err.Error() }
func (e *RefusedError) Unwrap() error { return e.Err }

// KindRunOnly is a grouped kind whose targets a dry run does not open:
// opening them creates what a run needs (a PVC and a pod on every node),
// so fio's reading of the job is judged on them when they run.
type KindRunOnly interface {
	KindGroup
	RunOnly()
}
