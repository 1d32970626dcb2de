package result

import "time"

// SteadyState is what fio's steady-state detection (ss, ss_dur, ss_ramp)
// said about one workload: whether the chosen measure settled within the
// workload's maximum runtime, and when.
type SteadyState struct {
	// Criterion is fio's ss option as it reported it, e.g. "iops_slope:2%".
	Criterion string `json:"criterion"`
	// Window is fio's ss_dur: how long the measure had to stay within the
	// criterion.
	Window time.Duration `json:"window_ns"`
	// Reached reports whether fio saw the criterion hold for Window.
	Reached bool `json:"reached"`
	// After is how long the workload ran: until steady state when Reached,
	// else its maximum runtime.
	After time.Duration `json:"after_ns"`
	// Measured is the criterion value fio computed last (a slope or a
	// deviation, in percent of the mean where the criterion is one).
	Measured string `json:"measured,omitempty"`
}

// WriteCliff is where sustained write throughput fell: the SSD's cache (or
// its fresh blocks) ran out. Found by package cliff on fio's bandwidth log.
type WriteCliff struct {
	// AtBytes is how much had been written when throughput fell; At is when.
	AtBytes int64         `json:"at_bytes"`
	At      time.Duration `json:"at_ns"`
	// BeforeBytesPerSec and AfterBytesPerSec are the mean throughputs of the
	// two segments.
	BeforeBytesPerSec float64 `json:"before_bytes_per_sec"`
	AfterBytesPerSec  float64 `json:"after_bytes_per_sec"`
	// TotalBytes is the whole span written and Duration its time.
	TotalBytes int64         `json:"total_bytes"`
	Duration   time.Duration `json:"duration_ns"`
}

// CacheRisk says a workload's span fits in memory that can cache it, so the
// figures may measure that cache rather than the storage.
type CacheRisk struct {
	SpanBytes  int64 `json:"span_bytes"`
	CacheBytes int64 `json:"cache_bytes"`
	// CacheSource says whose memory: "host RAM", "node memory", "label mem_bytes".
	CacheSource string `json:"cache_source"`
	// Dropped reports that the page cache here was dropped before the
	// workload; Remote that the storage is network storage whose server
	// cache cannot be dropped from here.
	Dropped bool `json:"dropped,omitempty"`
	Remote  bool `json:"remote,omitempty"`
}

// Precondition records the SNIA PTS style fill done before a workload: the
// device written sequentially Passes times.
type Precondition struct {
	Passes   int           `json:"passes"`
	Bytes    int64         `json:"bytes"`
	Duration time.Duration `json:"duration_ns"`
}

// ResultLabel reports whether a label key describes one result (a check
// made on that workload) rather than the target it ran on.
func ResultLabel(key string) bool {
	switch LabelKey(key) {
	case LabelSteadyState, LabelSteadyStateAfter, LabelCacheRisk, LabelCliffAtBytes, LabelCliffBeforeBPS,
		LabelCliffAfterBPS, LabelSustainedBPS, LabelPrecondition, LabelCPUIdle, LabelRepeatPrecision, LabelSubmissionBound:
		return true
	}
	return false
}
