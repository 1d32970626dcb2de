package telemetry

import (
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Within returns t with its summaries over a part of the recording only,
// from from to to, the recording having begun at start. A sweep step's
// telemetry runs from before its clients start (laying out files, waiting
// at the start gate) until the last is done; what bound the step is read over the window when
// all of them ran, as its figures are. Totals stay the whole recording's.
// The samples read are those whose interval lies within the window; a
// window shorter than any sample reads the samples it overlaps.
// It returns t itself when the window holds no sample or t has no series,
// and applies to the other nodes sampled meanwhile too.
func Within(t *result.Telemetry, start, from, to time.Time) *result.Telemetry {
	if t == nil || t.Series == nil || !to.After(from) {
		return t
	}
	lo, hi := from.Sub(start).Milliseconds(), to.Sub(start).Milliseconds()
	var inside, overlapping []int
	for i, off := range t.Series.OffsetsMS {
		prev := int64(0) // sample i covers the interval (prev, off]
		if i > 0 {
			prev = t.Series.OffsetsMS[i-1]
		}
		switch {
		case prev >= lo && off <= hi:
			inside = append(inside, i)
		case off > lo && prev < hi:
			overlapping = append(overlapping, i)
		}
	}
	keep := inside
	if len(keep) == 0 {
		keep = overlapping // a window shorter than a sample: the ones it touches
	}
	if len(keep) == 0 {
		return t
	}
	w := *t
	w.Summary = make(map[string]result.Summary, len(t.Series.Values))
	for name, col := range t.Series.Values {
		var sum result.Summary
		var total float64
		for _, i := range keep {
			if i >= len(col) {
				continue
			}
			v := col[i]
			if sum.Samples == 0 {
				sum.Min, sum.Max = v, v
			}
			sum.Min, sum.Max = min(sum.Min, v), max(sum.Max, v)
			total += v
			sum.Samples++
		}
		if sum.Samples > 0 {
			sum.Mean = round(total / float64(sum.Samples))
			w.Summary[name] = sum
		}
	}
	if len(t.Nodes) > 0 {
		w.Nodes = make([]*result.Telemetry, len(t.Nodes))
		for i, n := range t.Nodes {
			w.Nodes[i] = Within(n, start, from, to)
		}
	}
	return &w
}
