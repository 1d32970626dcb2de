package analysis

import (
	"math"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// View is a comparison made ready to show: which figures each workload's
// table holds, the best, the efficiency, the spread and the flags of every
// row, the summary lines and the charts' series are all decided here, so a
// renderer (terminal, Markdown, HTML, JSON, CSV, a web page) only formats.
type View struct {
	// Comparison holds the lists shown as they are: outliers, unstable
	// figures, measurement checks, environments...
	Comparison *Comparison
	// Grouped says rows are groups of targets (GroupBy), not targets.
	Grouped bool
	// Sections are the workload tables, per round then workload.
	Sections []Section
	// Leaders are the best per round and workload on its primary metric.
	Leaders []Leader
	// Reach is each group's efficiency on the primary metrics, per round
	// (with a baseline only).
	Reach []Reach
	// Efficiency and RoundChanges keep each workload's primary metric
	// only, efficiency in group order.
	Efficiency   []Efficiency
	RoundChanges []RoundChange
	// Latency holds the latency-by-percentile charts: per round and
	// workload with at least two percentiles measured.
	Latency []LatencyChart
	// Repeated says some target repeated a workload, so its spread is known.
	Repeated bool
	// Records are every figure with its flags: target cells, then (grouped)
	// group cells.
	Records []Record
	// Matrix is every workload's primary figure at a glance; nil when no
	// section has one.
	Matrix *Matrix
	// Nodes are the per-node charts of Kubernetes runs: present when the
	// targets ran on two nodes or more.
	Nodes []NodeChart
	// Links are the network round's matrices and Breakdowns explain each
	// network-backed or replicated result (breakdown.go); the library
	// fills them where the results hold a network round or replicas.
	Links      []LinkMatrix
	Breakdowns []Breakdown
	// Sweeps are the saturation sweeps among the figures (knee.go); the
	// library fills them.
	Sweeps []SweepView
}

// TableMetrics are the figures a workload table may show, in column order.
var TableMetrics = []string{result.MetricIOPS, result.MetricBW, result.MetricLatP50, result.MetricLatP99, result.MetricSyncP99}

// LatencyMetrics are the percentiles a latency chart may plot.
var LatencyMetrics = []string{result.MetricLatP50, result.MetricLatP90, result.MetricLatP99, result.MetricLatP999}

// Section is one round's table of one workload.
type Section struct {
	Round    string
	Workload string
	// Primary is the workload's charted figure (Comparison.PrimaryMetric).
	Primary string
	// Metrics are the TableMetrics some row holds.
	Metrics []string
	Rows    []Row
	// Bottlenecks are what limited each target, as measured.
	Bottlenecks []Bottleneck
}

// Row is one group (a target without grouping) in a Section.
type Row struct {
	Name string
	// Targets counts the group's targets.
	Targets int
	// N counts the results behind the primary figure (or the first figure
	// the row has).
	N int
	// Figures match Section.Metrics; nil where the row has none.
	Figures []*Cell
	// Primary is the row's primary figure; nil leaves it out of the chart.
	Primary *Cell
	// Best marks the best on the primary metric.
	Best bool
	// CVPercent is the worst coefficient of variation of a target's
	// repetitions on the primary metric (the spread between a group's
	// targets is not instability); CVKnown says a target repeated it, and
	// CVHigh that it is above UnstableCVPercent.
	CVPercent float64
	CVKnown   bool
	CVHigh    bool
	// Efficiency is the primary figure against the baseline; nil for the
	// baseline itself (IsBaseline) or without one.
	Efficiency *Efficiency
	IsBaseline bool
	// Unstable: a target of the row repeats the primary figure unstably;
	// Outlier: a target of the row is an outlier on this workload.
	Unstable bool
	Outlier  bool
}

// Leader is the best target or group of a round and workload on its
// primary metric.
type Leader struct {
	Round    string
	Workload string
	Metric   string
	Name     string
	Value    float64
}

// Reach is a group's efficiency on each workload's primary metric in one
// round.
type Reach struct {
	Group   string
	Round   string
	Figures []Efficiency
}

// LatencyChart is one round and workload's latency by percentile.
type LatencyChart struct {
	Round    string
	Workload string
	// Metrics are the LatencyMetrics some group holds: the chart's axis.
	Metrics []string
	Series  []LatencySeries
}

// LatencySeries is a group's line: one cell per percentile it holds.
type LatencySeries struct {
	Name   string
	Points []Cell
}

// Record is one figure with its flags, the unit of tabular exports.
type Record struct {
	// Scope is "target" (a target's repetitions) or "group".
	Scope string
	Cell  Cell
	Best  bool
	// Efficiency is the figure against the baseline: a group's, or a
	// target's without grouping; nil otherwise.
	Efficiency *Efficiency
	Unstable   bool
}

// Record scopes.
const (
	ScopeTarget = "target"
	ScopeGroup  = "group"
)

// NewView completes a comparison for display.
func NewView(c *Comparison) *View {
	v := &View{Comparison: c, Grouped: c.GroupBy != ""}
	fl := newFlags(c)
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			if s, ok := v.section(fl, round, w); ok {
				v.Sections = append(v.Sections, s)
			}
		}
	}
	v.leaders()
	v.reach()
	for _, g := range c.Groups {
		for _, e := range c.Efficiency {
			if e.Group == g && e.Metric == c.PrimaryMetric(e.Workload) {
				v.Efficiency = append(v.Efficiency, e)
			}
		}
	}
	for _, rc := range c.RoundChanges {
		if rc.Metric == c.PrimaryMetric(rc.Workload) {
			v.RoundChanges = append(v.RoundChanges, rc)
		}
	}
	v.latency()
	for _, cell := range c.TargetCells {
		v.Repeated = v.Repeated || cell.N >= 2
	}
	v.records(fl)
	v.matrix()
	v.nodeCharts()
	return v
}

func (v *View) section(fl flags, round, w string) (Section, bool) {
	c := v.Comparison
	s := Section{Round: round, Workload: w, Primary: c.PrimaryMetric(w)}
	for _, m := range TableMetrics {
		for _, g := range c.Groups {
			if _, ok := c.GroupCell(g, round, w, m); ok {
				s.Metrics = append(s.Metrics, m)
				break
			}
		}
	}
	if len(s.Metrics) == 0 {
		return s, false
	}
	for _, g := range c.Groups {
		row := Row{Name: g, Targets: len(c.TargetsOf(g)), Best: c.IsBest(g, true, round, w, s.Primary)}
		if pc, ok := c.GroupCell(g, round, w, s.Primary); ok {
			row.Primary, row.N = &pc, pc.N
		}
		measured := row.Primary != nil
		for _, m := range s.Metrics {
			var fig *Cell
			if cell, ok := c.GroupCell(g, round, w, m); ok {
				fig = &cell
				if !measured {
					row.N, measured = cell.N, true
				}
			}
			row.Figures = append(row.Figures, fig)
		}
		if !measured {
			continue
		}
		row.CVPercent, row.CVKnown = v.repetitionCV(g, round, w, s.Primary)
		row.CVHigh = row.CVKnown && row.CVPercent > UnstableCVPercent
		if c.Baseline != "" {
			if e, ok := c.EfficiencyOf(g, round, w, s.Primary); ok {
				row.Efficiency = &e
			} else {
				row.IsBaseline = v.isBaseline(g)
			}
		}
		row.Unstable = fl.unstable[cellKey{g, round, w, s.Primary}]
		row.Outlier = fl.outlier[cellKey{g, round, w, ""}]
		s.Rows = append(s.Rows, row)
	}
	for _, b := range c.Bottlenecks {
		if b.Round == round && b.Workload == w {
			s.Bottlenecks = append(s.Bottlenecks, b)
		}
	}
	return s, true
}

// repetitionCV is the worst coefficient of variation of a row's targets'
// repetitions.
func (v *View) repetitionCV(g, round, w, m string) (float64, bool) {
	c := v.Comparison
	targets := []string{g}
	if v.Grouped {
		targets = c.TargetsOf(g)
	}
	worst, found := 0.0, false
	for _, t := range targets {
		if cell, ok := c.TargetCell(t, round, w, m); ok && cell.Stats.N >= 2 {
			worst, found = math.Max(worst, cell.Stats.CVPercent), true
		}
	}
	return worst, found
}

// isBaseline reports whether a row is the baseline: the target named, or
// the group KEY=VALUE names.
func (v *View) isBaseline(g string) bool {
	c := v.Comparison
	if c.Baseline == g {
		return true
	}
	k, val, ok := strings.Cut(c.Baseline, "=")
	return ok && k == c.GroupBy && val == g
}

func (v *View) leaders() {
	c := v.Comparison
	list := c.Best
	if v.Grouped {
		list = c.BestGroups
	}
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			m := c.PrimaryMetric(w)
			for _, b := range list {
				if b.Round == round && b.Workload == w && b.Metric == m {
					name := b.Target
					if v.Grouped {
						name = b.Group
					}
					v.Leaders = append(v.Leaders, Leader{Round: round, Workload: w, Metric: m, Name: name, Value: b.Value})
				}
			}
		}
	}
}

func (v *View) reach() {
	c := v.Comparison
	if c.Baseline == "" {
		return
	}
	for _, g := range c.Groups {
		for _, round := range c.Rounds {
			r := Reach{Group: g, Round: round}
			for _, w := range c.Workloads {
				if e, ok := c.EfficiencyOf(g, round, w, c.PrimaryMetric(w)); ok {
					r.Figures = append(r.Figures, e)
				}
			}
			if len(r.Figures) > 0 {
				v.Reach = append(v.Reach, r)
			}
		}
	}
}

func (v *View) latency() {
	c := v.Comparison
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			ch := LatencyChart{Round: round, Workload: w}
			for _, m := range LatencyMetrics {
				for _, g := range c.Groups {
					if _, ok := c.GroupCell(g, round, w, m); ok {
						ch.Metrics = append(ch.Metrics, m)
						break
					}
				}
			}
			if len(ch.Metrics) < 2 {
				continue
			}
			for _, g := range c.Groups {
				s := LatencySeries{Name: g}
				for _, m := range LatencyMetrics {
					if cell, ok := c.GroupCell(g, round, w, m); ok {
						s.Points = append(s.Points, cell)
					}
				}
				if len(s.Points) > 0 {
					ch.Series = append(ch.Series, s)
				}
			}
			v.Latency = append(v.Latency, ch)
		}
	}
}

func (v *View) records(fl flags) {
	c := v.Comparison
	eff := func(who string, cell Cell) *Efficiency {
		if e, ok := c.EfficiencyOf(who, cell.Round, cell.Workload, cell.Metric); ok {
			return &e
		}
		return nil
	}
	for _, cell := range c.TargetCells {
		r := Record{Scope: ScopeTarget, Cell: cell, Unstable: cell.Stats.Unstable(),
			Best: c.IsBest(cell.Target, false, cell.Round, cell.Workload, cell.Metric)}
		if !v.Grouped {
			r.Efficiency = eff(cell.Target, cell)
		}
		v.Records = append(v.Records, r)
	}
	if !v.Grouped {
		return
	}
	for _, cell := range c.GroupCells {
		v.Records = append(v.Records, Record{Scope: ScopeGroup, Cell: cell, Efficiency: eff(cell.Group, cell),
			Best:     c.IsBest(cell.Group, true, cell.Round, cell.Workload, cell.Metric),
			Unstable: fl.unstable[cellKey{cell.Group, cell.Round, cell.Workload, cell.Metric}]})
	}
}

// flags say, per group (a target without grouping), round and workload,
// whether a target is unstable on a metric or an outlier (metric empty).
type flags struct {
	unstable map[cellKey]bool
	outlier  map[cellKey]bool
}

func newFlags(c *Comparison) flags {
	fl := flags{unstable: map[cellKey]bool{}, outlier: map[cellKey]bool{}}
	for _, u := range c.Unstable {
		fl.unstable[cellKey{u.Target, u.Round, u.Workload, u.Metric}] = true
		fl.unstable[cellKey{c.GroupOf(u.Target), u.Round, u.Workload, u.Metric}] = true
	}
	for _, o := range c.Outliers {
		fl.outlier[cellKey{o.Target, o.Round, o.Workload, ""}] = true
		if c.GroupBy != "" {
			fl.outlier[cellKey{c.GroupOf(o.Target), o.Round, o.Workload, ""}] = true
		}
	}
	return fl
}
