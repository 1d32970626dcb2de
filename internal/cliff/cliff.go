// Package cliff finds the SSD write cliff in a sustained write: the point
// where throughput falls from one level to a lower one and stays there,
// because the drive's fast cache (SLC, DRAM) or its pool of fresh blocks ran
// out. It works on the bandwidth series fio logs (write_bw_log) and is a
// pure function of it. Unlike internal/analysis (results compared with each
// other) and internal/trend (a series of runs over time), it looks inside a
// single result; the engine records what it finds as that result's
// WriteCliff and labels.
//
// Method: two-segment least squares. Every split point k of the series is
// tried; the series is modelled as one mean before k and another after, and
// the split with the smallest sum of squared errors wins (the first step
// of binary segmentation, Scott and Knott 1974). The split is a cliff when
// the later level is at least MinDrop below the earlier one, both levels hold
// at least MinSamples samples, and the two levels explain at least
// MinExplained of the series' variance (a steady slide explains about 75%,
// a step with ordinary noise well over 90%).
package cliff

import (
	"math"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
)

// Sample is one averaged period of a bandwidth log: At is the end of the
// period from the start of the write.
type Sample struct {
	At          time.Duration
	BytesPerSec float64
}

// Options tune what counts as a cliff; zero fields take the defaults.
type Options struct {
	// MinDrop is the smallest relative fall reported (default 0.3: the
	// later level is at most 70% of the earlier).
	MinDrop float64
	// MinSamples is the fewest samples each level needs (default 3).
	MinSamples int
	// MinExplained is the least share of the variance the two levels must
	// explain (default 0.85).
	MinExplained float64
}

func (o Options) withDefaults() Options {
	if o.MinDrop == 0 {
		o.MinDrop = 0.3
	}
	if o.MinSamples == 0 {
		o.MinSamples = 3
	}
	if o.MinExplained == 0 {
		o.MinExplained = 0.85
	}
	return o
}

// Analysis is the outcome for one series: the cliff if there is one, and
// the series' totals either way.
type Analysis struct {
	Cliff *result.WriteCliff
	// TotalBytes and Duration cover the whole series; MeanBytesPerSec is
	// TotalBytes / Duration.
	TotalBytes      int64
	Duration        time.Duration
	MeanBytesPerSec float64
}

// Find looks for a write cliff in samples, which must be in time order.
func Find(samples []Sample, opts Options) Analysis {
	o := opts.withDefaults()
	n := len(samples)
	var a Analysis
	if n == 0 {
		return a
	}
	// Bytes written by the end of each sample: bandwidth times the period.
	cum := make([]float64, n)
	var prev time.Duration
	var total float64
	for i, s := range samples {
		total += s.BytesPerSec * (s.At - prev).Seconds()
		cum[i] = total
		prev = s.At
	}
	a.TotalBytes, a.Duration = int64(total), samples[n-1].At
	if a.Duration > 0 {
		a.MeanBytesPerSec = total / a.Duration.Seconds()
	}
	if n < 2*o.MinSamples {
		return a
	}
	// Prefix sums give every split's squared error in O(1).
	sum := make([]float64, n+1)
	sq := make([]float64, n+1)
	for i, s := range samples {
		sum[i+1] = sum[i] + s.BytesPerSec
		sq[i+1] = sq[i] + s.BytesPerSec*s.BytesPerSec
	}
	sse := func(i, j int) float64 { // samples[i:j]
		m := float64(j - i)
		s := sum[j] - sum[i]
		return sq[j] - sq[i] - s*s/m
	}
	totalSSE := sse(0, n)
	best, bestK := math.Inf(1), -1
	for k := o.MinSamples; k <= n-o.MinSamples; k++ {
		if e := sse(0, k) + sse(k, n); e < best {
			best, bestK = e, k
		}
	}
	if bestK < 0 {
		return a
	}
	before := (sum[bestK] - sum[0]) / float64(bestK)
	after := (sum[n] - sum[bestK]) / float64(n-bestK)
	if before <= 0 || after > before*(1-o.MinDrop) {
		return a
	}
	if totalSSE > 0 && 1-best/totalSSE < o.MinExplained {
		return a
	}
	at := samples[bestK-1].At
	a.Cliff = &result.WriteCliff{
		AtBytes:           int64(cum[bestK-1]),
		At:                at,
		BeforeBytesPerSec: before,
		AfterBytesPerSec:  after,
		TotalBytes:        a.TotalBytes,
		Duration:          a.Duration,
	}
	return a
}

// FromLog converts fio's bandwidth log samples.
func FromLog(s []fio.BandwidthSample) []Sample {
	out := make([]Sample, len(s))
	for i, x := range s {
		out[i] = Sample{At: x.At, BytesPerSec: x.BytesPerSec}
	}
	return out
}
