package analysis

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Mark kinds: what a result's own checks found (docs/measurement.md).
const (
	MarkSteadyState  = "steady-state" // never reached steady state
	MarkCache        = "cache"        // may measure a cache
	MarkCliff        = "write-cliff"  // throughput fell part-way
	MarkPrecondition = "preconditioned"
)

// Mark is a finding about one target's results for one workload.
type Mark struct {
	Kind     string `json:"kind"`
	Target   string `json:"target"`
	Round    string `json:"round"`
	Workload string `json:"workload"`
	Text     string `json:"text"`
}

// Cliff is a sustained write's outcome on one target: where throughput
// fell, or (Found false) the throughput it held throughout.
type Cliff struct {
	Target   string `json:"target"`
	Round    string `json:"round"`
	Workload string `json:"workload"`
	Found    bool   `json:"found"`
	// AtBytes, BeforeBytesPerSec and AfterBytesPerSec describe the cliff.
	AtBytes           int64   `json:"at_bytes,omitempty"`
	BeforeBytesPerSec float64 `json:"before_bytes_per_sec,omitempty"`
	AfterBytesPerSec  float64 `json:"after_bytes_per_sec"`
	Text              string  `json:"text"`
}

// CliffText says a cliff the way people quote it: "480 MB/s for the first
// 11.6 GB, then 92 MB/s" (decimal units, as drive makers state them).
func CliffText(atBytes int64, before, after float64) string {
	return fmt.Sprintf("%s for the first %.1f GB, then %s", units.MBps(before), float64(atBytes)/1e9, units.MBps(after))
}

// Sanity rules.
const (
	RuleCacheAnswered = "cache-answered" // reads faster than the local baseline
	RuleEarlyAck      = "early-ack"      // writes faster than the local baseline
	RuleCPUBound      = "cpu-bound"      // CPU idle below CPUIdleMin during a latency workload
	RuleFioVersions   = "fio-versions"   // figures from different fio versions
	SanityMargin      = 0.10             // how far beyond the baseline a figure must be
	CPUIdleMin        = 40.0             // percent
)

// Sanity is a figure that cannot mean what it seems to.
type Sanity struct {
	Rule string `json:"rule"`
	// Who is the group (or target) concerned; empty for the whole comparison.
	Who      string `json:"who,omitempty"`
	Round    string `json:"round,omitempty"`
	Workload string `json:"workload,omitempty"`
	Text     string `json:"text"`
}

// Indistinct is two figures closer than their uncertainty: the comparison
// cannot tell them apart.
type Indistinct struct {
	Round    string `json:"round"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	A        string `json:"a"`
	B        string `json:"b"`
	// DiffPercent is |A-B| and UncertaintyPercent the combined half-width of
	// their 95% confidence intervals, both in percent of their mean.
	DiffPercent        float64 `json:"diff_percent"`
	UncertaintyPercent float64 `json:"uncertainty_percent"`
}

// markSeries accumulates the check labels of one target's results.
type markSeries struct {
	key                 seriesKey
	runs, notReached    int
	longest             time.Duration
	cache, precondition string
	cliff               *Cliff
	idle                []float64
}

type markSet struct {
	order []seriesKey
	by    map[seriesKey]*markSeries
}

func (m *markSet) add(k seriesKey, f *result.Figures) {
	if m.by == nil {
		m.by = map[seriesKey]*markSeries{}
	}
	s := m.by[k]
	if s == nil {
		s = &markSeries{key: k}
		m.by[k] = s
		m.order = append(m.order, k)
	}
	l := f.Labels
	if st := result.LabelSteadyState.Of(l); st != "" {
		s.runs++
		if st != "reached" {
			s.notReached++
			if d, err := time.ParseDuration(result.LabelSteadyStateAfter.Of(l)); err == nil && d > s.longest {
				s.longest = d
			}
		}
	}
	if v := result.LabelCacheRisk.Of(l); v != "" {
		s.cache = v
	}
	if v := result.LabelPrecondition.Of(l); v != "" {
		s.precondition = v
	}
	if v, err := strconv.ParseFloat(result.LabelCPUIdle.Of(l), 64); err == nil {
		s.idle = append(s.idle, v)
	}
	at, err1 := strconv.ParseInt(result.LabelCliffAtBytes.Of(l), 10, 64)
	before, err2 := strconv.ParseFloat(result.LabelCliffBeforeBPS.Of(l), 64)
	after, err3 := strconv.ParseFloat(result.LabelCliffAfterBPS.Of(l), 64)
	if err1 == nil && err2 == nil && err3 == nil {
		s.cliff = &Cliff{Target: k.target, Round: k.round, Workload: k.workload, Found: true, AtBytes: at,
			BeforeBytesPerSec: before, AfterBytesPerSec: after, Text: CliffText(at, before, after)}
	} else if v, err := strconv.ParseFloat(result.LabelSustainedBPS.Of(l), 64); err == nil && s.cliff == nil {
		s.cliff = &Cliff{Target: k.target, Round: k.round, Workload: k.workload, AfterBytesPerSec: v,
			Text: fmt.Sprintf("no cliff: %s throughout", units.MBps(v))}
	}
}

// marks turns the accumulated labels into Marks and Cliffs.
func (c *Comparison) marks(m *markSet) {
	for _, k := range m.order {
		s := m.by[k]
		add := func(kind, text string) {
			c.Marks = append(c.Marks, Mark{Kind: kind, Target: k.target, Round: k.round, Workload: k.workload, Text: text})
		}
		if s.notReached > 0 {
			add(MarkSteadyState, fmt.Sprintf("never reached steady state in %s (%d of %d runs)", s.longest, s.notReached, s.runs))
		}
		if s.cache != "" {
			add(MarkCache, s.cache)
		}
		if s.cliff != nil {
			c.Cliffs = append(c.Cliffs, *s.cliff)
			if s.cliff.Found {
				add(MarkCliff, s.cliff.Text)
			}
		}
		if s.precondition != "" {
			add(MarkPrecondition, "device preconditioned: "+s.precondition)
		}
	}
	c.cpuRule(m)
}

// CliffOf returns the sustained-write outcome of a target, if measured.
func (c *Comparison) CliffOf(target, round string) (Cliff, bool) {
	for _, cl := range c.Cliffs {
		if cl.Target == target && cl.Round == round {
			return cl, true
		}
	}
	return Cliff{}, false
}

// MarksOf lists the marks of one target's workload.
func (c *Comparison) MarksOf(target, round, workload string) []Mark {
	var out []Mark
	for _, m := range c.Marks {
		if m.Target == target && m.Round == round && m.Workload == workload {
			out = append(out, m)
		}
	}
	return out
}

// latencyWorkload reports whether a workload measures latency: QD1 or
// syncing, by name or by its primary metric.
func (c *Comparison) latencyWorkload(w string) bool {
	p := patternOf(w)
	return p.qd1 || p.sync || !result.HigherIsBetter(c.PrimaryMetric(w))
}

func (c *Comparison) cpuRule(m *markSet) {
	for _, k := range m.order {
		s := m.by[k]
		if len(s.idle) == 0 || !c.latencyWorkload(k.workload) {
			continue
		}
		idle := Summarize(s.idle).Mean
		if idle < CPUIdleMin {
			c.Sanity = append(c.Sanity, Sanity{Rule: RuleCPUBound, Who: k.target, Round: k.round, Workload: k.workload,
				Text: fmt.Sprintf("CPU only %.0f%% idle during this latency workload (below %.0f%%): the latency measures the CPU, not the storage", idle, CPUIdleMin)})
		}
	}
}

// sanity applies the rules that need the whole comparison: against a
// local baseline, and fio versions side by side.
func (c *Comparison) sanity() {
	versions := map[string][]string{}
	for _, e := range c.Environments {
		if v := result.LabelFioVersion.Of(e.Labels); v != "" {
			versions[v] = append(versions[v], e.Target)
		}
	}
	if len(versions) > 1 {
		var parts []string
		for v, ts := range versions {
			parts = append(parts, v+": "+strings.Join(ts, ", "))
		}
		sort.Strings(parts)
		c.Sanity = append(c.Sanity, Sanity{Rule: RuleFioVersions,
			Text: "figures from different fio versions side by side (" + strings.Join(parts, "; ") + "): defaults and accounting change between versions"})
	}
	for _, e := range c.Efficiency {
		p := patternOf(e.Workload)
		base := c.baselineValue(e)
		switch {
		case p.read && !p.write && (e.Metric == result.MetricLatP50 || (e.Metric == result.MetricLatMean && !c.hasMetric(e, result.MetricLatP50))) &&
			e.Ratio < 1-SanityMargin:
			c.Sanity = append(c.Sanity, Sanity{Rule: RuleCacheAnswered, Who: e.Group, Round: e.Round, Workload: e.Workload,
				Text: fmt.Sprintf("read latency %s is below the local baseline's %s: a cache answered, not the storage",
					units.Latency(time.Duration(e.Ratio*base)), units.Latency(time.Duration(base)))})
		case p.write && !p.read && e.Metric == rateMetric(c.PrimaryMetric(e.Workload)) && e.Ratio > 1+SanityMargin:
			c.Sanity = append(c.Sanity, Sanity{Rule: RuleEarlyAck, Who: e.Group, Round: e.Round, Workload: e.Workload,
				Text: fmt.Sprintf("writes %.0f%% faster than the local baseline (%s against %s): the storage acknowledges them before they are durable",
					(e.Ratio-1)*100, formatMetric(e.Metric, e.Ratio*base), formatMetric(e.Metric, base))})
		}
	}
}

// rateMetric is the rate that stands for a workload: bandwidth where that
// is its primary figure, IOPS otherwise (sync workloads included: a sync
// acknowledged early shows as more IOPS).
func rateMetric(primary string) string {
	if primary == result.MetricBW {
		return primary
	}
	return result.MetricIOPS
}

func (c *Comparison) hasMetric(e Efficiency, m string) bool {
	_, ok := c.EfficiencyOf(e.Group, e.Round, e.Workload, m)
	return ok
}

// baselineValue recovers the baseline's figure behind an efficiency.
func (c *Comparison) baselineValue(e Efficiency) float64 {
	cell, ok := c.GroupCell(e.Group, e.Round, e.Workload, e.Metric)
	if !ok || e.Ratio == 0 {
		return 0
	}
	return cell.Mean / e.Ratio
}

func formatMetric(m string, v float64) string {
	switch result.MetricUnit(m) {
	case "IOPS":
		return units.IOPS(v) + " IOPS"
	case "B/s":
		return units.MBps(v)
	}
	return units.Latency(time.Duration(v))
}

// indistinct finds, for each workload's primary metric, the pairs of
// groups whose means differ by less than their combined uncertainty (the
// half-widths of their 95% confidence intervals, added in quadrature).
func (c *Comparison) indistinct() {
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			m := c.PrimaryMetric(w)
			for i, a := range c.Groups {
				ca, ok := c.GroupCell(a, round, w, m)
				if !ok || ca.Stats.CI95 == nil {
					continue
				}
				for _, b := range c.Groups[i+1:] {
					cb, ok := c.GroupCell(b, round, w, m)
					if !ok || cb.Stats.CI95 == nil {
						continue
					}
					ha, hb := ca.Stats.CI95.High-ca.Mean, cb.Stats.CI95.High-cb.Mean
					u := math.Hypot(ha, hb)
					diff := math.Abs(ca.Mean - cb.Mean)
					mid := (ca.Mean + cb.Mean) / 2
					if diff >= u || mid == 0 {
						continue
					}
					c.Indistinct = append(c.Indistinct, Indistinct{Round: round, Workload: w, Metric: m, A: a, B: b,
						DiffPercent: diff / mid * 100, UncertaintyPercent: u / mid * 100})
				}
			}
		}
	}
}

// IndistinctOf reports whether two groups' figures cannot be told apart.
func (c *Comparison) IndistinctOf(a, b, round, workload, metric string) (Indistinct, bool) {
	for _, d := range c.Indistinct {
		if d.Round == round && d.Workload == workload && d.Metric == metric && ((d.A == a && d.B == b) || (d.A == b && d.B == a)) {
			return d, true
		}
	}
	return Indistinct{}, false
}

// targetLabels drops the labels that describe one result (its checks) from
// a target's environment.
func targetLabels(l map[string]string) map[string]string {
	clean := true
	for k := range l {
		if result.ResultLabel(k) {
			clean = false
			break
		}
	}
	if clean {
		return l
	}
	out := make(map[string]string, len(l))
	for k, v := range l {
		if !result.ResultLabel(k) {
			out[k] = v
		}
	}
	return out
}

const cliffSource = "storbench sustained suite: fio's bandwidth log over one long sequential write, split by two-segment least squares (docs/measurement.md)"

// cliffCheck judges a sustained write: the throughput after the cliff (or
// throughout, without one) against a pace the use needs.
func cliffCheck(subject, round string, cl Cliff, pace float64, paceName, use, source string) Check {
	ch := Check{Subject: subject, Name: "sustained write", Workload: cl.Workload, Round: round, Value: cl.AfterBytesPerSec, Unit: "B/s",
		Display: cl.Text, Threshold: fmt.Sprintf("warn when the sustained pace is below %s (%s)", units.MBps(pace), paceName), Source: source, Status: Pass}
	switch {
	case cl.Found && cl.AfterBytesPerSec < pace:
		ch.Status = Warn
		ch.Detail = fmt.Sprintf("%s larger than %.1f GB runs at %s once the drive's fast cache is spent", use, float64(cl.AtBytes)/1e9, units.MBps(cl.AfterBytesPerSec))
	case cl.Found:
		ch.Detail = fmt.Sprintf("after %.1f GB the drive slows, but still keeps %s", float64(cl.AtBytes)/1e9, paceName)
	case cl.AfterBytesPerSec < pace:
		ch.Status = Warn
		ch.Detail = "no cliff, but the whole write ran below " + paceName
	default:
		ch.Detail = "no cliff over the whole write"
	}
	return ch
}
