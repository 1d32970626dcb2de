package safety

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Device is what storbench knows of a block device before touching it.
type Device struct {
	Path       string // resolved /dev path
	Name       string // kernel name, e.g. sda, nvme0n1, loop3
	Major      uint32
	Minor      uint32
	SizeBytes  int64
	Partitions []string
	Holders    []string
	Mounts     []string // "<device> on <mount point>"
	Swaps      []string
	// Loops are loop devices whose backing file is this device (at any
	// offset), a file on a filesystem of it, or, for a loop device, its own
	// backing file.
	Loops []string
	// Signature joins Signatures, "" if none.
	Signature string
	// Signatures are the filesystem, RAID, LVM, crypto or partition-table
	// signatures found (see ProbeBlank).
	Signatures []string
	// Unproven says why the device could not be proven blank.
	Unproven []string
	// ReadOnly is the kernel's read-only flag (blockdev --setro).
	ReadOnly bool
}

// InUse lists why writing to the device would destroy something.
func (d *Device) InUse() []string {
	var r []string
	if len(d.Mounts) > 0 {
		r = append(r, "mounted: "+strings.Join(d.Mounts, ", "))
	}
	if len(d.Swaps) > 0 {
		r = append(r, "in use as swap: "+strings.Join(d.Swaps, ", "))
	}
	if len(d.Partitions) > 0 {
		r = append(r, "has partitions: "+strings.Join(d.Partitions, ", "))
	}
	if len(d.Holders) > 0 {
		r = append(r, "held by "+strings.Join(d.Holders, ", ")+" (device-mapper, RAID or LVM)")
	}
	if len(d.Loops) > 0 {
		r = append(r, "loop devices read it or its backing file: "+strings.Join(d.Loops, ", ")+" (detach them with losetup -d)")
	}
	if len(d.Signatures) > 0 {
		r = append(r, "carries a signature: "+d.Signature+" (erase it yourself with wipefs -a if you mean to)")
	}
	return r
}

// LocalFacts reads device facts on this host from /sys, /proc and the
// device itself.
type LocalFacts struct {
	// Root is the root of /sys and /proc, for tests; "" means "/".
	Root string
}

var _ Facts = LocalFacts{}

// Device implements Facts.
func (f LocalFacts) Device(ctx context.Context, path string) (*Device, error) {
	root := f.Root
	if root == "" {
		root = "/"
	}
	return inspectDevice(ctx, root, path)
}

func inspectDevice(ctx context.Context, root, path string) (*Device, error) {
	resolved, err := filepath.EvalSymlinks(path)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	var st unix.Stat_t
	if err := unix.Stat(resolved, &st); err != nil {
		return nil, fmt.Errorf("target %s: %w", path, err)
	}
	if st.Mode&unix.S_IFMT != unix.S_IFBLK {
		return nil, fmt.Errorf("target %s is not a block device", path)
	}
	d := &Device{Path: resolved, Major: unix.Major(uint64(st.Rdev)), Minor: unix.Minor(uint64(st.Rdev))}
	sysLink := filepath.Join(root, "sys/dev/block", fmt.Sprintf("%d:%d", d.Major, d.Minor))
	sysDir, err := filepath.EvalSymlinks(sysLink)
	if err != nil {
		return nil, fmt.Errorf("target %s: finding it in /sys: %w", path, err)
	}
	d.Name = filepath.Base(sysDir)
	if b, err := os.ReadFile(filepath.Join(sysDir, "size")); err == nil {
		sectors, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		d.SizeBytes = sectors * 512
	}
	devnums := map[string]string{fmt.Sprintf("%d:%d", d.Major, d.Minor): d.Name}
	entries, _ := os.ReadDir(sysDir)
	for _, e := range entries {
		if _, err := os.Stat(filepath.Join(sysDir, e.Name(), "partition")); err == nil {
			d.Partitions = append(d.Partitions, e.Name())
			if b, err := os.ReadFile(filepath.Join(sysDir, e.Name(), "dev")); err == nil {
				devnums[strings.TrimSpace(string(b))] = e.Name()
			}
			d.Holders = append(d.Holders, holders(filepath.Join(sysDir, e.Name()))...)
		}
	}
	d.Holders = append(d.Holders, holders(sysDir)...)
	d.ReadOnly = readTrim(filepath.Join(sysDir, "ro")) == "1"
	d.Mounts = mountsOf(root, devnums)
	d.Swaps = swapsOf(root, devnums)
	var shared *backingFile
	if root == "/" && strings.HasPrefix(d.Name, "loop") {
		if b, err := loopBacking(resolved); err == nil {
			shared = &b.backingFile
		}
	}
	d.Loops = loopsOf(root, devnums, shared)
	b := ProbeBlank(ctx, resolved)
	d.Signatures, d.Unproven = b.Signatures, b.Unproven
	d.Signature = strings.Join(d.Signatures, ", ")
	return d, nil
}

func holders(sysDir string) []string {
	var out []string
	entries, _ := os.ReadDir(filepath.Join(sysDir, "holders"))
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// mountsOf finds mounts of any of the device numbers in /proc/self/mountinfo.
func mountsOf(root string, devnums map[string]string) []string {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 5 {
			continue
		}
		if name, ok := devnums[f[2]]; ok {
			out = append(out, name+" on "+UnescapeMount(f[4]))
		}
	}
	return out
}

func swapsOf(root string, devnums map[string]string) []string {
	data, err := os.ReadFile(filepath.Join(root, "proc/swaps"))
	if err != nil {
		return nil
	}
	var out []string
	for _, line := range strings.Split(string(data), "\n")[1:] {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		var st unix.Stat_t
		if unix.Stat(f[0], &st) == nil {
			key := fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev)))
			if _, ok := devnums[key]; ok {
				out = append(out, f[0])
			}
		}
	}
	return out
}

// UnescapeMount undoes the octal escapes of /proc/self/mountinfo fields.
func UnescapeMount(s string) string {
	r := strings.NewReplacer(`\040`, " ", `\011`, "\t", `\012`, "\n", `\134`, `\`)
	return r.Replace(s)
}
