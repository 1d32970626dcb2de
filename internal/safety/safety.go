// Package safety is the one owner of storbench's promise never to destroy
// data it did not create. Every path to fio asks it before writing to a
// block device: built-in and YAML suites, raw fio jobs, the contention
// round's noise writer, Kubernetes block volumes and any later runner.
//
// The rule: a write to a block device needs the user to name that exact
// device (Policy.Destructive), and is refused even then while anything shows
// the device holds or serves data (mounted, swap, partitions, holders,
// signatures, loop devices reading from it), or while it cannot be proven
// blank. See docs/safety.md.
package safety

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// Facts reads what storbench needs to know of a block device, where fio
// runs: locally (LocalFacts) or through a runner's own connection.
type Facts interface {
	// Device returns the facts of the block device at path. An error means
	// the facts could not be read, and callers must refuse to write.
	Device(ctx context.Context, path string) (*Device, error)
}

// Policy is what the user allowed.
type Policy struct {
	// Destructive lists the devices the user named with --destructive.
	Destructive []string
	// Resolve turns a name in Destructive into the device path Facts
	// report; nil resolves symlinks on this host. A remote runner whose
	// facts keep the path as named passes its own.
	Resolve func(path string) (string, error)
	// Name is how the user names a device path in --destructive (an SSH
	// host's device is ssh://HOST/dev/...); nil names it by its path.
	Name func(path string) string
}

// CheckWrite decides whether the named writers (workloads or job sections)
// may write to the block device at path. It returns nil or a *Refusal.
func (p Policy) CheckWrite(ctx context.Context, facts Facts, path string, writers []string) error {
	dev, err := facts.Device(ctx, path)
	if err != nil {
		return &Refusal{Device: path, Writers: writers, Rule: RuleUnknown, Msg: "cannot read what the device holds: " + err.Error()}
	}
	what := fmt.Sprintf("workloads %s write to %s", strings.Join(writers, ", "), path)
	if reasons := dev.InUse(); len(reasons) > 0 {
		return &Refusal{Device: path, Writers: writers, Rule: RuleInUse, Reasons: append(reasons, dev.Unproven...), Msg: what + ", which storbench refuses even with --destructive"}
	}
	if len(dev.Unproven) > 0 {
		return &Refusal{Device: path, Writers: writers, Rule: RuleUnknown, Reasons: dev.Unproven, Msg: what + ", which storbench cannot prove blank"}
	}
	if dev.ReadOnly {
		return &Refusal{Device: path, Writers: writers, Rule: RuleReadOnly, Msg: what + ", which the kernel marks read-only (blockdev --getro " + path + " says 1; blockdev --setrw " + path + " clears it)"}
	}
	if !p.named(dev.Path) {
		return &Refusal{Device: path, Writers: writers, Rule: RuleNotNamed, Msg: what + " and would destroy its contents: pass --destructive " + p.name(path) + " to allow it, or choose a read-only suite"}
	}
	return nil
}

func (p Policy) name(path string) string {
	if p.Name == nil {
		return path
	}
	return p.Name(path)
}

func (p Policy) named(resolved string) bool {
	resolve := p.Resolve
	if resolve == nil {
		resolve = filepath.EvalSymlinks
	}
	for _, d := range p.Destructive {
		if r, err := resolve(d); err == nil && r == resolved {
			return true
		}
	}
	return false
}

// Rules a Refusal can cite.
const (
	// RuleNotNamed: the device was not named with --destructive.
	RuleNotNamed = "not-named"
	// RuleInUse: the device is mounted, swap, partitioned, held or carries a
	// signature.
	RuleInUse = "in-use"
	// RuleUnknown: what the device holds could not be established: blkid
	// failed or was ambivalent, or the device could not be read.
	RuleUnknown = "unknown"
	// RuleReadOnly: the kernel marks the device read-only.
	RuleReadOnly = "read-only"
)

// Refusal is a refusal to write to a device: which device, which rule, the
// evidence, and what the user can do.
type Refusal struct {
	Device  string
	Writers []string
	Rule    string
	Reasons []string
	Msg     string
}

func (e *Refusal) Error() string {
	if len(e.Reasons) == 0 {
		return "refusing to write: " + e.Msg
	}
	return fmt.Sprintf("refusing to write: %s: %s", e.Msg, strings.Join(e.Reasons, "; "))
}
