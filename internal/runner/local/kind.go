package local

import (
	"context"
	"os"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Kind is the kind of this host's directories and block devices. It takes
// any target string no other kind recognised, so it goes last in a
// registry.
type Kind struct{}

var _ runner.Kind = Kind{}

// Name implements runner.Kind.
func (Kind) Name() string { return "local" }

// Parse implements runner.Kind: every non-empty string is a path here.
func (Kind) Parse(target string) (runner.Spec, bool, error) {
	if target == "" {
		return nil, false, nil
	}
	return spec(target), true, nil
}

// spec is a directory or device path on this host.
type spec string

func (s spec) String() string { return string(s) }

// Describe implements runner.Spec.
func (s spec) Describe() string {
	fi, err := os.Stat(string(s))
	switch {
	case err != nil:
		return "a path on this host (" + err.Error() + ")"
	case fi.IsDir():
		return "a directory on this host: fio's files go in a new work directory there, removed after the run"
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		return "a block device on this host, held exclusively for the run; written only when --destructive names it"
	}
	return "neither a directory nor a block device"
}

// Target implements runner.Spec.
func (s spec) Target(o runner.Options) (runner.Target, error) {
	return NewTarget(string(s), Options{Destructive: o.Destructive}), nil
}

var _ runner.KindDoctor = Kind{}

// Doctor implements runner.KindDoctor: each path must be a directory fio
// can write a small test file in, or a block device whose contents
// storbench can read (what a write to it then needs is the safety
// owner's verdict at run time).
func (Kind) Doctor(ctx context.Context, specs []runner.Spec, o runner.Options) []result.Check {
	var out []result.Check
	for _, s := range specs {
		c := result.Check{Area: "local", Name: "target " + s.String(), Status: result.CheckOK, Detail: s.Describe()}
		if err := NewTarget(s.String(), Options{Destructive: o.Destructive}).Check(ctx, runner.Need{FileSize: MinFileSize}); err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "name an existing directory you can write in, or a block device"
		}
		out = append(out, c)
	}
	return out
}
