package fio

import (
	"math"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// MergeLatencies is the latency of every I/O of several jobs together,
// from their json+ latency objects (nanoseconds, fio 3): the bins are added
// up and the percentiles read from the sum, never averaged from each job's
// own percentiles (the p99 of two jobs is not the mean of their p99s). The
// mean and standard deviation are pooled, weighted by each job's I/O count;
// min and max are the extremes. A job without bins makes the merged
// percentiles unknown: they are left out rather than guessed.
func MergeLatencies(ls []*Latency) result.Latency {
	bins := map[float64]float64{}
	var out result.Latency
	var n, sum, sumSq float64
	complete := true
	for _, l := range ls {
		if l == nil {
			continue
		}
		one := latency(l, 1)
		cnt := float64(one.Samples)
		if len(l.Bins) == 0 {
			complete = false
		}
		for k, c := range l.Bins {
			v, err := strconv.ParseFloat(k, 64)
			if err == nil && !math.IsNaN(c) && c > 0 {
				bins[v] += c
			}
		}
		if cnt == 0 {
			continue
		}
		if out.Samples == 0 || one.Min < out.Min {
			out.Min = one.Min
		}
		out.Max = max(out.Max, one.Max)
		m, sd := float64(one.Mean), float64(one.StdDev)
		n += cnt
		sum += cnt * m
		sumSq += cnt * (sd*sd + m*m)
		out.Samples += one.Samples
	}
	if n == 0 {
		return result.Latency{}
	}
	mean := sum / n
	out.Mean = time.Duration(mean)
	out.StdDev = time.Duration(math.Sqrt(math.Max(sumSq/n-mean*mean, 0)))
	if complete && len(bins) > 0 {
		keyed := make(map[string]float64, len(bins))
		for v, c := range bins {
			keyed[strconv.FormatFloat(v, 'f', -1, 64)] = c
		}
		out.Percentiles, _ = binPercentiles(keyed, 1)
	}
	return out
}
