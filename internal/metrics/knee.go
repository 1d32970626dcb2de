package metrics

import (
	"slices"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
)

// The saturation sweep's knee (storbench run --clients): each step's
// figures are ordinary series in round "sweep-N"; these say where the
// newest sweep of a workload on a target stopped scaling.
const (
	NameSweepKneeClients = namespace + "_sweep_knee_clients"
	NameSweepKneeIOPS    = namespace + "_sweep_knee_iops"
	NameSweepMaxClients  = namespace + "_sweep_max_clients"
)

var (
	kneeLabels          = append(slices.Clone(targetLabels), labelWorkload)
	descSweepKneeClient = prometheus.NewDesc(NameSweepKneeClients,
		"Clients at the knee of the newest saturation sweep: the step after which a doubling of the clients added under 10% throughput or multiplied p99 by over 2 (docs/sweep.md). No series: no knee found up to the largest step.", kneeLabels, nil)
	descSweepKneeIOPS = prometheus.NewDesc(NameSweepKneeIOPS,
		"Aggregate IOPS of all clients at the knee of the newest saturation sweep.", kneeLabels, nil)
	descSweepMaxClients = prometheus.NewDesc(NameSweepMaxClients,
		"The most clients a usable step of the newest saturation sweep ran.", kneeLabels, nil)
)

// kneeSeries gives, per target, host and workload, the knee of the newest
// sweep among figs.
func kneeSeries(figs []result.Figures) []prometheus.Metric {
	newest := map[[3]string]analysis.SweepView{}
	var order [][3]string
	values := map[[3]string][]string{}
	for _, v := range analysis.SweepsOf(figs) {
		var l map[string]string
		for _, f := range figs {
			if f.RunID == v.RunID && f.Target == v.Target && f.Workload == v.Workload {
				l = f.Labels
				break
			}
		}
		k := [3]string{v.Target, result.LabelHostname.Of(l), v.Workload}
		old, seen := newest[k]
		if !seen {
			order = append(order, k)
		}
		if !seen || v.RunID > old.RunID {
			newest[k] = v
			values[k] = []string{v.Target, k[1], result.LabelNode.Of(l), result.LabelStorageClass.Of(l), v.Workload}
		}
	}
	var out []prometheus.Metric
	for _, k := range order {
		v, lv := newest[k], values[k]
		most := 0
		for _, s := range v.Steps {
			if s.Unusable == "" {
				most = max(most, s.Clients)
			}
		}
		if most > 0 {
			out = append(out, prometheus.MustNewConstMetric(descSweepMaxClients, prometheus.GaugeValue, float64(most), lv...))
		}
		if v.Knee.Found {
			out = append(out, prometheus.MustNewConstMetric(descSweepKneeClient, prometheus.GaugeValue, float64(v.Knee.Clients), lv...),
				prometheus.MustNewConstMetric(descSweepKneeIOPS, prometheus.GaugeValue, v.Knee.IOPS, lv...))
		}
	}
	return out
}
