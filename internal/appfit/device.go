package appfit

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Disk is the block device a directory's filesystem writes to, found from
// /proc/self/mountinfo (an overlay's upper directory followed), whose
// counters tell whether an fsync reached it.
type Disk struct {
	// Name is the kernel's name (loop3, sda1); Dev its major:minor.
	Name, Dev string
}

// DiskCounters are a disk's cumulative counters from sysfs.
type DiskCounters struct {
	Writes       int64 // write requests completed
	SectorsWrite int64 // 512-byte sectors written
	Flushes      int64 // flush requests completed (-1: the kernel does not count them)
}

// BytesWritten is SectorsWrite in bytes (sysfs counts 512-byte sectors
// whatever the device's own).
func (c DiskCounters) BytesWritten() int64 { return c.SectorsWrite * 512 }

// Sub is c minus before.
func (c DiskCounters) Sub(before DiskCounters) DiskCounters {
	d := DiskCounters{Writes: c.Writes - before.Writes, SectorsWrite: c.SectorsWrite - before.SectorsWrite, Flushes: -1}
	if c.Flushes >= 0 && before.Flushes >= 0 {
		d.Flushes = c.Flushes - before.Flushes
	}
	return d
}

// ErrNoDisk says a directory's filesystem has no block device under it
// (NFS, tmpfs, FUSE): its writes cannot be counted on a disk.
var ErrNoDisk = errors.New("no block device under this filesystem")

// DiskOf finds the block device dir's filesystem writes to.
func DiskOf(dir string) (Disk, error) {
	for range 4 { // an overlay on an overlay is followed, to a point
		var st unix.Stat_t
		if err := unix.Stat(dir, &st); err != nil {
			return Disk{}, fmt.Errorf("stat %s: %w", dir, err)
		}
		dev := fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev))
		m, err := mountOf(dev)
		if err != nil {
			return Disk{}, err
		}
		if m.fstype == "overlay" && m.upper != "" {
			dir = m.upper
			continue
		}
		name, err := os.Readlink(filepath.Join("/sys/dev/block", dev))
		if err != nil {
			return Disk{}, fmt.Errorf("%w (%s, device %s)", ErrNoDisk, m.fstype, dev)
		}
		return Disk{Name: filepath.Base(name), Dev: dev}, nil
	}
	return Disk{}, fmt.Errorf("%w: overlays nested too deep at %s", ErrNoDisk, dir)
}

type mount struct {
	fstype, upper string
	// volatile is an overlay mounted with the volatile option, which
	// skips every sync (Documentation/filesystems/overlayfs.rst).
	volatile bool
}

// volatileOverlay reports whether dir is on an overlay mounted volatile:
// said by its mount options where its upper directory, and the disk under
// it, is out of sight (a container's view of its volume).
func volatileOverlay(dir string) bool {
	var st unix.Stat_t
	if err := unix.Stat(dir, &st); err != nil {
		return false
	}
	m, err := mountOf(fmt.Sprintf("%d:%d", unix.Major(st.Dev), unix.Minor(st.Dev)))
	return err == nil && m.volatile
}

// mountOf reads the mountinfo line of the filesystem numbered dev.
func mountOf(dev string) (mount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return mount{}, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		// 36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, tail := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 3 || fields[2] != dev || len(tail) < 1 {
			continue
		}
		m := mount{fstype: tail[0]}
		if len(tail) >= 3 {
			for _, o := range strings.Split(tail[2], ",") {
				if v, ok := strings.CutPrefix(o, "upperdir="); ok {
					m.upper = v
				}
				m.volatile = m.volatile || (m.fstype == "overlay" && (o == "volatile" || o == "fsync=volatile")) // "fsync=volatile" from Linux 6.x
			}
		}
		return m, nil
	}
	if err := sc.Err(); err != nil {
		return mount{}, err
	}
	return mount{}, fmt.Errorf("%w: device %s is not in /proc/self/mountinfo", ErrNoDisk, dev)
}

// Counters reads the disk's counters now.
func (d Disk) Counters() (DiskCounters, error) {
	data, err := os.ReadFile(filepath.Join("/sys/dev/block", d.Dev, "stat"))
	if err != nil {
		return DiskCounters{}, fmt.Errorf("reading %s's counters: %w", d.Name, err)
	}
	return parseStat(string(data))
}

// parseStat reads a sysfs block stat line (Documentation/block/stat.rst):
// field 5 writes completed, 7 sectors written, 16 flushes completed (from
// Linux 5.5).
func parseStat(s string) (DiskCounters, error) {
	f := strings.Fields(s)
	if len(f) < 11 {
		return DiskCounters{}, fmt.Errorf("block stat %q: %d fields, want at least 11", s, len(f))
	}
	n := func(i int) (int64, error) { return strconv.ParseInt(f[i-1], 10, 64) }
	c := DiskCounters{Flushes: -1}
	var err error
	if c.Writes, err = n(5); err != nil {
		return c, fmt.Errorf("block stat writes: %w", err)
	}
	if c.SectorsWrite, err = n(7); err != nil {
		return c, fmt.Errorf("block stat sectors written: %w", err)
	}
	if len(f) >= 16 {
		if c.Flushes, err = n(16); err != nil {
			return c, fmt.Errorf("block stat flushes: %w", err)
		}
	}
	return c, nil
}
