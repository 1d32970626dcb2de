package analysis

import "time"

// ProbeFigures are the percentiles of one latency probe measurement.
type ProbeFigures struct {
	P50  time.Duration `json:"p50_ns"`
	P99  time.Duration `json:"p99_ns"`
	P999 time.Duration `json:"p999_ns"`
	Max  time.Duration `json:"max_ns"`
}

// ContentionReport is one probe measured alone and under load on one
// target: internal/contention pairs a contention round's results into
// these.
type ContentionReport struct {
	Target     string `json:"target"`
	Probe      string `json:"probe"`
	Repetition int    `json:"repetition"`
	// Latency names the distribution compared: "fdatasync" when the probe
	// synced, else "read" or "write" completion latency.
	Latency string       `json:"latency"`
	Alone   ProbeFigures `json:"alone"`
	Loaded  ProbeFigures `json:"loaded"`
	// Slowdown is loaded p99 over alone p99.
	Slowdown float64 `json:"slowdown"`
	// NoiseBytesPerSec is the bulk writer's throughput; 0 if it failed.
	NoiseBytesPerSec float64 `json:"noise_bytes_per_sec"`
	// TimeoutPercent estimates the share of loaded probe operations that
	// took longer than contention.ProbeTimeout (1 s), from the latency distribution;
	// TimeoutBound says how to read it: "about", "less than", "more than".
	TimeoutPercent float64 `json:"timeout_percent"`
	TimeoutBound   string  `json:"timeout_bound"`
	// EtcdPass says whether the loaded fdatasync p99 is within
	// contention.EtcdSyncP99 (10 ms); nil when the probe does not sync.
	EtcdPass *bool `json:"etcd_pass,omitempty"`
	// Verdict says all of it in words.
	Verdict string `json:"verdict"`
	// AloneLimitedBy and LoadedLimitedBy carry the bottleneck attribution.
	AloneLimitedBy  string `json:"alone_limited_by,omitempty"`
	LoadedLimitedBy string `json:"loaded_limited_by,omitempty"`
	// Shared says what the probe and the copy contend for on distributed
	// storage (an RBD pool's OSDs, a GlusterFS volume's bricks, the
	// sampled links); nil when the results carry no such figures.
	Shared *ContentionShared `json:"shared,omitempty"`
}
