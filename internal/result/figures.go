package result

import "math"

// Figures is a result reduced to what comparisons and reports read: its
// identity, labels and the value of every metric in Metrics, without the
// latency distributions. Analyses over many thousands of results work on
// Figures so they never hold every distribution in memory.
type Figures struct {
	ID         int64             `json:"id,omitempty"`
	RunID      string            `json:"run_id"`
	Target     string            `json:"target"`
	Round      string            `json:"round"`
	Repetition int               `json:"repetition"`
	Workload   string            `json:"workload"`
	Labels     map[string]string `json:"labels,omitempty"`
	Status     Status            `json:"status"`
	Method     string            `json:"method,omitempty"`
	// Values holds one value per entry of Metrics, in the same order and in
	// base units; NaN means the result does not hold that metric.
	Values     []float64    `json:"-"`
	Bottleneck *Attribution `json:"bottleneck,omitempty"`
}

// MetricIndex returns the position of metric m in Metrics, or -1.
func MetricIndex(m string) int {
	for i, name := range Metrics {
		if name == m {
			return i
		}
	}
	return -1
}

// Figures computes the result's figures with Result.Metric, so every
// reader of stored results derives a metric the same way.
func (r *Result) Figures() Figures {
	f := Figures{ID: r.ID, RunID: r.RunID, Target: r.Target, Round: r.Round, Repetition: r.Repetition,
		Workload: r.Workload, Labels: r.Labels, Status: r.Status, Method: r.Method, Bottleneck: r.Bottleneck,
		Values: make([]float64, len(Metrics))}
	for i, m := range Metrics {
		v, ok := r.Metric(m)
		if !ok {
			v = math.NaN()
		}
		f.Values[i] = v
	}
	return f
}

// Metric returns one figure in base units and whether the result holds it.
func (f *Figures) Metric(m string) (float64, bool) {
	i := MetricIndex(m)
	if i < 0 || i >= len(f.Values) || math.IsNaN(f.Values[i]) {
		return 0, false
	}
	return f.Values[i], true
}
