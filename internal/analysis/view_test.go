package analysis

import (
	"math"
	"slices"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// rowOf finds a row of the view's section for round and workload.
func rowOf(t *testing.T, v *View, round, workload, name string) (Section, Row) {
	t.Helper()
	for _, s := range v.Sections {
		if s.Round != round || s.Workload != workload {
			continue
		}
		for _, r := range s.Rows {
			if r.Name == name {
				return s, r
			}
		}
	}
	t.Fatalf("no row %s in %s %s", name, workload, round)
	return Section{}, Row{}
}

func TestViewGroupedRows(t *testing.T) {
	v := NewView(mustCompare(t, fixture(t), Options{GroupBy: "storage", Baseline: "storage=nvme"}))
	if !v.Grouped || len(v.Sections) != 4 {
		t.Fatalf("grouped %v, %d sections, want 4 (2 rounds x 2 workloads)", v.Grouped, len(v.Sections))
	}
	if s := v.Sections[0]; s.Round != iso || s.Workload != seq || s.Primary != bw ||
		!slices.Equal(s.Metrics, []string{iops, bw, result.MetricLatP50, p99}) {
		t.Errorf("first section: %s %s primary %s metrics %v", s.Round, s.Workload, s.Primary, s.Metrics)
	}
	tests := []struct {
		name, round, workload, group string
		best, baseline, cvHigh       bool
		unstable, outlier            bool
		efficiency                   float64 // 0: none
		n, targets                   int
	}{
		// nvme repeats seq-read (n2: 800, 1100 MB/s: CV 22%) and is the baseline.
		{"nvme seq-read isolated", iso, seq, "nvme", true, true, true, true, false, 0, 4, 2},
		// sata: (500 + 200) / 2 = 350 of 1000 MB/s; s2 is below half of s1.
		{"sata seq-read isolated", iso, seq, "sata", false, false, false, false, true, 35, 2, 2},
		{"sata rand-read parallel", par, rand, "sata", false, false, false, false, false, 100 * 7500.0 / 20000, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, r := rowOf(t, v, tt.round, tt.workload, tt.group)
			if r.Best != tt.best || r.IsBaseline != tt.baseline || r.CVHigh != tt.cvHigh || r.Unstable != tt.unstable ||
				r.Outlier != tt.outlier || r.N != tt.n || r.Targets != tt.targets {
				t.Errorf("row = %+v", r)
			}
			if got := r.Efficiency; (got == nil) != (tt.efficiency == 0) || (got != nil && math.Abs(got.Percent-tt.efficiency) > 1e-9) {
				t.Errorf("efficiency = %+v, want %v%%", got, tt.efficiency)
			}
			if r.Primary == nil || r.Primary.Metric != s.Primary || len(r.Figures) != len(s.Metrics) {
				t.Errorf("primary %+v, %d figures for %d metrics", r.Primary, len(r.Figures), len(s.Metrics))
			}
		})
	}
	if len(v.Leaders) != 4 || v.Leaders[0].Name != "nvme" || v.Leaders[0].Value != 1000e6 || v.Leaders[0].Metric != bw {
		t.Errorf("leaders = %+v", v.Leaders)
	}
	// Only sata is measured against nvme: one line per round.
	if len(v.Reach) != 2 || v.Reach[0].Group != "sata" || len(v.Reach[0].Figures) != 2 {
		t.Errorf("reach = %+v", v.Reach)
	}
	for _, e := range v.Efficiency {
		if e.Metric != v.Comparison.PrimaryMetric(e.Workload) {
			t.Errorf("efficiency on a secondary metric: %+v", e)
		}
	}
	if len(v.Latency) != 4 || len(v.Latency[0].Series) != 2 || len(v.Latency[0].Metrics) != 4 {
		t.Errorf("latency charts: %d, first %+v", len(v.Latency), v.Latency[0])
	}
	if !v.Repeated {
		t.Error("n1 and n2 repeat seq-read: the spread is known")
	}
}

func TestViewRecords(t *testing.T) {
	c := mustCompare(t, fixture(t), Options{GroupBy: "storage", Baseline: "storage=nvme"})
	v := NewView(c)
	if len(v.Records) != len(c.TargetCells)+len(c.GroupCells) {
		t.Fatalf("%d records for %d target and %d group cells", len(v.Records), len(c.TargetCells), len(c.GroupCells))
	}
	for _, r := range v.Records {
		if r.Scope == ScopeTarget && r.Efficiency != nil {
			t.Errorf("grouped: a target record carries efficiency: %+v", r)
		}
		if r.Scope == ScopeGroup && r.Cell.Group == "sata" && r.Cell.Round == iso && r.Cell.Workload == seq && r.Cell.Metric == bw &&
			(r.Best || r.Efficiency == nil || r.Efficiency.Percent != 35) {
			t.Errorf("sata seq-read: %+v", r)
		}
		if r.Scope == ScopeGroup && r.Cell.Group == "nvme" && r.Cell.Round == iso && r.Cell.Workload == seq && r.Cell.Metric == bw &&
			(!r.Best || !r.Unstable) {
			t.Errorf("nvme seq-read: best and unstable, got %+v", r)
		}
	}
	// Without grouping a target is its own row and carries its efficiency.
	v = NewView(mustCompare(t, fixture(t), Options{Baseline: "/mnt/n1", Round: iso}))
	for _, r := range v.Records {
		if r.Scope != ScopeTarget {
			t.Fatalf("ungrouped record of scope %s", r.Scope)
		}
		if r.Cell.Target == "/mnt/s1" && r.Cell.Metric == bw && r.Cell.Workload == seq && (r.Efficiency == nil || math.Abs(r.Efficiency.Percent-100*500.0/1050) > 1e-9) {
			t.Errorf("/mnt/s1 seq-read: %+v", r.Efficiency)
		}
	}
	if v.Leaders[0].Name != "/mnt/n1" || len(v.Sections[0].Rows) != 4 || v.Sections[0].Rows[0].Targets != 1 {
		t.Errorf("ungrouped: leaders %+v, rows %+v", v.Leaders, v.Sections[0].Rows)
	}
	if _, r := rowOf(t, v, iso, seq, "/mnt/n1"); !r.IsBaseline || r.Efficiency != nil {
		t.Errorf("the baseline target: %+v", r)
	}
}

// TestViewRowWithoutPrimary: a target measuring only latency on an IOPS
// workload keeps its row (with dashes) but draws no bar.
func TestViewRowWithoutPrimary(t *testing.T) {
	nan := math.NaN()
	values := func(iopsV, bwV, p99V float64) []float64 {
		v := make([]float64, len(result.Metrics))
		for i := range v {
			v[i] = nan
		}
		v[result.MetricIndex(iops)], v[result.MetricIndex(bw)], v[result.MetricIndex(p99)] = iopsV, bwV, p99V
		return v
	}
	figs := []result.Figures{
		{RunID: "r1", Target: "/mnt/a", Round: iso, Repetition: 1, Workload: "rand-write", Status: result.StatusComplete, Values: values(1000, 4096000, 1e6)},
		{RunID: "r1", Target: "/mnt/b", Round: iso, Repetition: 1, Workload: "rand-write", Status: result.StatusComplete, Values: values(nan, nan, 2e6)},
	}
	v := NewView(mustCompare(t, figs, Options{}))
	s, b := rowOf(t, v, iso, "rand-write", "/mnt/b")
	if s.Primary != iops || b.Primary != nil || b.N != 1 || b.Best || b.CVKnown {
		t.Errorf("primary %s, row %+v", s.Primary, b)
	}
	for i, m := range s.Metrics {
		if (b.Figures[i] != nil) != (m == p99) {
			t.Errorf("%s: figure %+v", m, b.Figures[i])
		}
	}
	if _, a := rowOf(t, v, iso, "rand-write", "/mnt/a"); a.Primary == nil || !a.Best {
		t.Errorf("/mnt/a: %+v", a)
	}
}
