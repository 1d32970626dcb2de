package ssh

import (
	"bufio"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
)

// factsScript reads a target path and its host in one session (see
// facts.sh).
//
//go:embed facts.sh
var factsScript string

// TestFileName is the file storbench writes inside its work directory on
// a host, as on this one.
const TestFileName = "storbench-test.dat"

// TargetOptions configure SSH targets.
type TargetOptions struct {
	// Destructive lists the targets the user explicitly allowed writes to,
	// written as the target is (ssh://host/dev/sdb).
	Destructive []string
}

// Target is a directory or a block device on a host reached over SSH: the
// local runner's contract, with every fact read on the host through the
// connection.
type Target struct {
	name   string
	client *Client
	path   string
	opts   TargetOptions

	mu sync.Mutex
	// holding says the prepared device target is held on the host.
	holding bool
}

var (
	_ runner.Target  = (*Target)(nil)
	_ runner.Checker = (*Target)(nil)
)

// NewTarget returns the target at path (absolute, a directory or a device)
// on the host client is connected to; name is how results name it
// (ssh://host/path). The caller closes client once the run is over.
func NewTarget(name string, client *Client, path string, opts TargetOptions) *Target {
	return &Target{name: name, client: client, path: path, opts: opts}
}

// TargetName is how results name path on the host called host.
func TargetName(host, path string) string { return "ssh://" + host + path }

// Name implements runner.Target.
func (t *Target) Name() string { return t.name }

// hostFacts is what facts.sh said: one value per key, except the lists
// (mount, holder, partition, swap).
type hostFacts map[string][]string

func (f hostFacts) get(key string) string {
	if v := f[key]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// facts reads the target path and its host.
func (t *Target) facts(ctx context.Context) (hostFacts, error) {
	return t.factsOf(ctx, t.path)
}

// factsOf reads a path on the host, and the host.
func (t *Target) factsOf(ctx context.Context, p string) (hostFacts, error) {
	out, err := execx.Output(t.client.Command(ctx, "sh", "-c", factsScript, "sh", p))
	var re *execx.RunError
	if errors.As(err, &re) {
		// The script itself is no help to the reader; what it said is.
		return nil, fmt.Errorf("target %s: reading %s on %s failed (exit code %d): %s", t.name, p, t.client.Name(), re.ExitCode, strings.TrimSpace(re.Stderr))
	}
	if err != nil {
		return nil, fmt.Errorf("target %s: reading %s on the host: %w", t.name, p, err)
	}
	f := hostFacts{}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			f[k] = append(f[k], strings.TrimSpace(v))
		}
	}
	return f, nil
}

// kind reads the facts and refuses what is neither a directory nor a
// block device.
func (t *Target) kind(ctx context.Context) (hostFacts, error) {
	f, err := t.facts(ctx)
	if err != nil {
		return nil, err
	}
	switch f.get("kind") {
	case "directory", "device":
		if f.get("fio") == "" {
			// Said before anything is created or stored, in fio's words
			// (how to install it), naming the host.
			return nil, fmt.Errorf("target %s: no fio on %s (not in the PATH of %s's SSH sessions): %w", t.name, t.client.Name(), t.client.User(), &fio.MissingError{Binary: "fio"})
		}
		return f, nil
	case "missing":
		return nil, fmt.Errorf("target %s: %s does not exist on %s", t.name, t.path, t.client.Name())
	}
	return nil, fmt.Errorf("target %s is neither a directory nor a block device", t.name)
}

// Check implements runner.Checker: the safety and free-space rules, read on
// the host, without creating anything.
func (t *Target) Check(ctx context.Context, need runner.Need) error {
	f, err := t.kind(ctx)
	if err != nil {
		return err
	}
	if f.get("kind") == "device" {
		if err := t.checkDevice(ctx, f, need); err != nil || len(need.Writers) == 0 {
			return err
		}
		// Held and let go at once, as on this host: a device the host's
		// kernel holds where the facts cannot see it (another mount
		// namespace, a container) is refused before a run is stored.
		hold, err := holdDevice(ctx, t.client, t.path)
		if err != nil {
			return fmt.Errorf("target %s: %w", t.name, err)
		}
		return hold.release()
	}
	_, _, err = t.fitDir(f, need)
	return err
}

// Prepare implements runner.Target.
func (t *Target) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	f, err := t.kind(ctx)
	if err != nil {
		return nil, err
	}
	if f.get("kind") == "device" {
		return t.prepareDevice(ctx, f, need)
	}
	notices, removed := t.removeLeftovers(ctx)
	if removed {
		// The free space changed.
		if f, err = t.kind(ctx); err != nil {
			return nil, err
		}
	}
	p, err := t.prepareDir(ctx, f, need)
	if err != nil {
		return nil, err
	}
	p.Notices = append(notices, p.Notices...)
	return p, nil
}

// removeLeftovers removes what runs whose storbench process is gone left
// in the target directory (FindLeftovers judges), as storbench cleanup
// --ssh would, and says so in notices; it never fails the run.
func (t *Target) removeLeftovers(ctx context.Context) (notices []string, removed bool) {
	found, err := FindLeftovers(ctx, t.client, t.path)
	if err != nil {
		return []string{fmt.Sprintf("looking for what earlier runs left in %s: %v", t.path, err)}, false
	}
	for i := range found {
		l := &found[i]
		if l.Kept != "" {
			continue
		}
		if err := RemoveLeftover(ctx, t.client, l); err != nil {
			notices = append(notices, fmt.Sprintf("left %s of run %s on %s: %v", l.Dir, l.RunID, t.client.Name(), err))
			continue
		}
		removed = true
		notices = append(notices, fmt.Sprintf("removed %s, left on %s by run %s (%s)", l.Dir, t.client.Name(), l.RunID, l.Why))
	}
	return notices, removed
}

// fitDir refuses a directory fio cannot write in or that lacks space, and
// returns the test file's size with a notice when it was reduced.
func (t *Target) fitDir(f hostFacts, need runner.Need) (int64, string, error) {
	if f.get("ro") == "1" {
		return 0, "", fmt.Errorf("target %s: the filesystem is mounted read-only, so fio cannot create its test file here: choose a writable directory or remount it read-write", t.name)
	}
	if f.get("writable") != "1" {
		return 0, "", fmt.Errorf("target %s: %s cannot create files here: fio needs to create its test file; choose a directory %s can write to", t.name, t.client.User(), t.client.User())
	}
	space, err := parseSpace(f.get("space"))
	if err != nil {
		return 0, "", fmt.Errorf("target %s: checking free space: %w", t.name, err)
	}
	size, notice, err := runner.FitFileSize(space, need.FileSize)
	if err != nil {
		return 0, "", fmt.Errorf("target %s: %w", t.name, err)
	}
	return size, notice, nil
}

// parseSpace reads stat -f's "%S %b %f %a": block size, blocks, free
// blocks, blocks available to users.
func parseSpace(s string) (runner.Space, error) {
	var n [4]int64
	fields := strings.Fields(s)
	if len(fields) != len(n) {
		return runner.Space{}, fmt.Errorf("stat -f said %q", s)
	}
	for i, v := range fields {
		var err error
		if n[i], err = strconv.ParseInt(v, 10, 64); err != nil {
			return runner.Space{}, fmt.Errorf("stat -f said %q", s)
		}
	}
	return runner.Space{Total: n[1] * n[0], Free: n[2] * n[0], Avail: n[3] * n[0]}, nil
}

func (t *Target) prepareDir(ctx context.Context, f hostFacts, need runner.Need) (*runner.Prepared, error) {
	size, notice, err := t.fitDir(f, need)
	if err != nil {
		return nil, err
	}
	work := path.Join(t.path, "storbench-"+need.RunID)
	// mkdir without -p: the directory must be new, so cleanup removes only
	// what this run created.
	if err := run(t.client.Command(ctx, "mkdir", "--", work)); err != nil {
		return nil, fmt.Errorf("target %s: creating work directory %s: %w", t.name, work, err)
	}
	if err := writeOwner(ctx, t.client, work, need.RunID); err != nil {
		err = fmt.Errorf("target %s: marking %s as this run's: %w", t.name, work, err)
		return nil, errors.Join(err, run(t.client.Command(context.WithoutCancel(ctx), "rm", "-rf", "--", work)))
	}
	labels := t.labels(f)
	t.addLinkFacts(ctx, labels)
	netNotices := t.addNetworkFS(ctx, labels) // netfs.go
	sample, stopSampling := samplerFor(t.client, labels)
	p := &runner.Prepared{
		Name: t.name, Kind: "directory", Cmder: t.client, Dir: work,
		File:      fio.File{Name: TestFileName, Size: size},
		Labels:    labels,
		Telemetry: sample,
		Devices:   t.devices(),
		Net:       t.netEndpoint(),
		Cleanup: func(ctx context.Context) error {
			serr := stopSampling()
			err := run(t.client.Command(ctx, "rm", "-rf", "--", work))
			if errors.Is(err, ErrConnectionLost) {
				return errors.Join(fmt.Errorf("target %s: left %s on %s, as the connection was lost: storbench cleanup --ssh --target %s removes it, as does the next run there (%w)", t.name, work, t.client.Name(), t.name, err), serr)
			}
			if err != nil {
				return errors.Join(fmt.Errorf("target %s: removing %s: %w", t.name, work, err), serr)
			}
			return serr
		},
	}
	if notice != "" {
		p.Notices = append(p.Notices, notice)
	}
	p.Notices = append(p.Notices, netNotices...)
	if need.Direct {
		if err := t.checkDirectIO(ctx, work); err != nil {
			return nil, errors.Join(err, p.Cleanup(context.WithoutCancel(ctx)))
		}
	}
	switch fs := result.LabelFSType.Of(p.Labels); fs {
	case "tmpfs", "ramfs":
		p.Notices = append(p.Notices, fs+" keeps files in memory: these figures measure RAM, not a disk")
	}
	return p, nil
}

// checkDirectIO fails early, with a reason, where the host's filesystem
// refuses O_DIRECT.
func (t *Target) checkDirectIO(ctx context.Context, work string) error {
	probe := path.Join(work, ".direct-io-probe")
	err := run(t.client.Command(ctx, "dd", "if=/dev/zero", "of="+probe, "bs=4096", "count=1", "oflag=direct"))
	if err != nil {
		return fmt.Errorf("target %s: the filesystem refused a direct I/O (O_DIRECT) write, which storbench uses to measure the disk rather than the page cache: choose a directory on the disk you want to measure (%w)", t.name, err)
	}
	return nil
}

// remoteDevice reads a device on the host for the safety owner: its size
// and signatures through safety.CmderFacts, and what facts.sh saw use it
// (mounts, holders, partitions, swap, loop devices reading it, the
// kernel's read-only flag).
type remoteDevice struct {
	cmder execx.Cmder
	facts hostFacts
}

func (r remoteDevice) Device(ctx context.Context, p string) (*safety.Device, error) {
	d, err := safety.CmderFacts{Cmder: r.cmder}.Device(ctx, p)
	if err != nil {
		return nil, err
	}
	d.Name = r.facts.get("device")
	d.Mounts = r.facts["mount"]
	d.Holders = r.facts["holder"]
	d.Partitions = r.facts["partition"]
	d.Swaps = r.facts["swap"]
	d.Loops = r.facts["loop"]
	d.ReadOnly = r.facts.get("ro") == "1"
	if d.Name == "" {
		d.Unproven = append(d.Unproven, "the host's /sys says nothing of "+p+", so its mounts and holders are unknown")
	}
	return d, nil
}

// policy is what the user allowed on this target's host: its device when
// the user named the target itself with --destructive, and every other
// device of the host named as ssh://HOST/dev/... (a job file may write
// them). Refusals name a device as the user would.
func (t *Target) policy() safety.Policy {
	p := safety.Policy{Resolve: func(s string) (string, error) { return s, nil }}
	if slices.Contains(t.opts.Destructive, t.name) {
		p.Destructive = []string{t.path}
	}
	host, ok := strings.CutSuffix(t.name, t.path)
	if !ok || !strings.HasPrefix(host, "ssh://") {
		return p
	}
	p.Name = func(dev string) string { return host + dev }
	for _, d := range t.opts.Destructive {
		if rest, ok := strings.CutPrefix(d, host); ok && strings.HasPrefix(rest, "/") && !slices.Contains(p.Destructive, rest) {
			p.Destructive = append(p.Destructive, rest)
		}
	}
	return p
}

// hostDevices reads any block device of the host for the safety owner,
// each with its own facts (facts.sh on that path).
type hostDevices struct{ t *Target }

func (h hostDevices) Device(ctx context.Context, p string) (*safety.Device, error) {
	f, err := h.t.factsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	if k := f.get("kind"); k != "device" {
		return nil, fmt.Errorf("%s on %s is not a block device (%s)", p, h.t.client.Name(), k)
	}
	return remoteDevice{h.t.client, f}.Device(ctx, p)
}

// devices is how the engine judges and holds the devices a job file
// names on the host.
func (t *Target) devices() *runner.RemoteDevices {
	return &runner.RemoteDevices{Facts: hostDevices{t}, Policy: t.policy(), Hold: t.holdWritten}
}

// holdWritten holds a device a job writes on the host, exclusively, and
// judges it again under the hold; the device target itself is held by
// Prepare already.
func (t *Target) holdWritten(ctx context.Context, dev string, writers []string) (func() error, error) {
	t.mu.Lock()
	held := t.holding && dev == t.path
	t.mu.Unlock()
	if held {
		return func() error { return nil }, nil
	}
	h, err := holdDevice(ctx, t.client, dev)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.name, err)
	}
	if err := t.policy().CheckWrite(ctx, hostDevices{t}, dev, writers); err != nil {
		return nil, errors.Join(fmt.Errorf("target %s: %w", t.name, err), h.release())
	}
	return h.release, nil
}

// checkDevice asks the safety owner whether the suite's writers may write
// to the device, from facts read on the host.
func (t *Target) checkDevice(ctx context.Context, f hostFacts, need runner.Need) error {
	if len(need.Writers) == 0 {
		return nil
	}
	if err := t.policy().CheckWrite(ctx, remoteDevice{t.client, f}, t.path, need.Writers); err != nil {
		return fmt.Errorf("target %s: %w", t.name, err)
	}
	return nil
}

func (t *Target) prepareDevice(ctx context.Context, f hostFacts, need runner.Need) (*runner.Prepared, error) {
	if err := t.checkDevice(ctx, f, need); err != nil {
		return nil, err
	}
	dev, err := remoteDevice{t.client, f}.Device(ctx, t.path)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.name, err)
	}
	// The last guard, as on this host: while the host holds the device
	// exclusively nothing there can mount it or build RAID, LVM or swap on
	// it, and if something already holds it the open fails. Under the
	// hold the facts are read and judged again, so nothing that happened
	// between Check and now goes unseen.
	var hold *remoteHold
	if len(need.Writers) > 0 {
		if hold, err = holdDevice(ctx, t.client, t.path); err != nil {
			return nil, fmt.Errorf("target %s: %w", t.name, err)
		}
		if f, err = t.kind(ctx); err == nil {
			err = t.checkDevice(ctx, f, need)
		}
		if err != nil {
			return nil, errors.Join(err, hold.release())
		}
	}
	if hold != nil {
		t.mu.Lock()
		t.holding = true
		t.mu.Unlock()
	}
	release := func() error {
		if hold == nil {
			return nil
		}
		t.mu.Lock()
		t.holding = false
		t.mu.Unlock()
		return hold.release()
	}
	size := need.FileSize
	if dev.SizeBytes > 0 && dev.SizeBytes < size {
		size = dev.SizeBytes
	}
	labels := t.labels(f)
	t.addLinkFacts(ctx, labels)
	sample, stopSampling := samplerFor(t.client, labels)
	return &runner.Prepared{
		Name: t.name, Kind: "device", Device: true, Cmder: t.client,
		File:      fio.File{Name: t.path, Size: size},
		Labels:    labels,
		Telemetry: sample,
		Devices:   t.devices(),
		Net:       t.netEndpoint(),
		Cleanup: func(context.Context) error {
			return errors.Join(stopSampling(), release())
		},
	}, nil
}

// labels describe the host and the storage of the target.
func (t *Target) labels(f hostFacts) map[string]string {
	// the host as the run names it: the network round's node, so a result
	// and the links measured from its host meet in the breakdown
	l := map[string]string{string(result.LabelNode): t.client.Name()}
	for _, k := range []result.LabelKey{result.LabelHostname, result.LabelKernel, result.LabelArch, result.LabelCPUModel,
		result.LabelFSType, result.LabelMountPoint, result.LabelMountSource,
		result.LabelDevice, result.LabelDisk, result.LabelDeviceModel, result.LabelRotational} {
		if v := f.get(string(k)); v != "" {
			k.Set(l, v)
		}
	}
	if result.LabelDisk.Of(l) == result.LabelDevice.Of(l) {
		delete(l, string(result.LabelDisk))
	}
	return l
}

// run runs cmd, keeping what it says on stderr in the error.
func run(cmd execx.Cmd) error {
	_, err := execx.Output(cmd)
	return err
}
