package safety

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// backingFile identifies the file behind a loop device.
type backingFile struct{ dev, ino uint64 }

// loopsOf finds loop devices that read from one of devnums: whose backing
// file is the device itself (at any offset) or a partition of it, or a file
// on a filesystem of it, or, when the target is itself a loop device, the
// same backing file (shared). The kernel's own answer (LOOP_GET_STATUS64)
// is asked first; the backing_file path in /sys answers where the loop
// device cannot be opened.
func loopsOf(root string, devnums map[string]string, shared *backingFile) []string {
	entries, _ := os.ReadDir(filepath.Join(root, "sys/block"))
	var out []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "loop") {
			continue
		}
		sys := filepath.Join(root, "sys/block", e.Name())
		backing := readTrim(filepath.Join(sys, "loop/backing_file"))
		if backing == "" {
			continue // not attached
		}
		if _, self := devnums[readTrim(filepath.Join(sys, "dev"))]; self {
			continue
		}
		if !loopReads(root, e.Name(), backing, devnums, shared) {
			continue
		}
		desc := e.Name() + " (backing file " + backing
		if off := readTrim(filepath.Join(sys, "loop/offset")); off != "" && off != "0" {
			desc += ", offset " + off
		}
		out = append(out, desc+")")
	}
	return out
}

func loopReads(root, name, backing string, devnums map[string]string, shared *backingFile) bool {
	key := func(dev uint64) string { return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev)) }
	if root == "/" {
		if b, err := loopBacking("/dev/" + name); err == nil {
			_, dev := devnums[key(b.dev)]
			_, rdev := devnums[key(b.rdev)]
			return dev || rdev || shared != nil && b.backingFile == *shared
		}
	}
	var st unix.Stat_t
	if unix.Stat(strings.TrimSuffix(backing, " (deleted)"), &st) != nil {
		return false
	}
	if shared != nil && (backingFile{st.Dev, st.Ino}) == *shared {
		return true
	}
	if st.Mode&unix.S_IFMT == unix.S_IFBLK {
		_, ok := devnums[key(st.Rdev)]
		return ok
	}
	_, ok := devnums[key(st.Dev)]
	return ok
}

type loopInfo struct {
	backingFile
	rdev uint64
}

// loopBacking asks the kernel what a loop device reads.
func loopBacking(dev string) (loopInfo, error) {
	fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return loopInfo{}, err
	}
	defer unix.Close(fd)
	info, err := unix.IoctlLoopGetStatus64(fd)
	if err != nil {
		return loopInfo{}, err
	}
	return loopInfo{backingFile{info.Device, info.Inode}, info.Rdevice}, nil
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Hold is an exclusive open of a block device: while it is held the kernel
// refuses to mount the device, add it to RAID, LVM or device-mapper, or
// use it as swap, and it fails at once if any of these already hold it.
// It is the last guard before fio writes, after Policy.CheckWrite.
type Hold struct {
	path string
	fd   int
}

// HoldExclusive opens the block device at path with O_EXCL. EBUSY means
// the kernel holds the device (mounted, swap, RAID, LVM, device-mapper),
// perhaps in another mount namespace where /proc/self/mountinfo does not
// show it; the error is then a *Refusal.
func HoldExclusive(path string) (*Hold, error) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_EXCL|unix.O_CLOEXEC, 0)
	if errors.Is(err, unix.EBUSY) {
		return nil, BusyRefusal(path)
	}
	if err != nil {
		return nil, fmt.Errorf("opening %s exclusively: %w", path, err)
	}
	return &Hold{path: path, fd: fd}, nil
}

// BusyRefusal is the refusal of a device whose exclusive open failed with
// EBUSY, on this host or on another one (path as named there).
func BusyRefusal(path string) *Refusal {
	return &Refusal{Device: path, Rule: RuleInUse,
		Reasons: []string{"the kernel refuses an exclusive open (EBUSY): it is mounted, swap, or held by RAID, LVM or device-mapper, perhaps in another mount namespace or container"},
		Msg:     path + " is in use"}
}

// Claim is CheckWrite followed by the exclusive open, for a device on this
// host that fio will write: the caller keeps the Hold until fio is done and
// then releases it. Every local path that writes a device (targets, raw
// jobs naming one) should claim it rather than only check it.
func (p Policy) Claim(ctx context.Context, facts Facts, path string, writers []string) (*Hold, error) {
	if err := p.CheckWrite(ctx, facts, path, writers); err != nil {
		return nil, err
	}
	return HoldExclusive(path)
}

// Release ends the hold. It is safe to call more than once.
func (h *Hold) Release() error {
	if h == nil || h.fd < 0 {
		return nil
	}
	err := unix.Close(h.fd)
	h.fd = -1
	if err != nil {
		return fmt.Errorf("releasing %s: %w", h.path, err)
	}
	return nil
}
