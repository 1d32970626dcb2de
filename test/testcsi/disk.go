package testcsi

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/safety"
)

// disk runs the programs that make images behave like disks: losetup,
// mkfs.ext4, resize2fs, mount, fsfreeze, cp. All nodes share one kernel, so
// a loop device or mount made by one process is seen by all.
type disk struct{ cmd execx.Cmder }

func (d disk) run(ctx context.Context, name string, args ...string) (string, error) {
	out, err := execx.Output(d.cmd.Command(ctx, name, args...))
	return strings.TrimSpace(string(out)), err
}

// createImage makes a new sparse file of size bytes; it fails when path
// exists.
func createImage(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return err
	}
	if err := f.Truncate(size); err != nil {
		f.Close()
		os.Remove(path)
		return err
	}
	return f.Close()
}

// growImage grows an image file to size bytes (never shrinks it).
func growImage(path string, size int64) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if fi.Size() >= size {
		return nil
	}
	return os.Truncate(path, size)
}

// loopDevices returns the loop devices backed by image.
func (d disk) loopDevices(ctx context.Context, image string) ([]string, error) {
	out, err := d.run(ctx, "losetup", "--list", "--json", "--output", "NAME,BACK-FILE")
	if err != nil {
		return nil, err
	}
	if out == "" { // no loop device at all
		return nil, nil
	}
	var list struct {
		Loopdevices []struct {
			Name     string `json:"name"`
			BackFile string `json:"back-file"`
		} `json:"loopdevices"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		return nil, fmt.Errorf("losetup --json: %w", err)
	}
	var devs []string
	for _, l := range list.Loopdevices {
		if filepath.Clean(l.BackFile) == filepath.Clean(image) {
			devs = append(devs, l.Name)
		}
	}
	return devs, nil
}

// attach makes image a loop device and returns its path.
func (d disk) attach(ctx context.Context, image string) (string, error) {
	return d.run(ctx, "losetup", "--find", "--show", image)
}

// detach frees a loop device and returns once it is gone. While anything
// still holds the device open (a blkid or losetup scan elsewhere, a mount
// the kernel is still tearing down), the kernel only marks it to be freed
// at the last close, and the device would still back its image when the
// volume is deleted next: so wait, bounded by ctx and 10 s, for its
// /sys/block/NAME/loop directory to go.
func (d disk) detach(ctx context.Context, dev string) error {
	if _, err := d.run(ctx, "losetup", "--detach", dev); err != nil {
		return err
	}
	sys := filepath.Join("/sys/block", filepath.Base(dev), "loop")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(sys); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s: still attached 10 s after losetup --detach (held open by another process)", dev)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// refresh makes a loop device see its image's new size.
func (d disk) refresh(ctx context.Context, dev string) error {
	_, err := d.run(ctx, "losetup", "--set-capacity", dev)
	return err
}

// Filesystems the driver formats: xfs by default, because its online
// growth needs only CAP_SYS_ADMIN; ext4's online resize needs
// CAP_SYS_RESOURCE, which a container's root often lacks.
const (
	fsXFS  = "xfs"
	fsExt4 = "ext4"
)

// minFSBytes is the smallest volume each filesystem accepts.
var minFSBytes = map[string]int64{fsXFS: 300 << 20, fsExt4: 16 << 20}

// detectFS names the filesystem at the start of path (an image or a
// device), or returns "" for none: ext4's magic 0xEF53 at byte 1080, xfs's
// "XFSB" at byte 0.
func detectFS(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	var head [1082]byte
	if _, err := f.ReadAt(head[:], 0); err != nil {
		return "", nil // too short to hold a filesystem
	}
	switch {
	case string(head[:4]) == "XFSB":
		return fsXFS, nil
	case binary.LittleEndian.Uint16(head[1080:]) == 0xEF53:
		return fsExt4, nil
	}
	return "", nil
}

func (d disk) mkfs(ctx context.Context, fsType, dev string) error {
	var err error
	switch fsType {
	case fsXFS:
		_, err = d.run(ctx, "mkfs.xfs", "-q", "-K", dev)
	case fsExt4:
		_, err = d.run(ctx, "mkfs.ext4", "-q", "-F", "-m", "0",
			"-E", "lazy_itable_init=1,lazy_journal_init=1,nodiscard", dev)
	default:
		err = fmt.Errorf("no filesystem %q", fsType)
	}
	return err
}

// growOffline grows an unmounted filesystem to fill its device; only ext4
// needs it (xfs grows when mounted).
func (d disk) growOffline(ctx context.Context, fsType, dev string) error {
	if fsType != fsExt4 {
		return nil
	}
	// resize2fs wants a freshly checked filesystem; -p repairs only what
	// is safe and exits 1 when it fixed something.
	if _, err := d.run(ctx, "e2fsck", "-f", "-p", dev); err != nil {
		var re *execx.RunError
		if !errors.As(err, &re) || re.ExitCode != 1 {
			return err
		}
	}
	_, err := d.run(ctx, "resize2fs", dev)
	return err
}

// growOnline grows a mounted filesystem to fill its device; nothing
// happens when it already does.
func (d disk) growOnline(ctx context.Context, fsType, dev, mountPoint string) error {
	var err error
	switch fsType {
	case fsXFS:
		_, err = d.run(ctx, "xfs_growfs", mountPoint)
	case fsExt4:
		_, err = d.run(ctx, "resize2fs", dev)
	default:
		err = fmt.Errorf("no filesystem %q", fsType)
	}
	return err
}

func (d disk) mount(ctx context.Context, fsType, dev, path string, options []string) error {
	if fsType == fsXFS {
		// Restores and clones carry their source's UUID; xfs refuses a
		// second mount of one UUID without this.
		options = append(slices.Clone(options), "nouuid")
	}
	args := []string{"-t", fsType}
	if len(options) > 0 {
		args = append(args, "-o", strings.Join(options, ","))
	}
	_, err := d.run(ctx, "mount", append(args, dev, path)...)
	return err
}

func (d disk) bindMount(ctx context.Context, src, dst string, readOnly bool) error {
	if _, err := d.run(ctx, "mount", "--bind", src, dst); err != nil {
		return err
	}
	if readOnly {
		_, err := d.run(ctx, "mount", "-o", "remount,bind,ro", dst)
		return err
	}
	return nil
}

// volatileMount publishes the staged filesystem src at dst through an
// overlay mounted volatile (no-fsync mode): its files live in src's
// .testcsi-upper, and every sync on dst is skipped.
func (d disk) volatileMount(ctx context.Context, src, dst string, readOnly bool) error {
	var dirs [3]string
	for i, n := range []string{".testcsi-lower", ".testcsi-upper", ".testcsi-work"} {
		dirs[i] = filepath.Join(src, n)
		if err := os.MkdirAll(dirs[i], 0o755); err != nil {
			return err
		}
	}
	// A volatile overlay's work directory keeps "incompat/volatile" after
	// it is unmounted, and the kernel refuses it again until it is gone: a
	// fresh one each time (the staged filesystem's own unmount syncs the
	// data in the upper directory).
	if err := os.RemoveAll(dirs[2]); err != nil {
		return err
	}
	if err := os.Mkdir(dirs[2], 0o755); err != nil {
		return err
	}
	opts := "lowerdir=" + dirs[0] + ",upperdir=" + dirs[1] + ",workdir=" + dirs[2] + ",volatile"
	if readOnly {
		opts += ",ro"
	}
	_, err := d.run(ctx, "mount", "-t", "overlay", "overlay", "-o", opts, dst)
	return err
}

// unmount unmounts path when it is a mount point.
func (d disk) unmount(ctx context.Context, path string) error {
	for {
		mounted, err := isMountPoint(path)
		if err != nil || !mounted {
			return err
		}
		if _, err := d.run(ctx, "umount", path); err != nil {
			return err
		}
	}
}

// copyImage copies src to dst as a point in time: every filesystem on a
// loop device of src is frozen (or the device flushed) while cp runs.
func (d disk) copyImage(ctx context.Context, src, dst string) (err error) {
	devs, err := d.loopDevices(ctx, src)
	if err != nil {
		return err
	}
	for _, dev := range devs {
		mps, err := mountPoints(dev)
		if err != nil {
			return err
		}
		if len(mps) == 0 {
			if _, err := d.run(ctx, "blockdev", "--flushbufs", dev); err != nil {
				return err
			}
			continue
		}
		// One superblock: freezing one of its mount points freezes all.
		if _, err := d.run(ctx, "fsfreeze", "--freeze", mps[0]); err != nil {
			return err
		}
		defer func(dev string) {
			// Thawing must not depend on the caller's context.
			if uerr := d.thaw(context.WithoutCancel(ctx), dev); uerr != nil && err == nil {
				err = uerr
			}
		}(dev)
	}
	tmp := dst + ".tmp"
	if _, err := d.run(ctx, "cp", "--sparse=always", src, tmp); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, dst)
}

// thaw unfreezes the filesystem on dev through a mount point it has now.
// The one it was frozen through may be gone: the kubelet unmounts a
// deleted pod's publish path whenever it gets to it, a copy may be running
// then, and the unmount succeeds on a frozen filesystem. A filesystem left
// frozen stalls every writer of the volume, and one with no mount point
// left lives on, holding its device, until it is mounted again to be
// thawed, which thaw then does on a directory of its own.
func (d disk) thaw(ctx context.Context, dev string) error {
	mps, err := mountPoints(dev)
	if err != nil {
		return err
	}
	if len(mps) == 0 {
		dir, err := os.MkdirTemp("", "testcsi-thaw-")
		if err != nil {
			return err
		}
		defer os.Remove(dir)
		if _, err := d.run(ctx, "mount", dev, dir); err != nil {
			return fmt.Errorf("mounting %s to thaw it: %w", dev, err)
		}
		defer d.run(ctx, "umount", dir)
		mps = []string{dir}
	}
	var errs []error
	for _, mp := range mps {
		_, err := d.run(ctx, "fsfreeze", "--unfreeze", mp)
		if err == nil {
			return nil
		}
		errs = append(errs, err)
	}
	return fmt.Errorf("thawing %s: %w", dev, errors.Join(errs...))
}

// mountInfo is one line of /proc/self/mountinfo.
type mountInfo struct{ point, source, fsType string }

func readMountInfo() ([]mountInfo, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []mountInfo
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		sep := -1
		for i, f := range fields {
			if f == "-" {
				sep = i
				break
			}
		}
		if len(fields) < 5 || sep < 0 || sep+2 >= len(fields) {
			continue
		}
		out = append(out, mountInfo{point: safety.UnescapeMount(fields[4]), source: safety.UnescapeMount(fields[sep+2]), fsType: fields[sep+1]})
	}
	return out, sc.Err()
}

func isMountPoint(path string) (bool, error) {
	mis, err := readMountInfo()
	if err != nil {
		return false, err
	}
	clean := filepath.Clean(path)
	for _, m := range mis {
		if m.point == clean {
			return true, nil
		}
	}
	return false, nil
}

// mountPoints lists where dev is mounted.
func mountPoints(dev string) ([]string, error) {
	mis, err := readMountInfo()
	if err != nil {
		return nil, err
	}
	var out []string
	for _, m := range mis {
		if m.source == dev {
			out = append(out, m.point)
		}
	}
	return out, nil
}

func exists(path string) (bool, error) {
	_, err := os.Stat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}
