// Package result holds storbench's data model: plain values with explicit units.
// Latencies are time.Duration (nanoseconds), throughput is bytes per second, and
// rates are I/O operations per second. Besides runs, results and device
// health it holds the plain answers of the other jobs (cleanup and import
// reports, doctor checks, StorageClasses, fio's live progress). Nothing
// here prints or knows SQL.
package result

import (
	"fmt"
	"sort"
	"time"
)

// Status is the state of a run or of one workload result.
type Status string

const (
	StatusRunning     Status = "running"
	StatusComplete    Status = "complete"
	StatusFailed      Status = "failed"
	StatusInterrupted Status = "interrupted"
	// StatusAbandoned is a run whose storbench process is gone (killed,
	// host rebooted) while it was still running.
	StatusAbandoned Status = "abandoned"
)

// Default round names. Local runs are "isolated": one target at a time.
const (
	RoundIsolated   = "isolated"
	RoundParallel   = "parallel"
	RoundContention = "contention"
	// RoundNetwork measures the links between the nodes of a run
	// (internal/netround); its results' targets name a pair, "a -> b".
	RoundNetwork = "network"
)

// The network round's workloads: TCP throughput from one node to another,
// and the round trip of 64-byte blocks with the link idle and while a
// transfer keeps it busy.
const (
	WorkloadTCPSend    = "tcp-send"
	WorkloadTCPRTTIdle = "tcp-rtt-idle"
	WorkloadTCPRTTBusy = "tcp-rtt-busy"
)

// Run is one invocation of storbench run (or one import): a suite executed on
// one or more targets.
type Run struct {
	ID        string            `json:"id"`
	Suite     string            `json:"suite"`
	Workloads []string          `json:"workloads"`
	Targets   []string          `json:"targets"`
	Labels    map[string]string `json:"labels,omitempty"`
	Status    Status            `json:"status"`
	Started   time.Time         `json:"started"`
	Finished  time.Time         `json:"finished,omitzero"`
	// Source says where the numbers come from: "storbench" for measured runs,
	// or the tool an import read (e.g. "fio-text", "csv").
	Source string `json:"source"`
	// Note carries free text such as an import's provenance or why a run failed.
	Note string `json:"note,omitempty"`
	// Process is the storbench process that ran it; nil for imports and
	// runs stored before it was recorded.
	Process *Process `json:"process,omitempty"`
}

// Process names one process for good: its pid alone may be reused, its pid
// with its start time and the boot it ran in may not.
type Process struct {
	PID int `json:"pid"`
	// StartTicks is the start time in clock ticks after boot (field 22 of
	// /proc/PID/stat).
	StartTicks uint64 `json:"start_ticks"`
	BootID     string `json:"boot_id"`
	Host       string `json:"host"`
}

// Result is one workload measured once on one target.
type Result struct {
	ID         int64             `json:"id,omitempty"`
	RunID      string            `json:"run_id"`
	Target     string            `json:"target"`
	Round      string            `json:"round"`
	Repetition int               `json:"repetition"`
	Workload   string            `json:"workload"`
	Labels     map[string]string `json:"labels,omitempty"`
	Status     Status            `json:"status"`
	Error      string            `json:"error,omitempty"`
	Started    time.Time         `json:"started"`
	Finished   time.Time         `json:"finished"`
	// Method describes how the figure was obtained when it was not measured by
	// storbench's own suite (e.g. "iozone -a, 4k record, random read").
	Method string `json:"method,omitempty"`
	// DisplayUnits names, per metric (MetricBW, MetricLatP99...), the unit
	// the figure was given in when imported ("MB/s", "ms"), so it can be
	// shown back that way. Values are always stored in base units.
	DisplayUnits map[string]string `json:"display_units,omitempty"`

	Read  *Direction `json:"read,omitempty"`
	Write *Direction `json:"write,omitempty"`
	Trim  *Direction `json:"trim,omitempty"`
	// Sync holds fio's fsync/fdatasync latency where the workload synced.
	Sync *Latency `json:"sync,omitempty"`
	CPU  CPU      `json:"cpu"`
	// Bottleneck says what limited the figures, with the evidence; nil when
	// nothing was sampled.
	Bottleneck *Attribution `json:"bottleneck,omitempty"`
	// Telemetry is what the host running fio did meanwhile; nil when the
	// target could not be sampled or telemetry was off.
	Telemetry *Telemetry `json:"telemetry,omitempty"`
	// SteadyState is fio's steady-state verdict where the workload asked
	// for one (--until-stable, steady_state: in a suite).
	SteadyState *SteadyState `json:"steady_state,omitempty"`
	// WriteCliff is where a sustained write's throughput fell, if it did.
	WriteCliff *WriteCliff `json:"write_cliff,omitempty"`
	// CacheRisk is set when the workload's span fits in memory that can
	// cache it.
	CacheRisk *CacheRisk `json:"cache_risk,omitempty"`
	// Precondition is the device fill done before this workload.
	Precondition *Precondition `json:"precondition,omitempty"`
	// RawFioJSON is fio's own output for this workload, kept so any figure can
	// be derived again later. Stores keep it compressed.
	RawFioJSON []byte `json:"-"`
}

// Attribution names what limited a result: "device", "cpu", "network",
// "thermal" or "unclear", with the evidence in words and figures.
type Attribution struct {
	LimitedBy string `json:"limited_by"`
	Evidence  string `json:"evidence"`
}

// Direction is what fio measured for reads, writes or trims.
type Direction struct {
	IOPS        float64       `json:"iops"`
	BytesPerSec float64       `json:"bytes_per_sec"`
	TotalIOs    int64         `json:"total_ios"`
	Bytes       int64         `json:"bytes"`
	Runtime     time.Duration `json:"runtime_ns"`
	// Completion latency (fio's clat) and total latency (fio's lat).
	Completion Latency `json:"clat"`
	Total      Latency `json:"lat"`
	Submission Latency `json:"slat"`
	// Errors counts I/O errors fio reported for this direction (short or
	// failed I/Os); the job's error code lives in Result.Error.
	Errors int64 `json:"errors,omitempty"`
}

// Waited is the latency an application waited for each I/O: fio's total
// latency (submission and completion) when the job recorded its
// percentiles, else the completion latency. They differ where submitting
// an I/O blocks until it is done: libaio on ceph-fuse completes a 4 KiB
// write inside io_submit, so at queue depth 1 its completion latency is
// microseconds while the write took milliseconds (deeper queues there
// wait to be reaped as well: engine.SubmissionBoundText).
func (d Direction) Waited() Latency {
	if len(d.Total.Percentiles) > 0 {
		return d.Total
	}
	return d.Completion
}

// Latency summarises a latency distribution. Zero values mean "not measured".
type Latency struct {
	Samples     int64         `json:"samples,omitempty"`
	Mean        time.Duration `json:"mean_ns"`
	StdDev      time.Duration `json:"stddev_ns"`
	Min         time.Duration `json:"min_ns"`
	Max         time.Duration `json:"max_ns"`
	Percentiles []Percentile  `json:"percentiles,omitempty"`
}

// Percentile is one point of a latency distribution: P is in percent (99.9).
type Percentile struct {
	P     float64       `json:"p"`
	Value time.Duration `json:"ns"`
}

// CPU is the share of one CPU the fio job used, in percent.
type CPU struct {
	UserPercent   float64 `json:"usr_percent"`
	SystemPercent float64 `json:"sys_percent"`
}

// At returns the latency at percentile p and whether it was recorded.
func (l Latency) At(p float64) (time.Duration, bool) {
	for _, q := range l.Percentiles {
		if q.P == p {
			return q.Value, true
		}
	}
	return 0, false
}

// Measured reports whether the distribution holds any data.
func (l Latency) Measured() bool {
	return l.Samples > 0 || l.Mean > 0 || len(l.Percentiles) > 0
}

// SortPercentiles orders percentiles from low to high.
func SortPercentiles(ps []Percentile) {
	sort.Slice(ps, func(i, j int) bool { return ps[i].P < ps[j].P })
}

// Directions returns the directions that saw I/O, in read, write, trim order,
// with their names.
func (r *Result) Directions() []NamedDirection {
	var out []NamedDirection
	for _, d := range []NamedDirection{{"read", r.Read}, {"write", r.Write}, {"trim", r.Trim}} {
		// Imported results may hold only latency figures for a direction.
		if d.Direction != nil && (d.Direction.TotalIOs > 0 || d.Direction.IOPS > 0 || d.Direction.BytesPerSec > 0 || d.Direction.Completion.Measured()) {
			out = append(out, d)
		}
	}
	return out
}

// NamedDirection pairs a direction with its name ("read", "write", "trim").
type NamedDirection struct {
	Name string
	*Direction
}

// NewRunID makes a run identifier that sorts by time and reads as one:
// 20261122-142305-3fa9. Users may type any unique prefix of it.
func NewRunID(now time.Time, random uint16) string {
	return fmt.Sprintf("%s-%04x", now.UTC().Format("20060102-150405"), random)
}

// Progress is fio's live status while a workload runs (its --status-interval
// reports), passed to whoever watches a run.
type Progress struct {
	Elapsed time.Duration
	// Remaining is fio's own estimate; zero when it does not know.
	Remaining   time.Duration
	IOPS        float64
	BytesPerSec float64
}
