// Package throttle limits the write bandwidth one control group may use on
// one block device, and changes that limit while a write runs. It makes
// a write cliff at a known place, to test and measure the cliff detector
// on real I/O. It uses the cgroup v2 io controller (io.max) where it is
// enabled, else cgroup v1 blkio (blkio.throttle.write_bps_device). Root only.
package throttle

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/fio"
)

// Group is a control group created for one throttled write.
type Group struct {
	dir   string
	v2    bool
	major uint32
	minor uint32
}

// Where systemd-era systems mount the hierarchies: cgroup v2 alone, v2
// beside v1 (hybrid), and v1's blkio controller.
const (
	v2Root = "/sys/fs/cgroup"
	v2Alt  = "/sys/fs/cgroup/unified"
	v1Root = "/sys/fs/cgroup/blkio"
)

// New creates a control group named name limiting writes to the device
// major:minor. It fails, saying why, where neither cgroup interface works.
func New(name string, major, minor uint32) (*Group, error) {
	for _, root := range []string{v2Root, v2Alt} {
		ctl, err := os.ReadFile(filepath.Join(root, "cgroup.subtree_control"))
		if err == nil && strings.Contains(" "+string(ctl)+" ", " io ") {
			g := &Group{dir: filepath.Join(root, name), v2: true, major: major, minor: minor}
			if err := os.Mkdir(g.dir, 0o755); err != nil {
				return nil, fmt.Errorf("creating cgroup %s: %w", g.dir, err)
			}
			return g, nil
		}
	}
	if _, err := os.Stat(filepath.Join(v1Root, "blkio.throttle.write_bps_device")); err == nil {
		g := &Group{dir: filepath.Join(v1Root, name), major: major, minor: minor}
		if err := os.Mkdir(g.dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating cgroup %s: %w", g.dir, err)
		}
		return g, nil
	}
	return nil, errors.New("no cgroup io controller: neither cgroup v2 io.max (io in cgroup.subtree_control) nor cgroup v1 blkio throttling is available")
}

// Procs is the file a process writes its PID to to join the group.
func (g *Group) Procs() string { return filepath.Join(g.dir, "cgroup.procs") }

// Limit sets the group's write limit on the device in bytes per second;
// 0 lifts it.
func (g *Group) Limit(bytesPerSec int64) error {
	dev := fmt.Sprintf("%d:%d", g.major, g.minor)
	if g.v2 {
		v := "max"
		if bytesPerSec > 0 {
			v = strconv.FormatInt(bytesPerSec, 10)
		}
		return write(filepath.Join(g.dir, "io.max"), dev+" wbps="+v)
	}
	return write(filepath.Join(g.dir, "blkio.throttle.write_bps_device"), dev+" "+strconv.FormatInt(bytesPerSec, 10))
}

// Remove deletes the group; its processes must have ended.
func (g *Group) Remove() error {
	if err := os.Remove(g.dir); err != nil {
		return fmt.Errorf("removing cgroup %s: %w", g.dir, err)
	}
	return nil
}

func write(path, v string) error {
	if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
		return fmt.Errorf("writing %q to %s: %w", v, path, err)
	}
	return nil
}

// SectorsWritten reads the sectors (512 bytes) written to a block device so
// far, from /sys/block/NAME/stat: the ground truth of where a cliff was made.
func SectorsWritten(name string) (int64, error) {
	data, err := os.ReadFile(filepath.Join("/sys/block", name, "stat"))
	if err != nil {
		return 0, err
	}
	f := strings.Fields(string(data))
	if len(f) < 7 {
		return 0, fmt.Errorf("/sys/block/%s/stat: %d fields", name, len(f))
	}
	return strconv.ParseInt(f[6], 10, 64)
}

// Write describes a throttled sequential write to a block device.
type Write struct {
	// Device is the block device written (e.g. /dev/loop3); its contents
	// are destroyed.
	Device string
	// Size bounds the write; Runtime bounds its time.
	Size    int64
	Runtime time.Duration
	// Before and After are the write limits in bytes per second before
	// and after the switch, SwitchAfter after the first bytes reach the
	// device.
	Before, After int64
	SwitchAfter   time.Duration
	// Dir receives fio's bandwidth log; LogAverage is its period.
	Dir        string
	LogAverage time.Duration
}

// Outcome is a throttled write's bandwidth log and where the cliff was
// made: the bytes the device had received when the limit changed.
type Outcome struct {
	Samples     []fio.BandwidthSample
	SwitchBytes int64
}

// Run performs the write with fio inside a fresh control group and changes
// the limit during it.
func Run(ctx context.Context, w Write) (_ *Outcome, err error) {
	major, minor, err := DeviceNumber(w.Device)
	if err != nil {
		return nil, err
	}
	name := filepath.Base(w.Device)
	g, err := New(fmt.Sprintf("storbench-throttle-%d", os.Getpid()), major, minor)
	if err != nil {
		return nil, err
	}
	defer func() { err = errors.Join(err, g.Remove()) }()
	if err := g.Limit(w.Before); err != nil {
		return nil, err
	}
	prefix := "throttled"
	args := []string{"--name=throttled", "--filename=" + w.Device, "--rw=write", "--bs=1M", "--iodepth=8",
		"--ioengine=libaio", "--direct=1", "--size=" + strconv.FormatInt(w.Size, 10),
		"--runtime=" + strconv.FormatInt(int64(w.Runtime/time.Second), 10),
		"--write_bw_log=" + prefix, "--log_avg_msec=" + strconv.FormatInt(w.LogAverage.Milliseconds(), 10),
		"--output-format=json"}
	script := `echo $$ > "$0" && exec fio "$@"`
	cmd := exec.CommandContext(ctx, "sh", append([]string{"-c", script, g.Procs()}, args...)...)
	cmd.Dir = w.Dir
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	start, err := SectorsWritten(name)
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	type switchResult struct {
		bytes int64
		err   error
	}
	switched := make(chan switchResult, 1)
	stop := make(chan struct{})
	go func() {
		// The clock starts with the first bytes on the device, not with
		// fio's own start-up.
		for {
			s, err := SectorsWritten(name)
			if err != nil {
				switched <- switchResult{err: err}
				return
			}
			if s > start {
				break
			}
			select {
			case <-stop:
				switched <- switchResult{err: errors.New("fio ended before writing")}
				return
			case <-time.After(5 * time.Millisecond):
			}
		}
		select {
		case <-stop:
			switched <- switchResult{err: fmt.Errorf("fio ended within %s, before the switch", w.SwitchAfter)}
			return
		case <-time.After(w.SwitchAfter):
		}
		s, err := SectorsWritten(name)
		if err == nil {
			err = g.Limit(w.After)
		}
		switched <- switchResult{bytes: (s - start) * 512, err: err}
	}()
	werr := cmd.Wait()
	close(stop)
	sw := <-switched
	if werr != nil {
		return nil, fmt.Errorf("fio: %w\n%s", werr, out.String())
	}
	if sw.err != nil {
		return nil, sw.err
	}
	data, err := os.ReadFile(filepath.Join(w.Dir, prefix+"_bw.1.log"))
	if err != nil {
		return nil, err
	}
	samples, err := fio.ParseBandwidthLog(data, 1)
	if err != nil {
		return nil, err
	}
	return &Outcome{Samples: samples, SwitchBytes: sw.bytes}, nil
}

// DeviceNumber returns a block device's major and minor numbers.
func DeviceNumber(dev string) (major, minor uint32, err error) {
	fi, err := os.Stat(dev)
	if err != nil {
		return 0, 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || fi.Mode()&os.ModeDevice == 0 || fi.Mode()&os.ModeCharDevice != 0 {
		return 0, 0, fmt.Errorf("%s is not a block device", dev)
	}
	return unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)), nil
}
