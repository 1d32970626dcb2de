// Package analysis turns stored figures into answers: statistics across
// repetitions, side-by-side comparisons, efficiency against a baseline,
// change between rounds, the best target per workload, outliers and
// verdicts. Everything here is a pure function of its inputs: no I/O, no
// printing, no clock. It also holds the view types internal/render formats
// (View, Class, SuiteDocument, DryRun, ContentionReport).
//
// Four packages assess results; each looks at something different:
//   - analysis: many results side by side (targets, repetitions, rounds) at
//     one time: which is faster, by how much, how sure, is it fit for a use;
//   - cliff: inside one sustained-write result, the moment throughput
//     drops for good (fio's bandwidth log);
//   - contention: one contention round, the same probe alone and beside a
//     bulk writer (analysis.ContentionReport);
//   - trend: one target × workload × round over time, against its own
//     stored history (trend.Assessment).
package analysis

import (
	"math"
	"sort"
)

// UnstableCVPercent is the coefficient of variation above which a result is
// marked unstable: its repetitions disagree too much to trust the mean.
const UnstableCVPercent = 10

// Stats summarises repeated measurements of one figure.
type Stats struct {
	N      int     `json:"n"`
	Mean   float64 `json:"mean"`
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	// StdDev is the sample standard deviation (n-1 in the denominator).
	StdDev float64 `json:"stddev"`
	// CVPercent is StdDev / Mean in percent; 0 for a single value.
	CVPercent float64 `json:"cv_percent"`
	// CI95 is the 95% confidence interval of the mean (Student's t); nil
	// with fewer than two values.
	CI95 *Interval `json:"ci95,omitempty"`
	// TrimmedMean drops the best and the worst value when there are at
	// least 4 (the Raspberry Pi storage benchmark convention); otherwise it
	// equals Mean.
	TrimmedMean float64 `json:"trimmed_mean"`
	Trimmed     bool    `json:"trimmed"`
}

// Interval is a closed range of values.
type Interval struct {
	Low  float64 `json:"low"`
	High float64 `json:"high"`
}

// Unstable reports whether the repetitions spread more than
// UnstableCVPercent around their mean.
func (s Stats) Unstable() bool { return s.N >= 2 && s.CVPercent > UnstableCVPercent }

// Summarize computes Stats of values. It does not modify values. An empty
// slice gives the zero Stats.
func Summarize(values []float64) Stats {
	n := len(values)
	if n == 0 {
		return Stats{}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	var sum float64
	for _, v := range sorted {
		sum += v
	}
	s := Stats{N: n, Mean: sum / float64(n), Min: sorted[0], Max: sorted[n-1], TrimmedMean: sum / float64(n)}
	if n%2 == 1 {
		s.Median = sorted[n/2]
	} else {
		s.Median = (sorted[n/2-1] + sorted[n/2]) / 2
	}
	if n >= 2 {
		var sq float64
		for _, v := range sorted {
			sq += (v - s.Mean) * (v - s.Mean)
		}
		s.StdDev = math.Sqrt(sq / float64(n-1))
		if s.Mean != 0 {
			s.CVPercent = s.StdDev / math.Abs(s.Mean) * 100
		}
		half := tCritical95(n-1) * s.StdDev / math.Sqrt(float64(n))
		s.CI95 = &Interval{Low: s.Mean - half, High: s.Mean + half}
	}
	if n >= 4 {
		s.TrimmedMean = (sum - sorted[0] - sorted[n-1]) / float64(n-2)
		s.Trimmed = true
	}
	return s
}

// t95 holds the two-sided 95% critical values of Student's t distribution
// for 1 to 30 degrees of freedom (any statistics table).
var t95 = [...]float64{12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
	2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
	2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042}

func tCritical95(df int) float64 {
	switch {
	case df < 1:
		return math.NaN()
	case df <= len(t95):
		return t95[df-1]
	case df <= 40:
		return 2.021
	case df <= 60:
		return 2.000
	case df <= 120:
		return 1.980
	}
	return 1.960
}

// median of values; values is reordered.
func median(values []float64) float64 {
	if len(values) == 0 {
		return math.NaN()
	}
	sort.Float64s(values)
	n := len(values)
	if n%2 == 1 {
		return values[n/2]
	}
	return (values[n/2-1] + values[n/2]) / 2
}

// TCritical95 is the two-sided 95% critical value of Student's t for df
// degrees of freedom (NaN below 1).
func TCritical95(df int) float64 { return tCritical95(df) }

// RunsFor is the fewest runs whose 95% confidence interval of the mean is
// within ±precision (a fraction of the mean) when runs vary with the
// coefficient of variation cv (also a fraction): the smallest n >= 2 with
// t(n-1) * cv / sqrt(n) <= precision; max when even max runs fall short.
func RunsFor(cv, precision float64, max int) int {
	for n := 2; n < max; n++ {
		if tCritical95(n-1)*cv/math.Sqrt(float64(n)) <= precision {
			return n
		}
	}
	return max
}
