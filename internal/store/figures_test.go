package store

import (
	"context"
	"math"
	"reflect"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func sameValues(a, b []float64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] && !(math.IsNaN(a[i]) && math.IsNaN(b[i])) {
			return false
		}
	}
	return true
}

func TestFigures(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	run := &result.Run{ID: "20261122-100000-aaaa", Suite: "standard", Source: "storbench", Status: result.StatusComplete}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	a, b := sample(run.ID, "seq-read"), sample(run.ID, "seq-write")
	b.Read, b.Sync, b.Bottleneck = nil, nil, nil
	b.Write = &result.Direction{IOPS: 10, BytesPerSec: 1e7, TotalIOs: 100,
		Completion: result.Latency{Mean: 2e6, Percentiles: []result.Percentile{{P: 99, Value: 5e6}}}}
	failed := sample(run.ID, "rand-read")
	failed.Status, failed.Read, failed.Sync = result.StatusFailed, nil, nil
	for _, r := range []*result.Result{a, b, failed} {
		if err := s.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	check := func(t *testing.T) {
		t.Helper()
		figs, err := s.Figures(ctx, ResultFilter{RunIDs: []string{run.ID}})
		if err != nil {
			t.Fatal(err)
		}
		if len(figs) != 3 {
			t.Fatalf("%d figures, want 3", len(figs))
		}
		for i, r := range []*result.Result{a, b, failed} {
			want := r.Figures()
			got := figs[i]
			if !sameValues(got.Values, want.Values) {
				t.Errorf("%s values = %v, want %v", r.Workload, got.Values, want.Values)
			}
			got.Values, want.Values = nil, nil
			want.Labels = r.Labels
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s figures = %+v, want %+v", r.Workload, got, want)
			}
		}
		if v, ok := figs[0].Metric(result.MetricSyncP99); !ok || v != 9e6 {
			t.Errorf("sync p99 = %v %v", v, ok)
		}
		if _, ok := figs[1].Metric(result.MetricSyncP99); ok {
			t.Error("a result without sync has a sync p99")
		}
	}
	t.Run("stored figures", check)

	// Results stored before schema 3 have no figures row: they are derived
	// from the stored document the same way.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM result_figures`); err != nil {
		t.Fatal(err)
	}
	t.Run("derived figures", check)

	figs, err := s.Figures(ctx, ResultFilter{RunIDs: []string{run.ID}, Workload: "seq-write"})
	if err != nil || len(figs) != 1 || figs[0].Workload != "seq-write" {
		t.Errorf("filtered figures = %+v, %v", figs, err)
	}
}
