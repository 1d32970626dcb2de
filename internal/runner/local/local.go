// Package local runs fio on this host, against a directory or a block device.
package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/telemetry"
)

// TestFileName is the file storbench writes inside its own work directory.
const TestFileName = "storbench-test.dat"

// MinFileSize is the smallest test file storbench reduces to when space is short.
const MinFileSize = runner.MinFileSize

// StopWait bounds waiting for the processes left working in a work
// directory to go after SIGKILL, at cleanup.
const StopWait = 5 * time.Second

// MaxFill is how full storbench may make a filesystem.
const MaxFill = runner.MaxFill

// Options configure local targets.
type Options struct {
	// Destructive lists the devices the user explicitly allowed writes to.
	Destructive []string
	// Sys is the root of /sys and /proc for tests; "" means "/".
	Root string
}

// Target is a directory or block device on this host.
type Target struct {
	path string
	opts Options
}

var _ runner.Target = (*Target)(nil)

// NewTarget returns a local target for path.
func NewTarget(path string, opts Options) *Target {
	return &Target{path: path, opts: opts}
}

// Name implements runner.Target.
func (t *Target) Name() string { return t.path }

var _ runner.Checker = (*Target)(nil)

// Check implements runner.Checker: it applies the safety and free-space rules
// without creating anything.
func (t *Target) Check(ctx context.Context, need runner.Need) error {
	fi, err := os.Stat(t.path)
	if err != nil {
		return fmt.Errorf("target %s: %w", t.path, err)
	}
	switch {
	case fi.IsDir():
		if err := writable(t.path); err != nil {
			return fmt.Errorf("target %s: %w", t.path, err)
		}
		if _, _, err := fitFileSize(t.path, need.FileSize); err != nil {
			return fmt.Errorf("target %s: %w", t.path, err)
		}
		return nil
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		if _, err := t.facts().Device(ctx, t.path); err != nil {
			return err
		}
		if len(need.Writers) > 0 {
			// Claimed and released at once: a device the kernel holds where
			// storbench cannot see it (another mount namespace) is refused
			// now, before a run is stored. Prepare claims it for the run.
			hold, err := t.policy().Claim(ctx, t.facts(), t.path, need.Writers)
			if err != nil {
				return err
			}
			return hold.Release()
		}
		return nil
	}
	return fmt.Errorf("target %s is neither a directory nor a block device", t.path)
}

// Prepare implements runner.Target.
func (t *Target) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	fi, err := os.Stat(t.path)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.path, err)
	}
	switch {
	case fi.IsDir():
		if err := writable(t.path); err != nil {
			return nil, fmt.Errorf("target %s: %w", t.path, err)
		}
		return t.prepareDir(ctx, need)
	case fi.Mode()&os.ModeDevice != 0 && fi.Mode()&os.ModeCharDevice == 0:
		return t.prepareDevice(ctx, need)
	default:
		return nil, fmt.Errorf("target %s is neither a directory nor a block device", t.path)
	}
}

func (t *Target) prepareDir(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	dir, err := filepath.Abs(t.path)
	if err != nil {
		return nil, err
	}
	p := &runner.Prepared{Name: t.path, Kind: "directory", Cmder: execx.Local{}, Local: true}
	size, notice, err := fitFileSize(dir, need.FileSize)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.path, err)
	}
	if notice != "" {
		p.Notices = append(p.Notices, notice)
	}
	work := filepath.Join(dir, "storbench-"+need.RunID)
	// Mkdir, not MkdirAll: the directory must be new, so cleanup removes only
	// what this run created.
	if err := os.Mkdir(work, 0o755); err != nil {
		return nil, fmt.Errorf("target %s: creating work directory: %w", t.path, err)
	}
	p.Dir = work
	p.File = fio.File{Name: TestFileName, Size: size}
	p.Cleanup = func(context.Context) error {
		// A fio still working there (a job of a fio that died) would hold
		// the removed directory forever: stopped first.
		_, stopErr := proc.Reader{}.StopWorkingIn(work, "fio", StopWait)
		if err := os.RemoveAll(work); err != nil {
			return errors.Join(stopErr, fmt.Errorf("removing %s: %w", work, err))
		}
		return stopErr
	}
	if need.Direct {
		if err := checkDirectIO(work); err != nil {
			cerr := p.Cleanup(context.Background())
			return nil, errors.Join(fmt.Errorf("target %s: %w", t.path, err), cerr)
		}
	}
	p.Labels = t.environment(dir, "")
	t.explainNetworkFS(ctx, p)
	p.Telemetry = t.glusterSampler(p.Labels, t.sampler(p.Labels)) // bricks.go
	switch result.LabelFSType.Of(p.Labels) {
	case "tmpfs", "ramfs":
		p.Notices = append(p.Notices, result.LabelFSType.Of(p.Labels)+" keeps files in memory: these figures measure RAM, not a disk")
	}
	return p, nil
}

func (t *Target) prepareDevice(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	dev, err := t.facts().Device(ctx, t.path)
	if err != nil {
		return nil, err
	}
	// The last guard: while storbench holds the device exclusively nothing
	// can mount it or build RAID, LVM or swap on it, and if something
	// already holds it (in any mount namespace) the open fails.
	var hold *safety.Hold
	if len(need.Writers) > 0 {
		if hold, err = t.policy().Claim(ctx, t.facts(), t.path, need.Writers); err != nil {
			return nil, fmt.Errorf("target %s: %w", t.path, err)
		}
	}
	size := need.FileSize
	if dev.SizeBytes > 0 && dev.SizeBytes < size {
		size = dev.SizeBytes
	}
	labels := t.environment("", dev.Name)
	return &runner.Prepared{
		Name:      t.path,
		Kind:      "device",
		Device:    true,
		Cmder:     execx.Local{},
		Local:     true,
		File:      fio.File{Name: dev.Path, Size: size},
		Labels:    labels,
		Telemetry: t.sampler(labels),
		Cleanup:   func(context.Context) error { return hold.Release() },
	}, nil
}

// sampler reads this host's /proc and /sys (under Options.Root) for the
// target its labels describe: its block device, or the interface that
// carries a network filesystem.
func (t *Target) sampler(labels map[string]string) func() (runner.Sampler, error) {
	return func() (runner.Sampler, error) {
		return hostSampler{telemetry.New(telemetry.ConfigFor(labels, t.root()))}, nil
	}
}

// hostSampler offers a telemetry.Sampler as the runner's.
type hostSampler struct{ s *telemetry.Sampler }

func (h hostSampler) Start() runner.Recording { return h.s.Start() }

var _ runner.Recording = (*telemetry.Recording)(nil)

// writable refuses a directory fio could not create its test file in: a
// read-only mount or missing permissions, said before anything runs.
func writable(dir string) error {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil && st.Flags&unix.ST_RDONLY != 0 {
		return fmt.Errorf("the filesystem is mounted read-only, so fio cannot create its test file here: choose a writable directory or remount it read-write")
	}
	if err := unix.Access(dir, unix.W_OK|unix.X_OK); err != nil {
		return fmt.Errorf("cannot create files here (%w): fio needs to create its test file; choose a directory you can write to", err)
	}
	return nil
}

// policy is what the user allowed; the safety owner decides with it.
func (t *Target) policy() safety.Policy { return safety.Policy{Destructive: t.opts.Destructive} }

func (t *Target) facts() safety.Facts { return safety.LocalFacts{Root: t.opts.Root} }

func (t *Target) root() string {
	if t.opts.Root == "" {
		return "/"
	}
	return t.opts.Root
}

// fitFileSize checks free space and returns the test-file size that keeps
// the filesystem at most MaxFill full.
func fitFileSize(dir string, want int64) (int64, string, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil {
		return 0, "", fmt.Errorf("checking free space: %w", err)
	}
	bs := int64(st.Bsize)
	return runner.FitFileSize(runner.Space{Total: int64(st.Blocks) * bs, Free: int64(st.Bfree) * bs, Avail: int64(st.Bavail) * bs}, want)
}

// checkDirectIO fails early, with a reason, where the filesystem refuses
// O_DIRECT (tmpfs, some FUSE and overlay setups).
func checkDirectIO(dir string) error {
	probe := filepath.Join(dir, ".direct-io-probe")
	fd, err := unix.Open(probe, unix.O_CREAT|unix.O_WRONLY|unix.O_DIRECT, 0o600)
	if err != nil {
		if errors.Is(err, unix.EINVAL) {
			return fmt.Errorf("the filesystem does not support direct I/O (O_DIRECT), which storbench uses to measure the disk rather than the page cache (older kernels' tmpfs is one such filesystem): choose a directory on the disk you want to measure")
		}
		return fmt.Errorf("probing direct I/O: %w", err)
	}
	unix.Close(fd)
	return os.Remove(probe)
}
