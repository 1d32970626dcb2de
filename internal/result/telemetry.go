package result

import "time"

// Telemetry series names. Each is sampled about once a second while a
// workload runs; the unit is in the name's suffix: _pct percent, _c degrees
// Celsius, _mhz megahertz, _bps bytes per second, _iops operations per
// second; disk_queue_depth is the mean number of requests in flight.
const (
	SeriesCPUBusy        = "cpu_busy_pct"     // all cores, everything but idle and iowait
	SeriesCPUUser        = "cpu_user_pct"     // user + nice
	SeriesCPUSystem      = "cpu_system_pct"   // system + irq + softirq
	SeriesCPUIOWait      = "cpu_iowait_pct"   // idle with I/O outstanding
	SeriesCPUSteal       = "cpu_steal_pct"    // taken by the hypervisor
	SeriesCPUCoreMaxBusy = "cpu_core_max_pct" // the busiest single core
	SeriesDiskUtil       = "disk_util_pct"    // time the device had I/O in flight
	SeriesDiskQueue      = "disk_queue_depth"
	SeriesDiskReadBPS    = "disk_read_bps"
	SeriesDiskWriteBPS   = "disk_write_bps"
	SeriesDiskReadIOPS   = "disk_read_iops"
	SeriesDiskWriteIOPS  = "disk_write_iops"
	SeriesIOPressureSome = "io_pressure_some_pct" // PSI: some task stalled on I/O
	SeriesIOPressureFull = "io_pressure_full_pct" // PSI: all non-idle tasks stalled on I/O
	SeriesCPUTemp        = "cpu_temp_c"
	SeriesCPUFreq        = "cpu_freq_mhz" // mean over cores
	SeriesThrottled      = "throttled_flags"
	SeriesNetRxBPS       = "net_rx_bps"
	SeriesNetTxBPS       = "net_tx_bps"
	SeriesNetLinkUtil    = "net_link_pct" // max(rx, tx) against the link speed
)

// SeriesNames lists every telemetry series in display order.
var SeriesNames = []string{
	SeriesCPUBusy, SeriesCPUUser, SeriesCPUSystem, SeriesCPUIOWait, SeriesCPUSteal, SeriesCPUCoreMaxBusy,
	SeriesDiskUtil, SeriesDiskQueue, SeriesDiskReadBPS, SeriesDiskWriteBPS, SeriesDiskReadIOPS, SeriesDiskWriteIOPS,
	SeriesIOPressureSome, SeriesIOPressureFull, SeriesCPUTemp, SeriesCPUFreq, SeriesThrottled,
	SeriesNetRxBPS, SeriesNetTxBPS, SeriesNetLinkUtil,
}

// Telemetry is what the host running fio did while one workload ran.
type Telemetry struct {
	// Host is the host that was sampled.
	Host string `json:"host,omitempty"`
	// Interval is the sampling period asked for (samples may be shorter at
	// the end of a workload).
	Interval time.Duration `json:"interval_ns"`
	// CPUs is the number of cores /proc/stat reported.
	CPUs int `json:"cpus,omitempty"`
	// Device is the block device whose /proc/diskstats were sampled.
	Device string `json:"device,omitempty"`
	// Interface carries a network-backed target; LinkBytesPerSec is its
	// link speed (0 when the kernel does not know it, e.g. Wi-Fi).
	Interface       string  `json:"interface,omitempty"`
	LinkBytesPerSec float64 `json:"link_bytes_per_sec,omitempty"`
	// MaxFreqMHz is the highest frequency the CPU can reach (cpuinfo_max_freq).
	MaxFreqMHz float64 `json:"max_freq_mhz,omitempty"`
	// Throttled is every Raspberry Pi get_throttled flag seen during the
	// workload, ORed (bit 0 under-voltage, 1 frequency capped, 2 throttled,
	// 3 soft temperature limit).
	Throttled uint32 `json:"throttled,omitempty"`
	// Missing names the sources this host could not provide, each as
	// "source: reason"; they are skipped, not failures.
	Missing []string `json:"missing,omitempty"`
	// Sources names where a group of series was read when a runner reads
	// the host more than one way (key "cpu", "disk" or "network"; value
	// for example "host-network sampler pod NS/NAME" or "the kubelet's
	// Summary API"); absent groups were read from the host directly.
	Sources map[string]string `json:"sources,omitempty"`
	// Nodes are the run's other nodes sampled meanwhile (a replicated
	// volume's replica nodes, a network filesystem's server), each a
	// Telemetry of its own named by Host; empty on a local target.
	Nodes []*Telemetry `json:"nodes,omitempty"`
	// OSDs are the Ceph OSDs behind an RBD target's pool, measured for
	// this workload: which one holds the pool back (analysis.OSDVerdicts).
	OSDs []OSDFigures `json:"osds,omitempty"`
	// Bricks are the GlusterFS bricks behind a FUSE-mounted target, as
	// its client saw them during this workload (analysis.BrickVerdicts).
	Bricks  []BrickFigures     `json:"bricks,omitempty"`
	Totals  TelemetryTotals    `json:"totals"`
	Summary map[string]Summary `json:"summary,omitempty"`
	Series  *TelemetrySeries   `json:"series,omitempty"`
}

// TelemetryTotals are counters accumulated over the whole workload.
type TelemetryTotals struct {
	Elapsed time.Duration `json:"elapsed_ns"`
	// CPU time summed over all cores.
	CPUBusy   time.Duration `json:"cpu_busy_ns"`
	CPUUser   time.Duration `json:"cpu_user_ns"`
	CPUSystem time.Duration `json:"cpu_system_ns"`
	// Completed I/Os and bytes on Device.
	DiskReadIOs    int64 `json:"disk_read_ios"`
	DiskWriteIOs   int64 `json:"disk_write_ios"`
	DiskReadBytes  int64 `json:"disk_read_bytes"`
	DiskWriteBytes int64 `json:"disk_write_bytes"`
	// Bytes through Interface.
	NetRxBytes int64 `json:"net_rx_bytes,omitempty"`
	NetTxBytes int64 `json:"net_tx_bytes,omitempty"`
}

// Summary condenses one series.
type Summary struct {
	Min     float64 `json:"min"`
	Mean    float64 `json:"mean"`
	Max     float64 `json:"max"`
	Samples int     `json:"n"`
}

// TelemetrySeries is the time series, stored column-wise to stay compact:
// Values[name][i] was measured over the interval ending OffsetsMS[i]
// milliseconds after the workload started.
type TelemetrySeries struct {
	OffsetsMS []int64              `json:"t_ms"`
	Values    map[string][]float64 `json:"values"`
}

// Stat returns the summary of a series and whether it was sampled.
func (t *Telemetry) Stat(name string) (Summary, bool) {
	if t == nil {
		return Summary{}, false
	}
	s, ok := t.Summary[name]
	return s, ok && s.Samples > 0
}

// OSDFigures are one Ceph OSD's figures for one workload: its own object
// store's throughput (`ceph tell osd.N bench`, taken once before the run's
// first workload) and its commit latency (`ceph osd perf`) sampled while
// the workload ran.
type OSDFigures struct {
	ID     int    `json:"id"`
	Host   string `json:"host,omitempty"`   // the crush host: the node
	Device string `json:"device,omitempty"` // the disk holding its data
	Up     bool   `json:"up"`
	// BenchBytesPerSec is 0 when the bench did not run; BenchError then
	// says why.
	BenchBytesPerSec float64 `json:"bench_bytes_per_sec,omitempty"`
	BenchError       string  `json:"bench_error,omitempty"`
	// Commit are the commit latencies `ceph osd perf` reported during the
	// workload (Ceph refreshes them about every 5 s).
	Commit []time.Duration `json:"commit_ns,omitempty"`
	// RTT is the median round trip of a TCP connection to the OSD during
	// the workload (0: not measured).
	RTT time.Duration `json:"rtt_ns,omitempty"`
	// Greeting is the upper quartile of the waits, once such a connection
	// opened, for the OSD's banner (0: not measured): the OSD process
	// answers it, so a process short of CPU delays it, while a slow disk
	// does not.
	Greeting time.Duration `json:"greeting_ns,omitempty"`
	// DeviceWait and CommitMean are BlueStore's mean wait for the device
	// and mean commit over the workload (its counters read before and
	// after; 0: not read, or no transaction meanwhile).
	DeviceWait time.Duration `json:"device_wait_ns,omitempty"`
	CommitMean time.Duration `json:"commit_mean_ns,omitempty"`
}

// BrickFigures are one GlusterFS brick as the FUSE client saw it during
// one workload: whether it stayed connected, and the mean latency of the
// writes and reads the client sent it (the client's own profile, read
// from the mount's .meta directory: the time it waited for that brick).
type BrickFigures struct {
	Host  string `json:"host"`  // the brick's server
	Brick string `json:"brick"` // its directory there
	// Connected is false when the client lost the brick by the end of the
	// workload.
	Connected    bool          `json:"connected"`
	Writes       int64         `json:"writes,omitempty"`
	WriteLatency time.Duration `json:"write_latency_ns,omitempty"` // mean
	Reads        int64         `json:"reads,omitempty"`
	ReadLatency  time.Duration `json:"read_latency_ns,omitempty"` // mean
	// BytesSent and BytesReceived are the connection's bytes during the
	// workload (requests with their data, and replies).
	BytesSent     int64 `json:"bytes_sent,omitempty"`
	BytesReceived int64 `json:"bytes_received,omitempty"`
	// RTT is the median round trip of a TCP connection to the brick's
	// server during the workload (0: not measured): a full link delays it,
	// a slow disk or CPU does not (the kernel answers).
	RTT time.Duration `json:"rtt_ns,omitempty"`
}
