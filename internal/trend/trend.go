// Package trend assesses a series of figures (one target × workload × round,
// over time) against its own history: a robust baseline, a noise band from
// the spread of the earlier runs, and a verdict with the run where a change
// starts. It is pure statistics: no store, no clock, no printing.
//
// The method, in short (docs/trend.md has the long form):
//
//   - The baseline is the median of the earlier runs; the noise is their
//     spread as a standard deviation (the larger of 1.4826 × the median
//     absolute deviation and √(π/2) × the mean absolute deviation, widened
//     by 1 + 4/n for n runs), never below Options.MinNoise of the baseline.
//     The band is ±BandSigmas of that noise, as a fraction of the baseline.
//   - A step is the split of the history into two levels that fits best
//     (least absolute deviations from each part's median). It counts when
//     the robust t statistic of the two medians exceeds StepThreshold, at
//     least Confirm runs follow it, and the latest Confirm runs sit nearer
//     the new level than the old one.
//   - A drift is a Theil–Sen slope over the runs (by run order) whose
//     robust z score exceeds DriftThreshold; it is a regression when the
//     fitted change over the window lies beyond the band, a warning when not.
//   - A warning is a drop beyond the band that is not yet confirmed: the
//     latest run (or the latest few) only.
//
// The defaults were chosen by simulation (bench/trend): on histories of 10
// to 200 runs of pure noise with a 10% coefficient of variation they raise
// a regression or a warning in under 1% of histories (0.5% at 50 runs),
// and they find a 25% step in 94% of 50-run histories.
//
// Unlike internal/analysis, which compares many results at one time
// (targets against each other), trend compares one series with its own
// past; internal/contention and internal/cliff look inside one round and
// one result.
package trend

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"time"
)

// Better says which way a metric improves.
type Better int

const (
	// HigherIsBetter: IOPS, bandwidth.
	HigherIsBetter Better = iota
	// LowerIsBetter: latencies.
	LowerIsBetter
)

// String is "higher" or "lower".
func (b Better) String() string {
	if b == LowerIsBetter {
		return "lower"
	}
	return "higher"
}

// MarshalText writes the String form, so JSON says "higher" or "lower".
func (b Better) MarshalText() ([]byte, error) { return []byte(b.String()), nil }

// Point is one figure of the series: when it was measured, by which run,
// and its value in the metric's base unit.
type Point struct {
	Time  time.Time `json:"time"`
	RunID string    `json:"run_id"`
	Value float64   `json:"value"`
}

// Series is the history of one target × workload × round for one metric.
// Points are ordered by Time, oldest first (Assess sorts a copy if they are
// not); points whose value is not a positive finite number are ignored.
type Series struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Round    string `json:"round,omitempty"`
	// Metric names the figure ("iops", "bw", "lat_p99"...); Unit its base
	// unit ("IOPS", "B/s", "ns"). Both are carried into the judgement and
	// its message; the statistics do not depend on them.
	Metric string  `json:"metric"`
	Unit   string  `json:"unit,omitempty"`
	Better Better  `json:"better"`
	Points []Point `json:"points"`
}

// Verdict is the outcome of judging a series.
type Verdict string

const (
	OK                  Verdict = "ok"
	Warning             Verdict = "warning"
	Regression          Verdict = "regression"
	InsufficientHistory Verdict = "insufficient-history"
)

// Severity orders verdicts, worst highest: regression 3, warning 2,
// insufficient history 1, ok 0.
func (v Verdict) Severity() int {
	switch v {
	case Regression:
		return 3
	case Warning:
		return 2
	case InsufficientHistory:
		return 1
	}
	return 0
}

// Change is the kind of change found.
type Change string

const (
	NoChange Change = ""
	// Step: the level moved at one run and stayed there.
	Step Change = "step"
	// Drift: the level moves steadily run after run.
	Drift Change = "drift"
	// Latest: only the latest run(s) are beyond the band (a warning).
	Latest Change = "latest"
)

// Assessment is the verdict on one series, with the numbers behind it.
// Relative figures are fractions: 0.06 is 6%.
type Assessment struct {
	Target   string  `json:"target"`
	Workload string  `json:"workload"`
	Round    string  `json:"round,omitempty"`
	Metric   string  `json:"metric"`
	Unit     string  `json:"unit,omitempty"`
	Better   Better  `json:"better"`
	Verdict  Verdict `json:"verdict"`
	Change   Change  `json:"change,omitempty"`
	// Improved is set when the change found is for the better; the verdict
	// is then OK.
	Improved bool `json:"improved,omitempty"`
	// Runs is the number of points judged (after Options.MaxHistory).
	Runs int `json:"runs"`
	// Baseline is the median of the runs before the change (or of all
	// runs before the latest when nothing changed); for a drift, the
	// fitted value at the start of the window. BaselineRuns counts those
	// runs and BaselineSince is the first of them.
	Baseline      float64   `json:"baseline,omitempty"`
	BaselineRuns  int       `json:"baseline_runs"`
	BaselineSince time.Time `json:"baseline_since,omitzero"`
	// Noise is the relative robust standard deviation of the baseline
	// runs; Band is the half-width of the noise band (BandSigmas × Noise).
	Noise float64 `json:"noise,omitempty"`
	Band  float64 `json:"band,omitempty"`
	// Level is the current level: the median since the change, or the
	// latest value (the fitted latest value for a drift). Delta is
	// (Level - Baseline) / Baseline, signed as the values are.
	Level float64 `json:"level,omitempty"`
	Delta float64 `json:"delta"`
	// Latest is the newest point.
	Latest Point `json:"latest"`
	// Since is the first run of the change; ChangedRuns counts the runs
	// from it to the latest. Zero without a change.
	Since       *Point `json:"since,omitempty"`
	ChangedRuns int    `json:"changed_runs,omitempty"`
	// Score is the test statistic behind the change (the step's robust t
	// or the drift's z), for those who want to tune thresholds.
	Score float64 `json:"score,omitempty"`
	// Message says the verdict in plain words with the numbers.
	Message string `json:"message"`
}

// Options tunes the judgement. The zero value means the defaults.
type Options struct {
	// MinHistory is the number of earlier runs needed before the latest
	// can be judged (default 5).
	MinHistory int
	// Confirm is the number of runs at a new level needed to call a step
	// a regression; fewer make a warning (default 3).
	Confirm int
	// BandSigmas is the band's half-width in robust standard deviations
	// (default 2.5).
	BandSigmas float64
	// StepThreshold is the robust t statistic a step must exceed
	// (default 4).
	StepThreshold float64
	// DriftThreshold is the z score of the Theil–Sen slope a drift must
	// exceed (default 3.5).
	DriftThreshold float64
	// MinNoise is the smallest relative noise assumed (default 0.01), so
	// that identical imported figures do not make every wobble significant.
	MinNoise float64
	// MaxHistory bounds the runs judged to the latest ones (default 200).
	MaxHistory int
}

// Default values of Options.
const (
	DefaultMinHistory     = 5
	DefaultConfirm        = 3
	DefaultBandSigmas     = 2.5
	DefaultStepThreshold  = 4.0
	DefaultDriftThreshold = 3.5
	DefaultMinNoise       = 0.01
	DefaultMaxHistory     = 200
)

func (o Options) withDefaults() Options {
	o.MinHistory = orDefault(o.MinHistory, DefaultMinHistory)
	o.Confirm = orDefault(o.Confirm, DefaultConfirm)
	o.BandSigmas = orDefault(o.BandSigmas, DefaultBandSigmas)
	o.StepThreshold = orDefault(o.StepThreshold, DefaultStepThreshold)
	o.DriftThreshold = orDefault(o.DriftThreshold, DefaultDriftThreshold)
	o.MinNoise = orDefault(o.MinNoise, DefaultMinNoise)
	o.MaxHistory = orDefault(o.MaxHistory, DefaultMaxHistory)
	if o.MaxHistory < o.MinHistory+1 {
		o.MaxHistory = o.MinHistory + 1
	}
	return o
}

func orDefault[T int | float64](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Sort orders assessments worst first (see Compare).
func Sort(js []Assessment) { slices.SortStableFunc(js, Compare) }

// Compare orders assessments worst first: by verdict severity, then by how
// far the level moved for the worse, then by target, workload, round and
// metric. It suits slices.SortFunc.
func Compare(a, b Assessment) int {
	if c := cmp.Compare(b.Verdict.Severity(), a.Verdict.Severity()); c != 0 {
		return c
	}
	if c := cmp.Compare(b.worsening(), a.worsening()); c != 0 {
		return c
	}
	return cmp.Or(cmp.Compare(a.Target, b.Target), cmp.Compare(a.Workload, b.Workload),
		cmp.Compare(a.Round, b.Round), cmp.Compare(a.Metric, b.Metric))
}

// worsening is Delta turned so that positive is worse.
func (j Assessment) worsening() float64 {
	if j.Better == LowerIsBetter {
		return j.Delta
	}
	return -j.Delta
}

// Assess assesses the latest state of s against its own history.
func Assess(s Series, opts Options) Assessment {
	o := opts.withDefaults()
	pts := usable(s.Points)
	if len(pts) > o.MaxHistory {
		pts = pts[len(pts)-o.MaxHistory:]
	}
	j := Assessment{Target: s.Target, Workload: s.Workload, Round: s.Round, Metric: s.Metric, Unit: s.Unit,
		Better: s.Better, Runs: len(pts)}
	if len(pts) > 0 {
		j.Latest = pts[len(pts)-1]
	}
	if len(pts)-1 < o.MinHistory {
		j.Verdict = InsufficientHistory
		j.BaselineRuns = max(len(pts)-1, 0)
		j.Message = fmt.Sprintf("%s: too little history to judge: %d earlier run(s), at least %d needed",
			j.name(), j.BaselineRuns, o.MinHistory)
		return j
	}
	x := make([]float64, len(pts))
	for i, p := range pts {
		x[i] = p.Value
	}
	// worse > 0 means "this way is worse" for a relative change.
	worse := 1.0
	if s.Better == HigherIsBetter {
		worse = -1
	}

	// Walk forward over improvements that are followed by enough runs to
	// stand as a baseline of their own: a disk that got faster is judged
	// against its new level.
	start := 0
	var step split
	improvedAt := -1
	for {
		step = bestSplit(x[start:], o)
		step.at += start
		if !step.ok || math.Abs(step.t) <= o.StepThreshold || step.t*worse > 0 {
			break // no step, or a step for the worse
		}
		if d := theilSen(x[start:], o); math.Abs(d.z) > o.DriftThreshold && d.l1 < step.l1 {
			break // a steady climb, not a step: judged as a drift
		}
		if len(x)-step.at-1 < o.MinHistory {
			break // an improvement too recent to be a baseline
		}
		improvedAt = step.at
		start = step.at
	}

	drift := theilSen(x[start:], o)
	stepSignificant := step.ok && math.Abs(step.t) > o.StepThreshold
	driftSignificant := math.Abs(drift.z) > o.DriftThreshold
	// A ramp also splits well and a step also slopes: when both are
	// significant, keep the model that leaves the smaller mean absolute residual
	// (a step that does not hold up still leaves the drift to judge).
	if stepSignificant && driftSignificant && drift.l1 < step.l1 {
		stepSignificant = false
	}

	if stepSignificant && j.assessStep(pts, x, start, step, worse, o) {
		return j
	}
	if driftSignificant {
		j.assessDrift(pts, x, start, drift, worse, o)
		return j
	}
	j.assessLatest(pts, x, start, worse, o)
	if j.Verdict == OK && improvedAt >= 0 {
		j.Improved = true
		j.Since = &pts[improvedAt]
		j.ChangedRuns = len(pts) - improvedAt
		j.Message += fmt.Sprintf("; improved since %s (run %s)", day(pts[improvedAt].Time), pts[improvedAt].RunID)
	}
	return j
}

// assessStep fills j for a significant step at step.at; it returns false
// when the step does not hold up (too few runs after it, or the latest
// runs went back), leaving j for assessLatest.
func (j *Assessment) assessStep(pts []Point, x []float64, start int, step split, worse float64, o Options) bool {
	before := x[start:step.at]
	after := x[step.at:]
	base := median(before)
	noise := relNoise(before, base, o)
	band := o.BandSigmas * noise
	level := median(after)
	delta := (level - base) / base
	// The latest runs must sit at the new level, not back at the old one.
	k := min(o.Confirm, len(after))
	recent := median(x[len(x)-k:])
	atNewLevel := math.Abs(recent-level) < math.Abs(recent-base)
	if !atNewLevel {
		return false
	}
	j.setBaseline(pts[start:step.at], base, noise, band)
	j.Change, j.Level, j.Delta, j.Score = Step, level, delta, step.t
	j.Since = &pts[step.at]
	j.ChangedRuns = len(after)
	isWorse := delta*worse > 0
	switch {
	case !isWorse:
		j.Verdict, j.Improved = OK, true
	case len(after) >= o.Confirm:
		j.Verdict = Regression
	default:
		j.Verdict, j.Change = Warning, Latest
	}
	j.Message = j.stepMessage()
	return true
}

func (j *Assessment) assessDrift(pts []Point, x []float64, start int, d line, worse float64, o Options) {
	window := x[start:]
	first := d.at(0)
	last := d.at(float64(len(window) - 1))
	noise := max(d.sigma*fewRuns(len(window))/math.Abs(first), o.MinNoise)
	band := o.BandSigmas * noise
	j.setBaseline(pts[start:len(pts)-1], first, noise, band)
	j.BaselineRuns = len(window)
	j.Change, j.Level, j.Score = Drift, last, d.z
	j.Delta = (last - first) / first
	j.Since = &pts[start]
	j.ChangedRuns = len(window)
	isWorse := j.Delta*worse > 0
	switch {
	case !isWorse:
		j.Verdict, j.Improved = OK, true
	case math.Abs(j.Delta) > band:
		j.Verdict = Regression
	default:
		j.Verdict = Warning
	}
	dir := "down"
	if j.Delta > 0 {
		dir = "up"
	}
	j.Message = fmt.Sprintf("%s: %sdrifting %s %s over %d runs since %s (%s per run); noise band ±%s",
		j.name(), j.metricWord(), dir, pct(math.Abs(j.Delta)), len(window), day(pts[start].Time),
		pct(math.Abs(d.slope/first)), pct(band))
	if j.Verdict == Warning {
		j.Message += ", still within the band"
	}
}

// assessLatest judges the latest run(s) against the runs before them in
// the current regime: OK, or a warning when the trailing runs lie beyond
// the band for the worse.
func (j *Assessment) assessLatest(pts []Point, x []float64, start int, worse float64, o Options) {
	// Count the trailing runs beyond the band, judged against everything
	// before them (at least MinHistory runs).
	earlier := x[start : len(x)-1]
	base := median(earlier)
	noise := relNoise(earlier, base, o)
	band := o.BandSigmas * noise
	trailing := 0
	for i := len(x) - 1; i-start >= o.MinHistory; i-- {
		if (x[i]-base)/base*worse <= band {
			break
		}
		trailing++
	}
	if trailing > 0 {
		first := len(x) - trailing
		earlier = x[start:first]
		base = median(earlier)
		noise = relNoise(earlier, base, o)
		band = o.BandSigmas * noise
		level := median(x[first:])
		j.setBaseline(pts[start:first], base, noise, band)
		j.Verdict, j.Change = Warning, Latest
		j.Level, j.Delta = level, (level-base)/base
		j.Since = &pts[first]
		j.ChangedRuns = trailing
		j.Message = j.stepMessage()
		return
	}
	j.setBaseline(pts[start:len(pts)-1], base, noise, band)
	j.Verdict = OK
	j.Level = x[len(x)-1]
	j.Delta = (j.Level - base) / base
	j.Message = fmt.Sprintf("%s: %s %s its baseline of %d runs since %s, within the noise band ±%s",
		j.name(), pct(math.Abs(j.Delta)), aboveBelow(j.Delta), j.BaselineRuns, day(j.BaselineSince), pct(band))
}

func (j *Assessment) setBaseline(base []Point, value, noise, band float64) {
	j.Baseline, j.Noise, j.Band = value, noise, band
	j.BaselineRuns = len(base)
	if len(base) > 0 {
		j.BaselineSince = base[0].Time
	}
}

func (j *Assessment) stepMessage() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %s%s %s its baseline of %d runs since %s", j.name(), j.metricWord(), pct(math.Abs(j.Delta)),
		aboveBelow(j.Delta), j.BaselineRuns, day(j.BaselineSince))
	switch {
	case j.ChangedRuns == 1:
		fmt.Fprintf(&b, "; only the latest run (%s, %s)", j.Since.RunID, day(j.Since.Time))
	default:
		fmt.Fprintf(&b, "; %d runs since %s (run %s)", j.ChangedRuns, day(j.Since.Time), j.Since.RunID)
	}
	fmt.Fprintf(&b, "; noise band ±%s", pct(j.Band))
	if j.Verdict == Warning {
		b.WriteString("; not yet confirmed")
	}
	if j.Improved {
		b.WriteString("; an improvement")
	}
	return b.String()
}

// name is "workload on target", with the round when it is not the usual one.
func (j *Assessment) name() string {
	n := j.Workload + " on " + j.Target
	if j.Round != "" && j.Round != "isolated" {
		n += " (" + j.Round + " round)"
	}
	return n
}

// metricWord names latency metrics in messages ("p99 latency "), since
// "above its baseline" alone reads as good news for IOPS.
func (j *Assessment) metricWord() string {
	if j.Better != LowerIsBetter {
		return ""
	}
	if m, ok := strings.CutPrefix(j.Metric, "lat_"); ok {
		return m + " latency "
	}
	if m, ok := strings.CutPrefix(j.Metric, "sync_"); ok {
		return "sync " + m + " latency "
	}
	return j.Metric + " "
}

func aboveBelow(delta float64) string {
	if delta < 0 {
		return "below"
	}
	return "above"
}

func pct(f float64) string {
	p := f * 100
	if p < 10 {
		return fmt.Sprintf("%.1f%%", p)
	}
	return fmt.Sprintf("%.0f%%", p)
}

func day(t time.Time) string {
	if t.IsZero() {
		return "an unknown date"
	}
	return t.UTC().Format(time.DateOnly)
}

// usable returns the points with a positive finite value, ordered by time
// (stable, so equal times keep their order).
func usable(in []Point) []Point {
	out := make([]Point, 0, len(in))
	for _, p := range in {
		if p.Value > 0 && !math.IsInf(p.Value, 0) {
			out = append(out, p)
		}
	}
	if !sort.SliceIsSorted(out, func(a, b int) bool { return out[a].Time.Before(out[b].Time) }) {
		sort.SliceStable(out, func(a, b int) bool { return out[a].Time.Before(out[b].Time) })
	}
	return out
}

// relNoise is the robust standard deviation of xs relative to base,
// widened for few runs, at least MinNoise.
func relNoise(xs []float64, base float64, o Options) float64 {
	return max(noiseSigma(xs, median(xs))*fewRuns(len(xs))/math.Abs(base), o.MinNoise)
}
