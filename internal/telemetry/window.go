package telemetry

import (
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Within returns t's summaries over a part of the recording only: the
// samples whose interval ended after from and no later than to, the
// recording having started at start. A sweep step's telemetry runs from
// before its clients start (laying out files, waiting at the start gate)
// until the last is done; what bound the step is read over the window when
// all of them ran, as its figures are. Totals stay the whole recording's.
// It returns t itself when the window holds no sample or t has no series,
// and applies to the other nodes sampled meanwhile too.
func Within(t *result.Telemetry, start, from, to time.Time) *result.Telemetry {
	if t == nil || t.Series == nil || !to.After(from) {
		return t
	}
	lo, hi := from.Sub(start).Milliseconds(), to.Sub(start).Milliseconds()
	var keep []int
	for i, off := range t.Series.OffsetsMS {
		if off > lo && off <= hi {
			keep = append(keep, i)
		}
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
