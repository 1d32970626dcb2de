package result

import "time"

// Metric names shared by import, compare, reports and verdicts. Throughput
// is in bytes per second, latencies in nanoseconds.
const (
	MetricIOPS    = "iops"
	MetricBW      = "bw"
	MetricLatMean = "lat_mean"
	MetricLatP50  = "lat_p50"
	MetricLatP90  = "lat_p90"
	MetricLatP99  = "lat_p99"
	MetricLatP999 = "lat_p999"
	MetricSyncP99 = "sync_p99"
)

// Metrics lists every metric name, in display order.
var Metrics = []string{MetricIOPS, MetricBW, MetricLatMean, MetricLatP50, MetricLatP90, MetricLatP99, MetricLatP999, MetricSyncP99}

// MetricUnit is the base unit a metric is stored in.
func MetricUnit(m string) string {
	switch m {
	case MetricIOPS:
		return "IOPS"
	case MetricBW:
		return "B/s"
	}
	return "ns"
}

// HigherIsBetter reports whether a larger value of the metric is better.
func HigherIsBetter(m string) bool { return m == MetricIOPS || m == MetricBW }

var metricPercentile = map[string]float64{MetricLatP50: 50, MetricLatP90: 90, MetricLatP99: 99, MetricLatP999: 99.9}

// Metric returns one figure of the result in base units. IOPS and bandwidth
// add up the directions (a 50/50 mix reports its total); a latency mean is
// weighted by each direction's I/O count; a latency percentile is the worst
// direction's (percentiles of separate distributions cannot be merged).
// Latency is fio's completion latency (clat). ok is false when the result
// does not hold the metric.
func (r *Result) Metric(m string) (v float64, ok bool) {
	dirs := r.Directions()
	switch m {
	case MetricIOPS, MetricBW:
		for _, d := range dirs {
			x := d.IOPS
			if m == MetricBW {
				x = d.BytesPerSec
			}
			if x > 0 {
				v += x
				ok = true
			}
		}
		return v, ok
	case MetricLatMean:
		var weight float64
		for _, d := range dirs {
			if d.Completion.Mean <= 0 {
				continue
			}
			w := float64(d.TotalIOs)
			if w <= 0 {
				w = 1
			}
			v += w * float64(d.Completion.Mean)
			weight += w
		}
		if weight == 0 {
			return 0, false
		}
		return v / weight, true
	case MetricSyncP99:
		if r.Sync == nil {
			return 0, false
		}
		d, ok := r.Sync.At(99)
		return float64(d), ok
	}
	p, known := metricPercentile[m]
	if !known {
		return 0, false
	}
	var worst time.Duration
	for _, d := range dirs {
		if x, has := d.Completion.At(p); has && x > worst {
			worst, ok = x, true
		}
	}
	return float64(worst), ok
}
