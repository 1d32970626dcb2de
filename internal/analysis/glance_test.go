package analysis

import (
	"fmt"
	"math"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// kubeFigures are two StorageClasses on three nodes, both rounds, with
// node-2 slow on longhorn: what a cluster-wide run stores
// (testdata/kube.json, shared with render's tests).
func kubeFigures(t *testing.T) []result.Figures {
	t.Helper()
	return figuresFile(t, "testdata/kube.json")
}

func TestNodeCharts(t *testing.T) {
	for _, group := range []string{"", "storage_class", "node"} {
		t.Run("group by "+group, func(t *testing.T) {
			c, err := Compare(kubeFigures(t), Options{GroupBy: group})
			if err != nil {
				t.Fatal(err)
			}
			v := NewView(c)
			if len(v.Nodes) != 4 {
				t.Fatalf("%d node charts, want one per round and workload (4)", len(v.Nodes))
			}
			ch := v.Nodes[0]
			if ch.Round != result.RoundIsolated || ch.Metric != result.MetricIOPS {
				t.Errorf("first chart is %s %s, want isolated IOPS", ch.Round, ch.Metric)
			}
			if fmt.Sprint(ch.Nodes) != "[node-1 node-2 node-3]" {
				t.Errorf("nodes %v", ch.Nodes)
			}
			if len(ch.Series) != 2 || ch.Series[0].Name != "local-path" || ch.Series[1].Name != "longhorn" {
				t.Fatalf("series %+v, want one per class", ch.Series)
			}
			lh := ch.Series[1]
			if !lh.Measured[1] || math.Abs(lh.Values[1]-2000) > 0.5 {
				t.Errorf("longhorn on node-2: %v %v, want 2000 IOPS", lh.Measured[1], lh.Values[1])
			}
			// Outliers are judged among a group's targets: by class, node-2
			// stands out within longhorn and nothing else does.
			if group == "storage_class" {
				if !lh.Outlier[1] {
					t.Error("longhorn on node-2 is 0.2x its peers and not marked an outlier")
				}
				if lh.Outlier[0] || lh.Outlier[2] || ch.Series[0].Outlier[1] {
					t.Error("a healthy node is marked an outlier")
				}
			}
			if p := v.Nodes[2]; p.Round != result.RoundParallel || math.Abs(p.Series[0].Values[0]-20000) > 0.5 {
				t.Errorf("parallel chart %+v", p)
			}
		})
	}
}

func TestNoNodeChartsOffKubernetes(t *testing.T) {
	figs := kubeFigures(t)
	for i := range figs {
		figs[i].Labels = map[string]string{}
		result.LabelNode.Set(figs[i].Labels, "only-node")
	}
	c, err := Compare(figs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if v := NewView(c); len(v.Nodes) != 0 {
		t.Errorf("%d node charts for targets on one node", len(v.Nodes))
	}
}

func TestMatrix(t *testing.T) {
	c, err := Compare(kubeFigures(t), Options{GroupBy: "storage_class", Baseline: "storage_class=local-path"})
	if err != nil {
		t.Fatal(err)
	}
	v := NewView(c)
	m := v.Matrix
	if m == nil {
		t.Fatal("no matrix")
	}
	if fmt.Sprint(m.Names, m.Rounds) != "[local-path longhorn] [isolated parallel]" {
		t.Errorf("columns %v %v", m.Names, m.Rounds)
	}
	if len(m.Rows) != 2 || m.Rows[0].Metric != result.MetricIOPS || m.Rows[1].Metric != result.MetricBW || len(m.Rows[0].Cells) != 4 {
		t.Fatalf("rows %+v", m.Rows)
	}
	row := m.Rows[0]
	lp, lh := row.Cell("local-path", result.RoundIsolated), row.Cell("longhorn", result.RoundParallel)
	if !lp.Best || !lp.IsBaseline || lp.Efficiency != nil || math.Abs(lp.Value-40000) > 1 {
		t.Errorf("local-path isolated %+v, want the best, the baseline, 40k IOPS", lp)
	}
	// longhorn parallel: mean of 4500, 1000, 4750 against local-path's 20000.
	want := (4500.0 + 1000 + 4750) / 3
	if math.Abs(lh.Value-want) > 1 || lh.Efficiency == nil || math.Abs(lh.Efficiency.Percent-want/20000*100) > 0.1 {
		t.Errorf("longhorn parallel %+v (efficiency %v), want %.0f IOPS at %.1f%%", lh, lh.Efficiency, want, want/200)
	}
	if got := row.Cell("nfs", result.RoundIsolated); got.Measured {
		t.Errorf("an unknown name has a cell: %+v", got)
	}
	// Every cell says what the section table says.
	for _, s := range v.Sections {
		row := m.Rows[0]
		if s.Workload == m.Rows[1].Workload {
			row = m.Rows[1]
		}
		for _, r := range s.Rows {
			if c := row.Cell(r.Name, s.Round); c.Value != r.Primary.Mean || c.Best != r.Best {
				t.Errorf("%s %s: matrix %+v, section %+v", r.Name, s.Round, c, r)
			}
		}
	}
}

func TestPlacementOf(t *testing.T) {
	c, err := Compare(kubeFigures(t), Options{GroupBy: "storage_class"})
	if err != nil {
		t.Fatal(err)
	}
	v, err := VerdictFor(ForGeneral, c, VerdictOptions{})
	if err != nil {
		t.Fatal(err)
	}
	p, ok := PlacementOf(v)
	if !ok {
		t.Fatal("no placement for the general verdict")
	}
	if fmt.Sprint(p.Subjects) != "[local-path (isolated) local-path (parallel) longhorn (isolated) longhorn (parallel)]" {
		t.Errorf("subjects %v", p.Subjects)
	}
	var uses []string
	for _, u := range p.Uses {
		uses = append(uses, u.Name)
	}
	// Random reads and sequential writes: the uses they are enough for, in
	// the rules' order.
	if fmt.Sprint(uses) != "[read-heavy services CI caches log aggregation]" {
		t.Errorf("uses %v", uses)
	}
	// Every rating check is in exactly one cell, with its rating.
	n := 0
	for _, ch := range v.Checks {
		if ch.Unit != ratingUnit {
			continue
		}
		n++
		var cell PlacementCell
		for _, u := range p.Uses {
			if u.Name == ch.Name {
				for si, s := range p.Subjects {
					if s == ch.Subject {
						cell = u.Cells[si]
					}
				}
			}
		}
		if cell.Rating != ch.Display || cell.Status != ch.Status || cell.Detail != ch.Detail {
			t.Errorf("%s %s: cell %+v, check %+v", ch.Subject, ch.Name, cell, ch)
		}
	}
	if n != 12 {
		t.Errorf("%d rating checks, want 3 uses x 4 subjects", n)
	}
	if _, ok := PlacementOf(&Verdict{For: ForEtcd, Checks: v.Checks}); ok {
		t.Error("an etcd verdict laid out as a placement")
	}
}
