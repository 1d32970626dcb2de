package trend

import (
	"math"
	"slices"
)

// madScale turns a median absolute deviation into a standard deviation
// for normally distributed noise.
const madScale = 1.4826

// medianEfficiency is the standard error of a median relative to that of
// a mean (√(π/2)) for normal noise.
const medianEfficiency = 1.2533

// theilSenEfficiency is the standard error of a Theil–Sen slope relative
// to that of least squares for normal noise (1/√0.91).
const theilSenEfficiency = 1.048

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// noiseSigma is the standard deviation of the noise of xs around center,
// for normal noise: the larger of two estimates, the median absolute
// deviation (× 1.4826, robust: half the runs may be outliers) and the mean
// absolute deviation (× √(π/2), steadier over a handful of runs, which is
// when the median one most often comes out too small).
func noiseSigma(xs []float64, center float64) float64 {
	dev := make([]float64, len(xs))
	var sum float64
	for i, x := range xs {
		dev[i] = math.Abs(x - center)
		sum += dev[i]
	}
	return max(madScale*median(dev), medianEfficiency*sum/float64(max(len(xs), 1)))
}

// fewRuns widens a standard deviation estimated from n runs, so that a
// new run beyond ±2.5 of them is as rare after a handful of runs as after
// hundreds (simulated: 1 + 4/n matches the needed factor from 8 runs on).
func fewRuns(n int) float64 { return 1 + 4/float64(max(n, 1)) }

// runningMedians returns the median of every prefix of x: m[i] is the
// median of x[:i+1]. Each value is inserted into a sorted copy, so all of
// them cost O(n²) moves instead of a sort per prefix.
func runningMedians(x []float64) []float64 {
	sorted := make([]float64, 0, len(x))
	m := make([]float64, len(x))
	for i, v := range x {
		k, _ := slices.BinarySearch(sorted, v)
		sorted = slices.Insert(sorted, k, v)
		n := i + 1
		if n%2 == 1 {
			m[i] = sorted[n/2]
		} else {
			m[i] = (sorted[n/2-1] + sorted[n/2]) / 2
		}
	}
	return m
}

// split is the best two-level fit of a history: levels before and after
// index at, and the robust t statistic of their difference (positive when
// the level went up).
type split struct {
	ok     bool
	at     int
	t      float64
	before float64
	after  float64
	// sigma is the robust standard deviation of the residuals around the
	// two levels, without the MinNoise floor; l1 their mean absolute value.
	sigma, l1 float64
}

// bestSplit finds the split of x into two levels that fits best: the
// least sum of absolute deviations from the median before and the median
// after (a robust change point, sharp at the run where the level moved).
// Its t statistic is the difference of the two medians over their
// standard error. The part before holds at least MinHistory runs, the part
// after at least one.
func bestSplit(x []float64, o Options) split {
	var best split
	bestCost := math.Inf(1)
	pre := runningMedians(x) // pre[i] = median(x[:i+1])
	rev := slices.Clone(x)
	slices.Reverse(rev)
	suf := runningMedians(rev) // suf[i] = median of the last i+1
	for at := o.MinHistory; at < len(x); at++ {
		before, after := pre[at-1], suf[len(x)-at-1]
		var cost float64
		for i, v := range x {
			if i < at {
				cost += math.Abs(v - before)
			} else {
				cost += math.Abs(v - after)
			}
		}
		if cost < bestCost {
			bestCost = cost
			best = split{ok: true, at: at, before: before, after: after}
		}
	}
	if !best.ok {
		return best
	}
	res := make([]float64, len(x))
	for i, v := range x {
		if i < best.at {
			res[i] = v - best.before
		} else {
			res[i] = v - best.after
		}
	}
	best.sigma = noiseSigma(res, 0)
	best.l1 = bestCost / float64(len(x))
	nb, na := float64(best.at), float64(len(x)-best.at)
	sigma := max(best.sigma*fewRuns(len(x)), o.MinNoise*math.Abs(best.before))
	best.t = (best.after - best.before) / (sigma * medianEfficiency * math.Sqrt(1/nb+1/na))
	return best
}

// line is a Theil–Sen fit of x against run order: x[i] ≈ intercept +
// slope·i, with the z score of the slope.
type line struct {
	slope, intercept float64
	sigma            float64 // robust residual standard deviation, no floor
	l1               float64 // mean absolute residual
	z                float64
}

func (l line) at(i float64) float64 { return l.intercept + l.slope*i }

func theilSen(x []float64, o Options) line {
	n := len(x)
	if n < 3 {
		return line{intercept: median(x)}
	}
	slopes := make([]float64, 0, n*(n-1)/2)
	for i := range n {
		for k := i + 1; k < n; k++ {
			slopes = append(slopes, (x[k]-x[i])/float64(k-i))
		}
	}
	l := line{slope: median(slopes)}
	off := make([]float64, n)
	for i, v := range x {
		off[i] = v - l.slope*float64(i)
	}
	l.intercept = median(off)
	for i, v := range x {
		off[i] = v - l.at(float64(i))
	}
	l.sigma = noiseSigma(off, 0)
	for _, r := range off {
		l.l1 += math.Abs(r) / float64(n)
	}
	sigma := max(l.sigma*fewRuns(n), o.MinNoise*math.Abs(median(x)))
	// Σ(i - ī)² over 0..n-1.
	sxx := float64(n) * (float64(n)*float64(n) - 1) / 12
	l.z = l.slope / (theilSenEfficiency * sigma / math.Sqrt(sxx))
	return l
}
