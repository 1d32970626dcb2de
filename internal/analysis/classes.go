package analysis

import (
	"sort"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// ClassFigure is the median of one workload's results on one storage
// class.
type ClassFigure struct {
	Workload    string        `json:"workload"`
	Results     int           `json:"results"`
	IOPS        float64       `json:"iops"`
	BytesPerSec float64       `json:"bytes_per_sec"`
	LatencyP99  time.Duration `json:"lat_p99_ns"`
	// LastRun is the newest run among the results.
	LastRun string `json:"last_run"`
}

// ClassFigures groups the isolated-round figures labelled with a storage
// class by class and workload and gives each group's medians, workloads in
// name order. Other rounds do not describe a class alone; figures without
// a class label are left out. A metric no result of a group holds is 0.
func ClassFigures(figs []result.Figures) map[string][]ClassFigure {
	type group struct {
		n             int
		iops, bw, p99 []float64
		lastRun       string
	}
	byClass := map[string]map[string]*group{}
	for i := range figs {
		f := &figs[i]
		class := result.LabelStorageClass.Of(f.Labels)
		if class == "" || f.Round != result.RoundIsolated {
			continue
		}
		if byClass[class] == nil {
			byClass[class] = map[string]*group{}
		}
		g := byClass[class][f.Workload]
		if g == nil {
			g = &group{}
			byClass[class][f.Workload] = g
		}
		g.n++
		if v, ok := f.Metric(result.MetricIOPS); ok {
			g.iops = append(g.iops, v)
		}
		if v, ok := f.Metric(result.MetricBW); ok {
			g.bw = append(g.bw, v)
		}
		if v, ok := f.Metric(result.MetricLatP99); ok {
			g.p99 = append(g.p99, v)
		}
		g.lastRun = max(g.lastRun, f.RunID)
	}
	out := map[string][]ClassFigure{}
	for class, workloads := range byClass {
		for w, g := range workloads {
			out[class] = append(out[class], ClassFigure{Workload: w, Results: g.n, IOPS: Summarize(g.iops).Median,
				BytesPerSec: Summarize(g.bw).Median, LatencyP99: time.Duration(Summarize(g.p99).Median), LastRun: g.lastRun})
		}
		sort.Slice(out[class], func(i, j int) bool { return out[class][i].Workload < out[class][j].Workload })
	}
	return out
}

// Class is a StorageClass with its measured performance: what storbench
// classes shows.
type Class struct {
	result.StorageClass
	Measured []ClassFigure `json:"measured"`
	// Measure is the command to run when nothing is measured yet.
	Measure string `json:"measure,omitempty"`
	// Qualification is the newest measured qualification (nil: none) and
	// PickTwo its trade-off line.
	Qualification *ClassQualification `json:"qualification,omitempty"`
	PickTwo       string              `json:"pick_two"`
}

// Classes attaches to each class the medians of its isolated-round
// figures among figs (see ClassFigures), or the command that measures it
// when there are none, and its newest qualification among quals (see
// ClassQualifications) with its pick-two line; never nil.
func Classes(classes []result.StorageClass, figs []result.Figures, quals map[string]*ClassQualification) []Class {
	measured := ClassFigures(figs)
	out := []Class{}
	for _, sc := range classes {
		c := Class{StorageClass: sc, Measured: measured[sc.Name], Qualification: quals[sc.Name]}
		c.PickTwo = PickTwo(c.Qualification, c.Measured)
		if len(c.Measured) == 0 {
			c.Measured = []ClassFigure{}
			c.Measure = "storbench run --suite quick --target k8s:" + sc.Name
		}
		out = append(out, c)
	}
	return out
}
