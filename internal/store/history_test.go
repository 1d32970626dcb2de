package store

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestHistory(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	day := func(d int) time.Time { return time.Date(2026, 3, 1, 4, 0, 0, 0, time.UTC).AddDate(0, 0, d) }
	// Runs stored out of measured order: a backfill after newer runs.
	// Each: run start, result start (zero: none), target, storage label.
	for i, c := range []struct {
		run, res  int
		noResTime bool
		target    string
		storage   string
		status    result.Status
	}{
		{run: 10, res: 10, target: "/mnt/a", storage: "ssd"},
		{run: 12, res: 12, target: "/mnt/a", storage: "ssd"},
		{run: 3, res: 3, target: "/mnt/a", storage: "ssd"},
		{run: 5, noResTime: true, target: "/mnt/a", storage: "ssd"},
		{run: 7, res: 7, target: "/mnt/b", storage: "hdd"},
		{run: 8, res: 8, target: "/mnt/a", storage: "hdd"},
		{run: 9, res: 9, target: "/mnt/a", storage: "ssd", status: result.StatusFailed},
	} {
		run := &result.Run{ID: fmt.Sprintf("20260301-0000%02d-aaaa", i), Suite: "standard", Source: "csv",
			Status: result.StatusComplete, Started: day(c.run)}
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		r := sample(run.ID, "rand-read-4k")
		r.Target, r.Labels = c.target, map[string]string{"storage": c.storage}
		r.Read.IOPS = float64(1000 + c.run)
		r.Started, r.Finished = day(c.res), day(c.res).Add(time.Minute)
		if c.noResTime {
			r.Started, r.Finished = time.Time{}, time.Time{}
		}
		if c.status != "" {
			r.Status = c.status
		}
		if err := s.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	// Another workload that no filter below selects by accident.
	other := sample("20260301-000000-aaaa", "seq-write-1m")
	if err := s.AddResult(ctx, other); err != nil {
		t.Fatal(err)
	}
	iops := func(h []MeasuredFigures) []float64 {
		var out []float64
		for _, m := range h {
			v, _ := m.Metric(result.MetricIOPS)
			out = append(out, v)
		}
		return out
	}
	cases := []struct {
		name string
		f    HistoryFilter
		want []float64
	}{
		{"by measured time, with the run's time for results without one",
			HistoryFilter{Workload: "rand-read-4k", Target: "/mnt/a", Status: result.StatusComplete}, []float64{1003, 1005, 1008, 1010, 1012}},
		{"label", HistoryFilter{Workload: "rand-read-4k", Labels: map[string]string{"storage": "ssd"}, Status: result.StatusComplete},
			[]float64{1003, 1005, 1010, 1012}},
		{"since", HistoryFilter{Workload: "rand-read-4k", Since: day(8)}, []float64{1008, 1009, 1010, 1012}},
		{"any status", HistoryFilter{Workload: "rand-read-4k", Target: "/mnt/a", Labels: map[string]string{"storage": "ssd"}},
			[]float64{1003, 1005, 1009, 1010, 1012}},
		{"nothing", HistoryFilter{Workload: "rand-read-4k", Labels: map[string]string{"storage": "nvme"}}, nil},
		{"no such target", HistoryFilter{Target: "/mnt/z"}, nil},
	}
	check := func(t *testing.T, r Reader) {
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				h, err := r.History(ctx, tc.f)
				if err != nil {
					t.Fatal(err)
				}
				if got := iops(h); fmt.Sprint(got) != fmt.Sprint(tc.want) {
					t.Errorf("IOPS in order %v, want %v", got, tc.want)
				}
				for i := 1; i < len(h); i++ {
					if h[i].Measured.Before(h[i-1].Measured) {
						t.Errorf("%s before %s", h[i].Measured, h[i-1].Measured)
					}
				}
			})
		}
	}
	t.Run("sqlite", func(t *testing.T) { check(t, s) })
	h, err := s.History(ctx, HistoryFilter{Target: "/mnt/a", Workload: "rand-read-4k", Since: day(5), Round: result.RoundIsolated})
	if err != nil {
		t.Fatal(err)
	}
	if len(h) == 0 || !h[0].Measured.Equal(day(5)) || h[0].Target != "/mnt/a" || h[0].Labels["storage"] != "ssd" {
		t.Errorf("first of the history: %+v", h)
	}
	t.Run("lazy", func(t *testing.T) {
		l := NewLazy(path)
		defer l.Close()
		check(t, l)
	})
	// Results stored before the compact figures existed (schema 3) have no
	// row there: their figures are derived, their order is the same.
	if _, err := s.db.ExecContext(ctx, `DELETE FROM result_figures WHERE result_id % 2 = 0`); err != nil {
		t.Fatal(err)
	}
	t.Run("without compact figures", func(t *testing.T) { check(t, s) })
}
