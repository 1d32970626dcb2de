package local

import (
	"bufio"
	"bytes"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/sysfacts"
)

// HostLabels describes this host: hostname, kernel, arch, CPU model.
func HostLabels() map[string]string {
	l := map[string]string{string(result.LabelArch): runtime.GOARCH}
	if h, err := os.Hostname(); err == nil {
		result.LabelHostname.Set(l, h)
	}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		result.LabelKernel.Set(l, unix.ByteSliceToString(u.Release[:]))
	}
	if m := cpuModel("/proc/cpuinfo"); m != "" {
		result.LabelCPUModel.Set(l, m)
	}
	return l
}

func cpuModel(path string) string {
	data, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	var hardware string
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		switch strings.TrimSpace(k) {
		case "model name":
			return strings.TrimSpace(v)
		case "Model", "Hardware": // Raspberry Pi and other ARM boards
			hardware = strings.TrimSpace(v)
		}
	}
	return hardware
}

// environment labels the storage under dir (a directory target) or the
// named block device (a device target).
func (t *Target) environment(dir, devName string) map[string]string {
	l := HostLabels()
	root := t.root()
	if dir != "" {
		if m, ok := mountFor(root, dir); ok {
			result.LabelFSType.Set(l, m.fsType)
			result.LabelMountPoint.Set(l, m.mountPoint)
			result.LabelMountSource.Set(l, m.source)
			devName = blockName(root, m.devnum)
		}
	}
	if devName != "" {
		result.LabelDevice.Set(l, devName)
		disk := parentDisk(root, devName)
		if disk != devName {
			result.LabelDisk.Set(l, disk)
		}
		sys := filepath.Join(root, "sys/class/block", disk)
		if v := readTrim(filepath.Join(sys, "device/model")); v != "" {
			result.LabelDeviceModel.Set(l, v)
		}
		if v := readTrim(filepath.Join(sys, "queue/rotational")); v != "" {
			result.LabelRotational.Set(l, v)
		}
		if v := readTrim(filepath.Join(sys, "loop/backing_file")); v != "" {
			result.LabelLoopBackingFile.Set(l, v)
		}
		if v := readTrim(filepath.Join(sys, "queue/scheduler")); v != "" {
			result.LabelScheduler.Set(l, v)
		}
	}
	disk := result.LabelDisk.Of(l)
	if disk == "" {
		disk = devName
	}
	maps.Copy(l, sysfacts.Read(sysfacts.Dir(root), disk, sysfacts.DefaultInterface(root)).Labels())
	return l
}

type mount struct {
	devnum, mountPoint, fsType, source string
}

// mountFor finds the mount holding path: the longest mount point prefix.
func mountFor(root, path string) (mount, bool) {
	data, err := os.ReadFile(filepath.Join(root, "proc/self/mountinfo"))
	if err != nil {
		return mount{}, false
	}
	if r, err := filepath.EvalSymlinks(path); err == nil {
		path = r
	}
	var best mount
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		sep := -1
		for i, v := range f {
			if v == "-" {
				sep = i
				break
			}
		}
		if sep < 0 || len(f) < sep+3 || len(f) < 5 {
			continue
		}
		mp := safety.UnescapeMount(f[4])
		if !within(path, mp) || len(mp) < len(best.mountPoint) {
			continue
		}
		best = mount{devnum: f[2], mountPoint: mp, fsType: f[sep+1], source: safety.UnescapeMount(f[sep+2])}
	}
	return best, best.mountPoint != ""
}

func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// blockName maps "major:minor" to the kernel's block device name.
func blockName(root, devnum string) string {
	target, err := filepath.EvalSymlinks(filepath.Join(root, "sys/dev/block", devnum))
	if err != nil {
		return ""
	}
	return filepath.Base(target)
}

// parentDisk returns the whole disk a partition belongs to (sda1 -> sda).
func parentDisk(root, name string) string {
	target, err := filepath.EvalSymlinks(filepath.Join(root, "sys/class/block", name))
	if err != nil {
		return name
	}
	if _, err := os.Stat(filepath.Join(target, "partition")); err == nil {
		return filepath.Base(filepath.Dir(target))
	}
	return name
}

func readTrim(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
