// Package trendtest generates histories with known changes, from a seed,
// for the tests of package trend and for bench/trend.
package trendtest

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/storbench/storbench/internal/trend"
)

// History describes a generated series: Runs points one day apart from
// Start, around Level with normal noise of CV (relative standard
// deviation). From run StepAt on the level is multiplied by 1+Step; Drift
// is the relative change of the level spread evenly over all runs.
type History struct {
	Runs   int
	Level  float64
	CV     float64
	Step   float64
	StepAt int
	Drift  float64
	Better trend.Better
	Start  time.Time
}

// DefaultStart is the first day of generated histories.
var DefaultStart = time.Date(2026, 1, 1, 3, 0, 0, 0, time.UTC)

// Series generates the history for one seed; the same seed gives the
// same series.
func (h History) Series(seed uint64) trend.Series {
	rng := rand.New(rand.NewPCG(seed, 0x7265_6e64))
	start := h.Start
	if start.IsZero() {
		start = DefaultStart
	}
	level := h.Level
	if level == 0 {
		level = 1000
	}
	s := trend.Series{Target: "disk", Workload: "rand-read-4k", Metric: "iops", Unit: "IOPS", Better: h.Better}
	for i := range h.Runs {
		mean := level
		if h.Runs > 1 {
			mean *= 1 + h.Drift*float64(i)/float64(h.Runs-1)
		}
		if h.Step != 0 && i >= h.StepAt {
			mean *= 1 + h.Step
		}
		v := mean * (1 + h.CV*rng.NormFloat64())
		if v <= 0 {
			v = mean * 0.01
		}
		s.Points = append(s.Points, trend.Point{
			Time:  start.AddDate(0, 0, i),
			RunID: fmt.Sprintf("run-%03d", i),
			Value: v,
		})
	}
	return s
}
