package analysis

import (
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// PrimaryMetric is the figure that best sums up a workload in one bar:
// the sync latency p99 for workloads that sync, bandwidth for large blocks
// (64 KiB and up, estimated as bytes per I/O), IOPS otherwise.
func (c *Comparison) PrimaryMetric(workload string) string {
	if m, ok := c.primary[workload]; ok {
		return m
	}
	return result.MetricLatP99
}

// primaryMetrics computes PrimaryMetric for every workload once.
func (c *Comparison) primaryMetrics() {
	type figs struct {
		bw, iops float64
		sync     bool
	}
	per := map[string]*figs{}
	for _, cell := range c.GroupCells {
		f := per[cell.Workload]
		if f == nil {
			f = &figs{}
			per[cell.Workload] = f
		}
		switch cell.Metric {
		case result.MetricSyncP99:
			f.sync = true
		case result.MetricBW:
			f.bw = cell.Mean
		case result.MetricIOPS:
			f.iops = cell.Mean
		}
	}
	c.primary = map[string]string{}
	for w, f := range per {
		c.primary[w] = PrimaryMetricOf(f.iops, f.bw, f.sync)
	}
}

// PrimaryMetricOf is PrimaryMetric for a workload measured at iops and
// bytesPerSec (any typical figures, e.g. means or medians) that synced or
// not.
func PrimaryMetricOf(iops, bytesPerSec float64, synced bool) string {
	switch {
	case synced:
		return result.MetricSyncP99
	case iops > 0 && bytesPerSec/iops >= 64<<10:
		return result.MetricBW
	case iops > 0:
		return result.MetricIOPS
	case bytesPerSec > 0:
		return result.MetricBW
	}
	return result.MetricLatP99
}

// Access patterns recognised from workload names, so advice works for the
// built-in suites (seq-read, rand-write-4k-qd1, etcd-fdatasync...) and for
// imported results named in the same style.
type pattern struct {
	random, read, write, qd1, sync bool
}

func patternOf(name string) pattern {
	n := strings.ToLower(name)
	p := pattern{
		random: strings.Contains(n, "rand"),
		read:   strings.Contains(n, "read"),
		write:  strings.Contains(n, "write"),
		sync:   strings.Contains(n, "sync"),
	}
	if strings.Contains(n, "rw") && !p.read && !p.write {
		p.read, p.write = true, true
	}
	for _, f := range strings.FieldsFunc(n, func(r rune) bool { return r == '-' || r == '_' || r == ' ' }) {
		if f == "qd1" || f == "q1t1" {
			p.qd1 = true
		}
	}
	return p
}
