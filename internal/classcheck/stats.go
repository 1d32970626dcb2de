package classcheck

import (
	"math"
	"sort"
	"time"
)

// percentile is the nearest-rank percentile of the samples (q in 0..1).
func percentile(samples []time.Duration, q float64) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	rank := int(math.Ceil(q*float64(len(s)))) - 1
	if rank < 0 {
		rank = 0
	}
	return s[rank]
}

// Percentile is the nearest-rank percentile of a stage's samples; ok is
// false for a p95 (or above) of fewer than MinClaimsForP95 samples.
func (s Stage) Percentile(q float64) (d time.Duration, ok bool) {
	if len(s.Samples) == 0 || (q >= 0.95 && len(s.Samples) < MinClaimsForP95) {
		return 0, false
	}
	return percentile(s.Samples, q), true
}
