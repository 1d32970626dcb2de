package analysis

import (
	"slices"

	"github.com/storbench/storbench/internal/result"
)

// NodeChart is one round and workload's primary figure per Kubernetes
// node: a row per node, a bar per storage class (or group) on it, so the
// node dragging a class down stands out.
type NodeChart struct {
	Round    string
	Workload string
	Metric   string
	// Nodes are the nodes measured, sorted by name.
	Nodes  []string
	Series []NodeSeries
}

// NodeSeries is one storage class (or group) across the nodes.
type NodeSeries struct {
	Name string
	// Values match NodeChart.Nodes, in the metric's base unit; Measured says
	// which hold a figure.
	Values   []float64
	Measured []bool
	// Outlier marks the nodes where a target of the series is an outlier
	// on this workload.
	Outlier []bool
}

// nodeCharts draws a chart per round and workload when the targets ran on
// at least two nodes.
func (v *View) nodeCharts() {
	c := v.Comparison
	nodeOf := map[string]string{}
	seriesOf := map[string]string{}
	var nodes, names []string
	for _, e := range c.Environments {
		n := result.LabelNode.Of(e.Labels)
		if n == "" {
			continue
		}
		nodeOf[e.Target] = n
		// A bar per group, or per storage class when the groups are the
		// nodes themselves or there are none.
		name := c.GroupOf(e.Target)
		if !v.Grouped || c.GroupBy == string(result.LabelNode) {
			name = result.LabelStorageClass.Of(e.Labels)
			if name == "" {
				name = e.Target
			}
		}
		seriesOf[e.Target] = name
		if !slices.Contains(nodes, n) {
			nodes = append(nodes, n)
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	if len(nodes) < 2 {
		return
	}
	slices.Sort(nodes)
	outlier := map[[3]string]bool{}
	for _, o := range c.Outliers {
		outlier[[3]string{o.Target, o.Round, o.Workload}] = true
	}
	for _, round := range c.Rounds {
		for _, w := range c.Workloads {
			m := c.PrimaryMetric(w)
			ch := NodeChart{Round: round, Workload: w, Metric: m, Nodes: nodes}
			for _, name := range names {
				s := NodeSeries{Name: name, Values: make([]float64, len(nodes)), Measured: make([]bool, len(nodes)), Outlier: make([]bool, len(nodes))}
				sum := make([]float64, len(nodes))
				count := make([]int, len(nodes))
				for _, t := range c.Targets {
					if seriesOf[t] != name || nodeOf[t] == "" {
						continue
					}
					cell, ok := c.TargetCell(t, round, w, m)
					if !ok {
						continue
					}
					i := slices.Index(nodes, nodeOf[t])
					sum[i] += cell.Mean
					count[i]++
					s.Outlier[i] = s.Outlier[i] || outlier[[3]string{t, round, w}]
				}
				any := false
				for i := range nodes {
					if count[i] > 0 {
						s.Values[i], s.Measured[i], any = sum[i]/float64(count[i]), true, true
					}
				}
				if any {
					ch.Series = append(ch.Series, s)
				}
			}
			if len(ch.Series) > 0 {
				v.Nodes = append(v.Nodes, ch)
			}
		}
	}
}
