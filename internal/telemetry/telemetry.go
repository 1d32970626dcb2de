// Package telemetry samples the host that runs fio while a workload runs:
// CPU use (/proc/stat), the tested device's utilisation, queue depth and
// throughput (/proc/diskstats), I/O pressure (/proc/pressure/io), CPU
// temperature (/sys/class/thermal), CPU frequency (cpufreq), Raspberry Pi
// throttling (get_throttled) and, for network-backed targets, the traffic of
// the interface that carries them against its link speed. It condenses the
// samples into summaries and a compact time series, and attributes each
// result to what limited it (Attribute). A source the host lacks is skipped
// and named in Telemetry.Missing; nothing here prints.
package telemetry

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// DefaultInterval is how often a Recording samples.
const DefaultInterval = time.Second

// Config says what to sample.
type Config struct {
	// Root is where /proc and /sys are found; "" means "/". Tests point it
	// at recorded snapshots.
	Root string
	// Host names the sampled host in the result.
	Host string
	// Device is the block device (as named in /proc/diskstats) holding the
	// target; "" when there is none (a network filesystem).
	Device string
	// NoDevice says why there is no Device, listed as a missing source.
	NoDevice string
	// BusiestDevice, when Device is unknown, samples every disk and
	// reports the one that moved the most bytes over the recording (a
	// replica or server node, whose disk under the data is not known,
	// writes the data on it); its Sources["disk"] says it was chosen so.
	BusiestDevice bool
	// Interface carries a network-backed target; "" for local storage.
	Interface string
	// NetRoot is where Interface's /sys/class/net is found when it is not
	// under Root (a pod's own network namespace hides the node's
	// interfaces; a host-network sampler pod's copy shows them); "" means
	// Root.
	NetRoot string
	// Sources names where groups of series come from (result.Telemetry's
	// Sources), for runners that read a host more than one way.
	Sources map[string]string
	// NetOnly samples Interface alone: the runner can read nothing else
	// of this host and says why in Missing.
	NetOnly bool
	// Interval between samples; 0 means DefaultInterval.
	Interval time.Duration
	// Missing are sources the runner knows it cannot offer, each as
	// "source: reason", listed with those New finds missing.
	Missing []string
}

// Sampler knows which sources this host has. It is safe to Start many
// recordings from one Sampler, one after the other.
type Sampler struct {
	cfg       Config
	stat      string
	diskstats string
	pressure  string
	temps     []string
	freqs     []string
	maxMHz    float64
	throttled string // sysfs file, or "" to use vcgencmdPath
	vcgencmd  string
	netRx     string
	netTx     string
	linkBPS   float64
	missing   []string
}

// New probes the sources once; a source that cannot be read now is listed
// as missing and never sampled.
func New(cfg Config) *Sampler {
	if cfg.Root == "" {
		cfg.Root = "/"
	}
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	s := &Sampler{cfg: cfg, missing: append([]string(nil), cfg.Missing...)}
	root := cfg.Root
	path := func(p string) string { return filepath.Join(root, p) }
	buf := make([]byte, 0, 16<<10)

	if !cfg.NetOnly {
		s.probeHost(path, buf)
	}
	if cfg.Interface != "" {
		netRoot := root
		if cfg.NetRoot != "" {
			netRoot = cfg.NetRoot
		}
		dir := filepath.Join(netRoot, "sys/class/net", cfg.Interface)
		s.netRx, s.netTx = filepath.Join(dir, "statistics/rx_bytes"), filepath.Join(dir, "statistics/tx_bytes")
		if _, err := readInt(s.netRx, buf); err != nil {
			s.netRx, s.netTx = "", ""
			s.missing = append(s.missing, "network: interface "+cfg.Interface+" has no statistics")
		} else if mbps, err := readInt(filepath.Join(dir, "speed"), buf); err == nil && mbps > 0 {
			s.linkBPS = float64(mbps) * 1e6 / 8
		} else {
			s.missing = append(s.missing, "link speed: "+cfg.Interface+" does not report one (Wi-Fi, virtual or down)")
		}
	}
	return s
}

// probeHost finds the host's CPU, disk, pressure, heat, frequency and
// throttling sources.
func (s *Sampler) probeHost(path func(string) string, buf []byte) {
	cfg, root := s.cfg, s.cfg.Root
	s.stat = path("proc/stat")
	if _, _, err := readProcStat(s.stat, buf); err != nil {
		s.stat = ""
		s.missing = append(s.missing, "cpu: "+err.Error())
	}
	switch {
	case cfg.Device != "":
		s.diskstats = path("proc/diskstats")
		if _, err := readDiskstats(s.diskstats, cfg.Device, buf); err != nil {
			s.diskstats = ""
			s.missing = append(s.missing, "diskstats: "+err.Error())
		}
	case cfg.BusiestDevice:
		s.diskstats = path("proc/diskstats")
		if _, err := readAllDiskstats(s.diskstats, buf); err != nil {
			s.diskstats = ""
			s.missing = append(s.missing, "diskstats: "+err.Error())
		}
	case cfg.NoDevice != "":
		s.missing = append(s.missing, "diskstats: "+cfg.NoDevice)
	default:
		s.missing = append(s.missing, "diskstats: the target's block device is unknown")
	}
	s.pressure = path("proc/pressure/io")
	if _, _, err := readPressure(s.pressure, buf); err != nil {
		s.pressure = ""
		s.missing = append(s.missing, "io pressure: /proc/pressure/io unavailable (kernel without PSI, or psi=0)")
	}
	if s.temps = thermalZones(root); len(s.temps) == 0 {
		s.missing = append(s.missing, "temperature: no readable /sys/class/thermal zone")
	}
	if s.freqs, s.maxMHz = freqFiles(root); len(s.freqs) == 0 {
		s.missing = append(s.missing, "cpu frequency: no cpufreq (virtual machine, or no cpufreq driver)")
	}
	if b, err := os.ReadFile(path(throttledFile)); err == nil {
		if _, err := parseThrottled(string(b)); err == nil {
			s.throttled = path(throttledFile)
		}
	}
	if s.throttled == "" {
		// Only the real host has a vcgencmd to ask.
		if p, err := exec.LookPath("vcgencmd"); err == nil && root == "/" {
			if _, err := vcgencmd(p); err == nil {
				s.vcgencmd = p
			}
		}
		if s.vcgencmd == "" {
			s.missing = append(s.missing, "throttling: no get_throttled (not a Raspberry Pi, or vcgencmd missing)")
		}
	}
}

// Missing lists the sources this host cannot provide.
func (s *Sampler) Missing() []string { return append([]string(nil), s.missing...) }

// snapshot is every counter and gauge read at one instant.
type snapshot struct {
	at        time.Time
	hasCPU    bool
	cpu       cpuTimes
	cores     []cpuTimes
	hasDisk   bool
	disk      diskCounters
	disks     map[string]diskCounters // every disk, in BusiestDevice mode
	hasPSI    bool
	psiSome   uint64
	psiFull   uint64
	hasTemp   bool
	tempC     float64
	hasFreq   bool
	freqMHz   float64
	hasThrot  bool
	throttled uint32
	hasNet    bool
	rx, tx    uint64
	// When a counter kept from an earlier snapshot (keepNewest) was read;
	// zero when read in this one.
	diskAt, psiAt, netAt time.Time
}

// read takes one snapshot. A source that fails now is absent from this
// snapshot only.
func (s *Sampler) read(at time.Time, buf []byte) snapshot {
	sn := snapshot{at: at}
	var err error
	if s.stat != "" {
		sn.cpu, sn.cores, err = readProcStat(s.stat, buf)
		sn.hasCPU = err == nil
	}
	switch {
	case s.diskstats == "":
	case s.cfg.Device == "" && s.cfg.BusiestDevice:
		sn.disks, err = readAllDiskstats(s.diskstats, buf)
		sn.hasDisk = err == nil
	default:
		sn.disk, err = readDiskstats(s.diskstats, s.cfg.Device, buf)
		sn.hasDisk = err == nil
	}
	if s.pressure != "" {
		sn.psiSome, sn.psiFull, err = readPressure(s.pressure, buf)
		sn.hasPSI = err == nil
	}
	for _, t := range s.temps {
		if v, err := readInt(t, buf); err == nil {
			c := float64(v) / 1000
			if !sn.hasTemp || c > sn.tempC {
				sn.tempC = c
			}
			sn.hasTemp = true
		}
	}
	var n int
	for _, f := range s.freqs {
		if v, err := readInt(f, buf); err == nil {
			sn.freqMHz += float64(v) / 1000
			n++
		}
	}
	if n > 0 {
		sn.freqMHz /= float64(n)
		sn.hasFreq = true
	}
	switch {
	case s.throttled != "":
		if b, err := readInto(s.throttled, buf); err == nil {
			sn.throttled, err = parseThrottled(string(b))
			sn.hasThrot = err == nil
		}
	case s.vcgencmd != "":
		sn.throttled, err = vcgencmd(s.vcgencmd)
		sn.hasThrot = err == nil
	}
	if s.netRx != "" {
		rx, err1 := readInt(s.netRx, buf)
		tx, err2 := readInt(s.netTx, buf)
		if err1 == nil && err2 == nil {
			sn.rx, sn.tx, sn.hasNet = uint64(rx), uint64(tx), true
		}
	}
	return sn
}

// Recording is one workload's sampling, started by Start and ended by Stop.
type Recording struct {
	s     *Sampler
	acc   *accumulator
	stop  chan struct{}
	done  chan struct{}
	once  sync.Once
	tel   *result.Telemetry
	buf   []byte
	clock func() time.Time
}

// Start takes the first snapshot now, before the workload begins, and then
// samples every interval in the background until Stop.
func (s *Sampler) Start() *Recording {
	r := &Recording{s: s, stop: make(chan struct{}), done: make(chan struct{}), buf: make([]byte, 0, 16<<10), clock: time.Now}
	r.acc = newAccumulator(s)
	r.acc.add(s.read(r.clock(), r.buf))
	go r.loop()
	return r
}

func (r *Recording) loop() {
	defer close(r.done)
	t := time.NewTicker(r.s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-r.stop:
			return
		case <-t.C:
			r.acc.add(r.s.read(r.clock(), r.buf))
		}
	}
}

// Stop takes a last snapshot, ends sampling and returns what was recorded.
// Calling it again returns the same telemetry.
func (r *Recording) Stop() *result.Telemetry {
	r.once.Do(func() {
		close(r.stop)
		<-r.done
		// The last partial interval counts too, so short workloads get a
		// sample; slivers under a tenth of the interval are noise as a
		// sample, but what happened in them counts in the totals.
		now := r.clock()
		if now.Sub(r.acc.last.at) >= r.s.cfg.Interval/10 || len(r.acc.offsets) == 0 {
			r.acc.add(r.s.read(now, r.buf))
		} else {
			r.acc.addToTotals(r.s.read(now, r.buf))
		}
		r.tel = r.acc.telemetry()
	})
	return r.tel
}

// round keeps four significant digits: the series stays small in the
// store and no reading is that precise.
func round(v float64) float64 {
	if v == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0
	}
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 4, 64), 64)
	return r
}
