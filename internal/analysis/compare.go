package analysis

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Options shape a comparison.
type Options struct {
	// GroupBy is a result label key; targets sharing its value form a group
	// whose figures are the mean of its targets' means. Empty: every target
	// is its own group.
	GroupBy string
	// Baseline is KEY=VALUE (the targets carrying that label) or a target
	// name. Empty: no efficiency figures. A KEY=VALUE baseline with no
	// GroupBy groups by KEY.
	Baseline string
	// Round keeps only results of this round. Empty: every round.
	Round string
}

// Comparison is everything compare and report show, computed once.
type Comparison struct {
	GroupBy  string `json:"group_by,omitempty"`
	Baseline string `json:"baseline,omitempty"`
	// Rounds, Workloads, Groups and Targets are in display order: rounds
	// isolated, parallel, contention then others; the rest in the order
	// results were stored.
	Rounds    []string `json:"rounds"`
	Workloads []string `json:"workloads"`
	Groups    []string `json:"group_names"`
	Targets   []string `json:"targets"`
	Metrics   []string `json:"metrics"`
	// TargetCells are the statistics of each target's repetitions.
	TargetCells []Cell `json:"target_stats"`
	// GroupCells are the groups' figures. Without GroupBy a group is a
	// target and its cell equals the target's.
	GroupCells   []Cell          `json:"groups"`
	Efficiency   []Efficiency    `json:"efficiency"`
	RoundChanges []RoundChange   `json:"round_change"`
	Best         []Best          `json:"best"`
	BestGroups   []Best          `json:"best_group,omitempty"`
	Outliers     []Outlier       `json:"outliers"`
	Unstable     []Unstable      `json:"unstable"`
	Bottlenecks  []Bottleneck    `json:"bottlenecks"`
	Environments []Environment   `json:"environments"`
	Skipped      []SkippedResult `json:"skipped"`
	// Methods notes each workload whose figures were obtained by different
	// methods (storbench's own fio suite, an iozone import, a dd log...).
	Methods []MethodNote `json:"methods"`
	// Measurement checks (validity.go): results that never reached steady
	// state, may measure a cache, or found a write cliff; sanity rules;
	// figures closer than their uncertainty.
	Marks      []Mark       `json:"marks"`
	Cliffs     []Cliff      `json:"write_cliffs"`
	Sanity     []Sanity     `json:"sanity"`
	Indistinct []Indistinct `json:"no_measurable_difference"`

	targetGroup map[string]string
	cellIndex   map[cellKey]int
	groupIndex  map[cellKey]int
	effIndex    map[cellKey]int
	primary     map[string]string
}

// Cell is one figure of one target or group, in one round and workload.
type Cell struct {
	Group    string `json:"group"`
	Target   string `json:"target,omitempty"`
	Round    string `json:"round"`
	Workload string `json:"workload"`
	Metric   string `json:"metric"`
	// Mean is in Unit, the metric's base unit (IOPS, B/s or ns).
	Mean float64 `json:"mean"`
	Unit string  `json:"unit"`
	// N counts the results behind the figure; Targets the targets.
	N       int   `json:"n"`
	Targets int   `json:"targets"`
	Stats   Stats `json:"stats"`
}

// Efficiency is a group's (or target's) figure as a percentage of the
// baseline's. Percent is oriented so that more is better: for latencies it
// is baseline / value, so 50% means twice the baseline's latency.
type Efficiency struct {
	Group    string  `json:"group"`
	Baseline string  `json:"baseline"`
	Round    string  `json:"round"`
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Percent  float64 `json:"percent"`
	// Ratio is value / baseline value, whatever the metric.
	Ratio float64 `json:"ratio"`
}

// RoundChange is a group's relative change between two rounds:
// (to - from) / from in percent.
type RoundChange struct {
	Group    string  `json:"group"`
	From     string  `json:"from"`
	To       string  `json:"to"`
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Percent  float64 `json:"percent"`
	// Better says whether the change is an improvement for this metric.
	Better bool `json:"better"`
}

// Best is the target (or group) with the best mean for one round,
// workload and metric.
type Best struct {
	Round    string  `json:"round"`
	Workload string  `json:"workload"`
	Metric   string  `json:"metric"`
	Target   string  `json:"target,omitempty"`
	Group    string  `json:"group"`
	Value    float64 `json:"value"`
	Unit     string  `json:"unit"`
}

// Outlier is a target far from its peers in the same group: throughput or
// IOPS below OutlierLow times the peers' median, or p99 latency above
// OutlierHigh times it.
type Outlier struct {
	Target     string  `json:"target"`
	Group      string  `json:"group"`
	Round      string  `json:"round"`
	Workload   string  `json:"workload"`
	Metric     string  `json:"metric"`
	Ratio      float64 `json:"ratio"`
	Value      float64 `json:"value"`
	PeerMedian float64 `json:"peer_median"`
	Peers      int     `json:"peers"`
	Unit       string  `json:"unit"`
}

// Outlier thresholds, relative to the median of a target's peers.
const (
	OutlierLow  = 0.5
	OutlierHigh = 2.0
)

// Unstable is a target whose repetitions spread more than
// UnstableCVPercent.
type Unstable struct {
	Target    string  `json:"target"`
	Round     string  `json:"round"`
	Workload  string  `json:"workload"`
	Metric    string  `json:"metric"`
	N         int     `json:"n"`
	CVPercent float64 `json:"cv_percent"`
	Min       float64 `json:"min"`
	Max       float64 `json:"max"`
	Mean      float64 `json:"mean"`
	Unit      string  `json:"unit"`
}

// Bottleneck is what limited a target on a workload, as measured.
type Bottleneck struct {
	Target    string `json:"target"`
	Round     string `json:"round"`
	Workload  string `json:"workload"`
	LimitedBy string `json:"limited_by"`
	Evidence  string `json:"evidence"`
}

// Environment describes a target: its group, runs and labels.
type Environment struct {
	Target string            `json:"target"`
	Name   string            `json:"name"`
	Group  string            `json:"group"`
	Runs   []string          `json:"runs"`
	Labels map[string]string `json:"labels"`
}

// SkippedResult counts results left out because they did not complete.
type SkippedResult struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Status   string `json:"status"`
	Count    int    `json:"count"`
}

// ErrNoResults is returned when nothing is left to compare.
var ErrNoResults = errors.New("no completed results to compare")

// NoGroup is the group of a target lacking the GroupBy label.
const NoGroup = "(none)"

type cellKey struct{ who, round, workload, metric string }

type seriesKey struct{ target, round, workload string }

// Compare analyses figures. Results that did not complete are counted in
// Skipped and otherwise ignored. It gathers the figures into one series per
// target, round and workload, summarizes each into target cells, then
// judges them: groups, efficiency against the baseline, changes between
// rounds, the best, outliers, marks, sanity and what cannot be told apart.
func Compare(figs []result.Figures, opts Options) (*Comparison, error) {
	baseKey, baseValue, baseIsLabel := strings.Cut(opts.Baseline, "=")
	if baseIsLabel && strings.TrimSpace(baseKey) == "" {
		return nil, fmt.Errorf("baseline %q: write it as KEY=VALUE or a target name", opts.Baseline)
	}
	if baseIsLabel && opts.GroupBy == "" {
		opts.GroupBy = baseKey
	}
	c := &Comparison{GroupBy: opts.GroupBy, Baseline: opts.Baseline, targetGroup: map[string]string{},
		cellIndex: map[cellKey]int{}, groupIndex: map[cellKey]int{}, effIndex: map[cellKey]int{}}
	g := newGathering()
	if err := g.gather(c, figs, opts); err != nil {
		return nil, err
	}
	c.Skipped = g.skippedResults()
	c.Methods = g.methods.notes()
	if len(g.order) == 0 {
		if opts.Round != "" {
			return nil, fmt.Errorf("%w in round %q", ErrNoResults, opts.Round)
		}
		return nil, ErrNoResults
	}
	c.describe(g)
	c.targetCells(g)
	c.groupCells()
	c.primaryMetrics()
	if err := c.efficiency(baseKey, baseValue, baseIsLabel); err != nil {
		return nil, err
	}
	c.roundChanges()
	c.best()
	c.outliers()
	c.marks(&g.marks)
	c.sanity()
	c.indistinct()
	return c, nil
}

// series is one target's figures on one workload in one round.
type series struct {
	group  string
	values [][]float64 // per metric
	bottle *result.Attribution
}

// gathering is what Compare collects from the figures before it judges.
type gathering struct {
	all map[seriesKey]*series
	// order lists the series as first met; targetCells sorts it.
	order                              []seriesKey
	rounds, workloads, targets, groups *ordered
	metricSeen                         []bool
	envs                               map[string]*Environment
	skipped                            map[[3]string]int // target, workload, status
	methods                            methodSet
	marks                              markSet
}

func newGathering() *gathering {
	return &gathering{all: map[seriesKey]*series{}, rounds: newOrdered(), workloads: newOrdered(), targets: newOrdered(),
		groups: newOrdered(), metricSeen: make([]bool, len(result.Metrics)), envs: map[string]*Environment{},
		skipped: map[[3]string]int{}, methods: methodSet{}}
}

// gather sorts the figures of opts.Round (every round when empty) into
// series, counts the incomplete ones, and records each target's group
// (c.targetGroup), refusing a target that carries two.
func (g *gathering) gather(c *Comparison, figs []result.Figures, opts Options) error {
	keys := targetKeys(figs)
	for i := range figs {
		f := &figs[i]
		round := roundOf(f)
		if opts.Round != "" && round != opts.Round {
			continue
		}
		t := keys[i]
		if f.Status != result.StatusComplete {
			g.skipped[[3]string{t, f.Workload, string(f.Status)}]++
			continue
		}
		group := t
		if opts.GroupBy != "" {
			group = f.Labels[opts.GroupBy]
			if group == "" {
				group = NoGroup
			}
		}
		if was, seen := c.targetGroup[t]; seen && was != group {
			return fmt.Errorf("target %s carries %s=%s in one result and %s=%s in another: label it consistently or compare the runs separately",
				t, opts.GroupBy, was, opts.GroupBy, group)
		}
		c.targetGroup[t] = group
		g.add(f, t, round, group)
	}
	return nil
}

// add records one complete result of target t.
func (g *gathering) add(f *result.Figures, t, round, group string) {
	g.rounds.add(round)
	g.workloads.add(f.Workload)
	g.targets.add(t)
	g.groups.add(group)
	e := g.envs[t]
	if e == nil {
		e = &Environment{Target: t, Name: f.Target, Group: group, Labels: targetLabels(f.Labels)}
		g.envs[t] = e
	}
	if !slices.Contains(e.Runs, f.RunID) {
		e.Runs = append(e.Runs, f.RunID)
	}
	g.methods.add(round, f.Workload, t, f.Method)
	k := seriesKey{t, round, f.Workload}
	g.marks.add(k, f)
	s := g.all[k]
	if s == nil {
		s = &series{group: group, values: make([][]float64, len(result.Metrics))}
		g.all[k] = s
		g.order = append(g.order, k)
	}
	for m, v := range f.Values {
		if m < len(result.Metrics) && !math.IsNaN(v) {
			s.values[m] = append(s.values[m], v)
			g.metricSeen[m] = true
		}
	}
	if f.Bottleneck != nil {
		s.bottle = f.Bottleneck
	}
}

// skippedResults lists the incomplete results counted, by target and
// workload.
func (g *gathering) skippedResults() []SkippedResult {
	var out []SkippedResult
	for k, n := range g.skipped {
		out = append(out, SkippedResult{Target: k[0], Workload: k[1], Status: k[2], Count: n})
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		return a.Target+"\x00"+a.Workload < b.Target+"\x00"+b.Workload
	})
	return out
}

// describe says what was compared: rounds, workloads, targets, groups,
// the metrics measured, and each target's environment.
func (c *Comparison) describe(g *gathering) {
	c.Rounds = sortRounds(g.rounds.list)
	c.Workloads, c.Targets, c.Groups = g.workloads.list, g.targets.list, g.groups.list
	for m, seen := range g.metricSeen {
		if seen {
			c.Metrics = append(c.Metrics, result.Metrics[m])
		}
	}
	for _, t := range c.Targets {
		c.Environments = append(c.Environments, *g.envs[t])
	}
}

// targetCells summarizes each series into one cell per metric, in display
// order (round, workload, target, metric), noting the unstable ones and
// what limited each target.
func (c *Comparison) targetCells(g *gathering) {
	order := g.order
	sort.SliceStable(order, func(i, j int) bool {
		a, b := order[i], order[j]
		if a.round != b.round {
			return slices.Index(c.Rounds, a.round) < slices.Index(c.Rounds, b.round)
		}
		if a.workload != b.workload {
			return slices.Index(c.Workloads, a.workload) < slices.Index(c.Workloads, b.workload)
		}
		return slices.Index(c.Targets, a.target) < slices.Index(c.Targets, b.target)
	})
	for _, k := range order {
		s := g.all[k]
		for m, vals := range s.values {
			if len(vals) == 0 {
				continue
			}
			st := Summarize(vals)
			name := result.Metrics[m]
			c.cellIndex[cellKey{k.target, k.round, k.workload, name}] = len(c.TargetCells)
			c.TargetCells = append(c.TargetCells, Cell{Group: s.group, Target: k.target, Round: k.round, Workload: k.workload,
				Metric: name, Mean: st.Mean, Unit: result.MetricUnit(name), N: st.N, Targets: 1, Stats: st})
			if st.Unstable() {
				c.Unstable = append(c.Unstable, Unstable{Target: k.target, Round: k.round, Workload: k.workload, Metric: name,
					N: st.N, CVPercent: st.CVPercent, Min: st.Min, Max: st.Max, Mean: st.Mean, Unit: result.MetricUnit(name)})
			}
		}
		if s.bottle != nil {
			c.Bottlenecks = append(c.Bottlenecks, Bottleneck{Target: k.target, Round: k.round, Workload: k.workload,
				LimitedBy: s.bottle.LimitedBy, Evidence: s.bottle.Evidence})
		}
	}
}

// groupCells aggregates target cells into group cells: the mean of the
// targets' means, so a target repeated more often does not weigh more.
func (c *Comparison) groupCells() {
	if c.GroupBy == "" {
		for i, cell := range c.TargetCells {
			cell.Group = cell.Target
			cell.Target = ""
			c.groupIndex[cellKey{cell.Group, cell.Round, cell.Workload, cell.Metric}] = i
			c.GroupCells = append(c.GroupCells, cell)
		}
		return
	}
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			for _, g := range c.Groups {
				for _, m := range c.Metrics {
					var means []float64
					n := 0
					for _, t := range c.Targets {
						if c.targetGroup[t] != g {
							continue
						}
						if cell, ok := c.TargetCell(t, round, w, m); ok {
							means = append(means, cell.Mean)
							n += cell.N
						}
					}
					if len(means) == 0 {
						continue
					}
					st := Summarize(means)
					c.groupIndex[cellKey{g, round, w, m}] = len(c.GroupCells)
					c.GroupCells = append(c.GroupCells, Cell{Group: g, Round: round, Workload: w, Metric: m, Mean: st.Mean,
						Unit: result.MetricUnit(m), N: n, Targets: len(means), Stats: st})
				}
			}
		}
	}
}

// TargetCell returns a target's figure.
func (c *Comparison) TargetCell(target, round, workload, metric string) (Cell, bool) {
	i, ok := c.cellIndex[cellKey{target, round, workload, metric}]
	if !ok {
		return Cell{}, false
	}
	return c.TargetCells[i], true
}

// GroupCell returns a group's figure (a target's, without GroupBy).
func (c *Comparison) GroupCell(group, round, workload, metric string) (Cell, bool) {
	i, ok := c.groupIndex[cellKey{group, round, workload, metric}]
	if !ok {
		return Cell{}, false
	}
	return c.GroupCells[i], true
}

// EfficiencyOf returns a group's (a target's, without GroupBy) efficiency
// against the baseline, if a baseline was set.
func (c *Comparison) EfficiencyOf(group, round, workload, metric string) (Efficiency, bool) {
	i, ok := c.effIndex[cellKey{group, round, workload, metric}]
	if !ok {
		return Efficiency{}, false
	}
	return c.Efficiency[i], true
}

// GroupOf returns the group a target belongs to.
func (c *Comparison) GroupOf(target string) string { return c.targetGroup[target] }

// TargetsOf lists a group's targets in display order.
func (c *Comparison) TargetsOf(group string) []string {
	var out []string
	for _, t := range c.Targets {
		if c.targetGroup[t] == group {
			out = append(out, t)
		}
	}
	return out
}

func (c *Comparison) efficiency(key, value string, isLabel bool) error {
	if c.Baseline == "" {
		return nil
	}
	// Which targets make the baseline, and which group (if any) it is.
	var members []string
	self := ""
	if isLabel {
		for _, e := range c.Environments {
			if e.Labels[key] == value {
				members = append(members, e.Target)
			}
		}
		if key == c.GroupBy {
			self = value
		}
		if len(members) == 0 {
			return fmt.Errorf("baseline %s: no target carries that label (labels: %s)", c.Baseline, strings.Join(c.labelValues(key), ", "))
		}
	} else {
		for _, t := range c.Targets {
			if t == c.Baseline {
				members = []string{t}
				break
			}
		}
		if members == nil {
			for _, e := range c.Environments {
				if e.Name == c.Baseline {
					members = append(members, e.Target)
				}
			}
		}
		switch {
		case len(members) == 0:
			return fmt.Errorf("baseline %q is neither KEY=VALUE nor one of the targets: %s", c.Baseline, strings.Join(c.Targets, ", "))
		case len(members) > 1:
			return fmt.Errorf("baseline %q names several targets (%s): give one of them", c.Baseline, strings.Join(members, ", "))
		}
		if c.GroupBy == "" {
			self = members[0]
		}
	}
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			for _, m := range c.Metrics {
				var means []float64
				for _, t := range members {
					if cell, ok := c.TargetCell(t, round, w, m); ok {
						means = append(means, cell.Mean)
					}
				}
				if len(means) == 0 {
					continue
				}
				base := Summarize(means).Mean
				if base <= 0 {
					continue
				}
				for _, g := range c.Groups {
					if g == self {
						continue
					}
					cell, ok := c.GroupCell(g, round, w, m)
					if !ok || cell.Mean <= 0 {
						continue
					}
					ratio := cell.Mean / base
					pct := ratio * 100
					if !result.HigherIsBetter(m) {
						pct = base / cell.Mean * 100
					}
					c.effIndex[cellKey{g, round, w, m}] = len(c.Efficiency)
					c.Efficiency = append(c.Efficiency, Efficiency{Group: g, Baseline: c.Baseline, Round: round, Workload: w,
						Metric: m, Percent: pct, Ratio: ratio})
				}
			}
		}
	}
	return nil
}

func (c *Comparison) labelValues(key string) []string {
	vals := newOrdered()
	for _, e := range c.Environments {
		if v := e.Labels[key]; v != "" {
			vals.add(key + "=" + v)
		}
	}
	if len(vals.list) == 0 {
		return []string{"none has " + key}
	}
	return vals.list
}

// roundChanges compares every later round with the first one present.
func (c *Comparison) roundChanges() {
	if len(c.Rounds) < 2 {
		return
	}
	for _, g := range c.Groups {
		for _, w := range c.Workloads {
			for _, m := range c.Metrics {
				var from *Cell
				var fromRound string
				for _, r := range c.Rounds {
					cell, ok := c.GroupCell(g, r, w, m)
					if !ok {
						continue
					}
					if from == nil {
						from, fromRound = &cell, r
						continue
					}
					if from.Mean == 0 {
						continue
					}
					pct := (cell.Mean - from.Mean) / from.Mean * 100
					better := pct > 0 == result.HigherIsBetter(m)
					if pct == 0 {
						better = false
					}
					c.RoundChanges = append(c.RoundChanges, RoundChange{Group: g, From: fromRound, To: r, Workload: w,
						Metric: m, Percent: pct, Better: better})
				}
			}
		}
	}
}

func better(m string, a, b float64) bool {
	if result.HigherIsBetter(m) {
		return a > b
	}
	return a < b
}

func (c *Comparison) best() {
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			for _, m := range c.Metrics {
				var best *Cell
				for _, t := range c.Targets {
					if cell, ok := c.TargetCell(t, round, w, m); ok && (best == nil || better(m, cell.Mean, best.Mean)) {
						best = &cell
					}
				}
				if best != nil {
					c.Best = append(c.Best, Best{Round: round, Workload: w, Metric: m, Target: best.Target, Group: best.Group,
						Value: best.Mean, Unit: best.Unit})
				}
				if c.GroupBy == "" {
					continue
				}
				best = nil
				for _, g := range c.Groups {
					if cell, ok := c.GroupCell(g, round, w, m); ok && (best == nil || better(m, cell.Mean, best.Mean)) {
						best = &cell
					}
				}
				if best != nil {
					c.BestGroups = append(c.BestGroups, Best{Round: round, Workload: w, Metric: m, Group: best.Group,
						Value: best.Mean, Unit: best.Unit})
				}
			}
		}
	}
}

// IsBest reports whether a target (group false) or group (group true) is
// the best for a round, workload and metric.
func (c *Comparison) IsBest(who string, group bool, round, workload, metric string) bool {
	list := c.Best
	if group && c.GroupBy != "" {
		list = c.BestGroups
	}
	for _, b := range list {
		if b.Round == round && b.Workload == workload && b.Metric == metric {
			if group && c.GroupBy != "" {
				return b.Group == who
			}
			return b.Target == who
		}
	}
	return false
}

// outlierMetrics are the figures outliers are judged on.
var outlierMetrics = []string{result.MetricIOPS, result.MetricBW, result.MetricLatP99}

// outliers flags targets far from the median of the other targets of their
// group (all targets form one group without GroupBy). One peer is enough.
func (c *Comparison) outliers() {
	for _, g := range c.Groups {
		members := c.Targets
		group := ""
		if c.GroupBy != "" {
			members = c.TargetsOf(g)
			group = g
		} else if g != c.Groups[0] {
			break // without GroupBy every target is judged once, against all others
		}
		if len(members) < 2 {
			continue
		}
		for _, round := range c.Rounds {
			for _, w := range c.Workloads {
				for _, m := range outlierMetrics {
					for _, t := range members {
						cell, ok := c.TargetCell(t, round, w, m)
						if !ok {
							continue
						}
						var peers []float64
						for _, p := range members {
							if p == t {
								continue
							}
							if pc, ok := c.TargetCell(p, round, w, m); ok {
								peers = append(peers, pc.Mean)
							}
						}
						if len(peers) == 0 {
							continue
						}
						med := median(peers)
						if med <= 0 {
							continue
						}
						ratio := cell.Mean / med
						if (result.HigherIsBetter(m) && ratio < OutlierLow) || (!result.HigherIsBetter(m) && ratio > OutlierHigh) {
							c.Outliers = append(c.Outliers, Outlier{Target: t, Group: group, Round: round, Workload: w, Metric: m,
								Ratio: ratio, Value: cell.Mean, PeerMedian: med, Peers: len(peers), Unit: cell.Unit})
						}
					}
				}
			}
		}
	}
}

// targetKeys names each figure's target. A target path is often the same
// on several hosts (/mnt/ssd) or measured again in a later run: those are
// told apart as host:path, and path@run when two runs measured the same
// workload and round on it, so a before/after comparison shows both sides
// instead of merging them. Runs that measured different rounds of one
// target stay one target.
func targetKeys(figs []result.Figures) []string {
	hosts := map[string]map[string]bool{}
	runs := map[string]map[string]bool{}
	split := map[string]bool{}
	for i := range figs {
		f := &figs[i]
		h := result.LabelHostname.Of(f.Labels)
		if hosts[f.Target] == nil {
			hosts[f.Target] = map[string]bool{}
		}
		hosts[f.Target][h] = true
		k := h + "\x00" + f.Target + "\x00" + roundOf(f) + "\x00" + f.Workload
		if runs[k] == nil {
			runs[k] = map[string]bool{}
		}
		runs[k][f.RunID] = true
		if len(runs[k]) > 1 {
			split[h+"\x00"+f.Target] = true
		}
	}
	keys := make([]string, len(figs))
	for i := range figs {
		f := &figs[i]
		h := result.LabelHostname.Of(f.Labels)
		k := f.Target
		if len(hosts[f.Target]) > 1 && h != "" {
			k = h + ":" + k
		}
		if split[h+"\x00"+f.Target] {
			k += "@" + shortRunID(f.RunID)
		}
		keys[i] = k
	}
	return keys
}

// roundOf is a result's round; imports that name none measured one target
// at a time.
func roundOf(f *result.Figures) string {
	if f.Round == "" {
		return result.RoundIsolated
	}
	return f.Round
}

// shortRunID drops the date of a run ID: 20261122-142305-3fa9 -> 142305-3fa9.
func shortRunID(id string) string {
	if _, rest, ok := strings.Cut(id, "-"); ok && len(id) >= 15 {
		return rest
	}
	return id
}

var roundOrder = []string{result.RoundIsolated, result.RoundParallel, result.RoundContention}

func sortRounds(rs []string) []string {
	out := append([]string(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := slices.Index(roundOrder, out[i]), slices.Index(roundOrder, out[j])
		if a < 0 {
			a = len(roundOrder)
		}
		if b < 0 {
			b = len(roundOrder)
		}
		return a < b
	})
	return out
}

type ordered struct {
	list []string
	seen map[string]bool
}

func newOrdered() *ordered { return &ordered{seen: map[string]bool{}} }

func (o *ordered) add(s string) {
	if !o.seen[s] {
		o.seen[s] = true
		o.list = append(o.list, s)
	}
}

// MethodNote says that one workload's figures come from different methods,
// so a side-by-side comparison is of equivalent, not identical, tests.
type MethodNote struct {
	Round    string `json:"round"`
	Workload string `json:"workload"`
	// Methods maps each target to how its figure was obtained.
	Methods map[string]string `json:"methods"`
}

// OwnMethod names storbench's own measurements in method notes.
const OwnMethod = "storbench fio suite"

type methodSet map[[2]string]map[string]string

func (m methodSet) add(round, workload, target, method string) {
	if method == "" {
		method = OwnMethod
	}
	k := [2]string{round, workload}
	if m[k] == nil {
		m[k] = map[string]string{}
	}
	m[k][target] = method
}

func (m methodSet) notes() []MethodNote {
	var out []MethodNote
	for k, byTarget := range m {
		distinct := map[string]bool{}
		for _, v := range byTarget {
			distinct[v] = true
		}
		if len(distinct) > 1 {
			out = append(out, MethodNote{Round: k[0], Workload: k[1], Methods: byTarget})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Round != out[j].Round {
			return out[i].Round < out[j].Round
		}
		return out[i].Workload < out[j].Workload
	})
	return out
}
