package telemetry

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the kernel's USER_HZ, the unit of /proc/stat: 100 on every
// Linux architecture storbench builds for.
const userHZ = 100

// cpuTimes is one cpu line of /proc/stat, in USER_HZ ticks.
type cpuTimes struct {
	user, nice, system, idle, iowait, irq, softirq, steal uint64
}

// total excludes guest time, which the kernel already counts in user.
func (c cpuTimes) total() uint64 {
	return c.user + c.nice + c.system + c.idle + c.iowait + c.irq + c.softirq + c.steal
}

// busy counts steal: time the hypervisor took is time the workload could
// not use.
func (c cpuTimes) busy() uint64 { return c.total() - c.idle - c.iowait }

// readProcStat parses the aggregate and per-core cpu lines of /proc/stat.
func readProcStat(path string, buf []byte) (all cpuTimes, cores []cpuTimes, err error) {
	data, err := readInto(path, buf)
	if err != nil {
		return all, nil, err
	}
	found := false
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		if !bytes.HasPrefix(line, []byte("cpu")) {
			if found {
				break // the cpu lines come first; the rest is not needed
			}
			continue
		}
		f := strings.Fields(string(line))
		if len(f) < 5 {
			return all, nil, fmt.Errorf("%s: short cpu line %q", path, line)
		}
		var v [8]uint64
		for i := 0; i < 8 && i+1 < len(f); i++ {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				return all, nil, fmt.Errorf("%s: %q: %w", path, line, err)
			}
		}
		t := cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
		if f[0] == "cpu" {
			all, found = t, true
		} else {
			cores = append(cores, t)
		}
	}
	if !found {
		return all, nil, fmt.Errorf("%s: no cpu line", path)
	}
	return all, cores, nil
}

// diskCounters is one device's line of /proc/diskstats.
type diskCounters struct {
	reads, readSectors, writes, writeSectors uint64
	ioTicksMS, weightedMS                    uint64
}

func readDiskstats(path, device string, buf []byte) (diskCounters, error) {
	var found *diskCounters
	err := eachDisk(path, buf, func(name string, d diskCounters) bool {
		if name == device {
			found = &d
			return false
		}
		return true
	})
	switch {
	case err != nil:
		return diskCounters{}, fmt.Errorf("%s: %s: %w", path, device, err)
	case found == nil:
		return diskCounters{}, fmt.Errorf("%s has no device %s", path, device)
	}
	return *found, nil
}

// readAllDiskstats returns the counters of every device in
// /proc/diskstats but RAM disks and zram (swap in memory, not storage).
func readAllDiskstats(path string, buf []byte) (map[string]diskCounters, error) {
	all := map[string]diskCounters{}
	err := eachDisk(path, buf, func(name string, d diskCounters) bool {
		if !strings.HasPrefix(name, "ram") && !strings.HasPrefix(name, "zram") {
			all[name] = d
		}
		return true
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return all, nil
}

// eachDisk calls f with each device line of /proc/diskstats until f
// returns false.
func eachDisk(path string, buf []byte, f func(string, diskCounters) bool) error {
	data, err := readInto(path, buf)
	if err != nil {
		return err
	}
	for len(data) > 0 {
		var line []byte
		line, data, _ = bytes.Cut(data, []byte{'\n'})
		fs := bytes.Fields(line)
		if len(fs) < 14 {
			continue
		}
		var v [14]uint64
		for i := 3; i < 14; i++ {
			if v[i], err = strconv.ParseUint(string(fs[i]), 10, 64); err != nil {
				return fmt.Errorf("device %s: %w", fs[2], err)
			}
		}
		if !f(string(fs[2]), diskCounters{reads: v[3], readSectors: v[5], writes: v[7], writeSectors: v[9], ioTicksMS: v[12], weightedMS: v[13]}) {
			return nil
		}
	}
	return nil
}

// readPressure returns the cumulative stall times of /proc/pressure/io, in
// microseconds.
func readPressure(path string, buf []byte) (some, full uint64, err error) {
	data, err := readInto(path, buf)
	if err != nil {
		return 0, 0, err
	}
	var seen int
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		for _, kv := range f[1:] {
			v, ok := strings.CutPrefix(kv, "total=")
			if !ok {
				continue
			}
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				return 0, 0, fmt.Errorf("%s: %w", path, err)
			}
			switch f[0] {
			case "some":
				some, seen = n, seen+1
			case "full":
				full = n
			}
		}
	}
	if seen == 0 {
		return 0, 0, fmt.Errorf("%s: no \"some\" line", path)
	}
	return some, full, nil
}

// readInt reads a file holding one integer (sysfs style).
func readInt(path string, buf []byte) (int64, error) {
	data, err := readInto(path, buf)
	if err != nil {
		return 0, err
	}
	return strconv.ParseInt(string(bytes.TrimSpace(data)), 10, 64)
}

// readInto reads a small file into buf, growing it only when needed, so a
// sample allocates nothing in the steady state.
func readInto(path string, buf []byte) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	n := 0
	for {
		if n == len(buf) {
			buf = append(buf, make([]byte, len(buf)+4096)...)
		}
		m, err := f.Read(buf[n:])
		n += m
		if err != nil || m == 0 {
			return buf[:n], nil
		}
	}
}

// thermalZones picks the zones that measure the CPU or SoC; without any,
// every zone, since the hottest one is what throttles.
func thermalZones(root string) []string {
	dirs, _ := filepath.Glob(filepath.Join(root, "sys/class/thermal/thermal_zone*"))
	var cpu, all []string
	for _, d := range dirs {
		temp := filepath.Join(d, "temp")
		if _, err := readInt(temp, nil); err != nil {
			continue
		}
		all = append(all, temp)
		typ, _ := os.ReadFile(filepath.Join(d, "type"))
		t := strings.ToLower(string(typ))
		for _, k := range []string{"cpu", "soc", "x86_pkg", "coretemp", "k10temp", "package"} {
			if strings.Contains(t, k) {
				cpu = append(cpu, temp)
				break
			}
		}
	}
	if len(cpu) > 0 {
		return cpu
	}
	return all
}

// freqFiles returns the current-frequency files, one per cpufreq policy
// where the kernel groups cores (fewer reads), else one per core, and the
// highest frequency any core reaches, in MHz.
func freqFiles(root string) (cur []string, maxMHz float64) {
	for _, pattern := range []string{"sys/devices/system/cpu/cpufreq/policy[0-9]*", "sys/devices/system/cpu/cpu[0-9]*/cpufreq"} {
		dirs, _ := filepath.Glob(filepath.Join(root, pattern))
		for _, d := range dirs {
			f := filepath.Join(d, "scaling_cur_freq")
			if _, err := readInt(f, nil); err != nil {
				continue
			}
			cur = append(cur, f)
			if m, err := readInt(filepath.Join(d, "cpuinfo_max_freq"), nil); err == nil && float64(m)/1000 > maxMHz {
				maxMHz = float64(m) / 1000
			}
		}
		if len(cur) > 0 {
			return cur, maxMHz
		}
	}
	return nil, 0
}

// throttledFile is where Raspberry Pi OS kernels expose the firmware's
// get_throttled word, saving a vcgencmd process per sample.
const throttledFile = "sys/devices/platform/soc/soc:firmware/get_throttled"

// readThrottled parses the sysfs file (hex without 0x) or vcgencmd's
// "throttled=0x50005".
func parseThrottled(s string) (uint32, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "throttled=")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	v, err := strconv.ParseUint(s, 16, 32)
	if err != nil {
		return 0, fmt.Errorf("get_throttled: %q is not a hex number", s)
	}
	return uint32(v), nil
}

// vcgencmd runs "vcgencmd get_throttled" with a short timeout.
func vcgencmd(path string) (uint32, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "get_throttled").Output()
	if err != nil {
		return 0, fmt.Errorf("vcgencmd get_throttled: %w", err)
	}
	return parseThrottled(string(out))
}
