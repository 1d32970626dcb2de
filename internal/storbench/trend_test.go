package storbench_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
	"github.com/storbench/storbench/internal/trend/trendtest"
)

// storeHistory stores one run per point of each series, at the point's
// time, with reps repetitions of each result (the point's value ± 1%).
// blockSize turns IOPS into bandwidth.
func storeHistory(t *testing.T, st store.Store, storage string, blockSize float64, reps int, series ...trend.Series) {
	t.Helper()
	for _, s := range series {
		for i, p := range s.Points {
			var rs []result.Result
			for rep := range reps {
				v := p.Value * (1 + 0.01*float64(rep-reps/2))
				rs = append(rs, result.Result{Target: s.Target, Workload: s.Workload, Round: result.RoundIsolated,
					Repetition: rep + 1, Status: result.StatusComplete, Labels: map[string]string{"storage": storage},
					Started: p.Time, Finished: p.Time.Add(time.Minute),
					Write: &result.Direction{IOPS: v, BytesPerSec: v * blockSize, TotalIOs: int64(v * 60)}})
			}
			id := fmt.Sprintf("%s-%s-%s-%03d", p.Time.Format("20060102"), s.Target, s.Workload, i)
			storeRun(t, st, result.Run{ID: id, Started: p.Time.Add(-time.Minute)}, rs)
		}
	}
}

func named(s trend.Series, target, workload string) trend.Series {
	s.Target, s.Workload = target, workload
	return s
}

func TestTrend(t *testing.T) {
	st := sqliteStore(t)
	ctx := context.Background()
	drop := trendtest.History{Runs: 20, CV: 0.04, Step: -0.41, StepAt: 14}.Series(1)
	steady := trendtest.History{Runs: 20, CV: 0.04}.Series(2)
	few := trendtest.History{Runs: 3, CV: 0.04}.Series(3)
	storeHistory(t, st, "hdd", 4096, 3, named(drop, "nas-disk-2", "rand-write-4k-qd32"))
	storeHistory(t, st, "ssd", 1<<20, 1, named(steady, "nvme0", "seq-write-1m"))
	storeHistory(t, st, "ssd", 4096, 1, named(few, "nvme0", "rand-write-4k-qd32"))

	tests := []struct {
		name string
		req  storbench.TrendRequest
		// want: target/workload/metric/verdict per series, worst first.
		want    []string
		verdict trend.Verdict
	}{
		{"all, worst first", storbench.TrendRequest{}, []string{
			"nas-disk-2/rand-write-4k-qd32/iops/regression",
			"nvme0/rand-write-4k-qd32/iops/insufficient-history",
			"nvme0/seq-write-1m/bw/ok"}, trend.Regression},
		{"target", storbench.TrendRequest{Target: "nvme0"}, []string{
			"nvme0/rand-write-4k-qd32/iops/insufficient-history",
			"nvme0/seq-write-1m/bw/ok"}, trend.InsufficientHistory},
		{"label and metric", storbench.TrendRequest{Labels: map[string]string{"storage": "hdd"}, Metric: result.MetricLatMean},
			[]string{"nas-disk-2/rand-write-4k-qd32/lat_mean/insufficient-history"}, trend.InsufficientHistory},
		{"since leaves too little history", storbench.TrendRequest{Workload: "rand-write-4k-qd32", Target: "nas-disk-2", Since: drop.Points[16].Time},
			[]string{"nas-disk-2/rand-write-4k-qd32/iops/insufficient-history"}, trend.InsufficientHistory},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := storbench.Trend(ctx, st, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range rep.Series {
				got = append(got, fmt.Sprintf("%s/%s/%s/%s", s.Target, s.Workload, s.Metric, s.Verdict))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) || rep.Verdict != tc.verdict {
				t.Errorf("got %s %v\nwant %s %v", rep.Verdict, got, tc.verdict, tc.want)
			}
		})
	}

	rep, err := storbench.Trend(ctx, st, storbench.TrendRequest{Target: "nas-disk-2"})
	if err != nil {
		t.Fatal(err)
	}
	s := rep.Series[0]
	if s.Since == nil || !s.Since.Time.Equal(drop.Points[14].Time) || s.BaselineRuns != 14 || len(s.Points) != 20 {
		t.Errorf("change at %+v, baseline of %d runs, %d points: %s", s.Since, s.BaselineRuns, len(s.Points), s.Message)
	}
	// The three repetitions of a run are one point, their median.
	if p := s.Points[3]; p.Value != drop.Points[3].Value || !p.Time.Equal(drop.Points[3].Time) {
		t.Errorf("point 3 = %+v, want the median %v at %s", p, drop.Points[3].Value, drop.Points[3].Time)
	}
	if rep.Count(trend.Regression) != 1 || rep.Count(trend.OK) != 0 {
		t.Errorf("counts: %d regressions, %d ok", rep.Count(trend.Regression), rep.Count(trend.OK))
	}

	for _, bad := range []storbench.TrendRequest{
		{Target: "nas-disk-9"},
		{Labels: map[string]string{"storage": "tape"}},
		{Metric: "iops_p99"},
	} {
		var req *storbench.RequestError
		if _, err := storbench.Trend(ctx, st, bad); !errors.As(err, &req) {
			t.Errorf("%+v: %v, want a RequestError", bad, err)
		}
	}
}

func TestParseSince(t *testing.T) {
	now := time.Date(2026, 11, 23, 19, 0, 0, 0, time.UTC)
	berlin := time.FixedZone("CET", 3600)
	for _, tc := range []struct {
		in   string
		want time.Time
	}{
		{"90d", now.AddDate(0, 0, -90)},
		{"12w", now.AddDate(0, 0, -84)},
		{"36h", now.Add(-36 * time.Hour)},
		{"90m", now.Add(-90 * time.Minute)},
		{"2026-03-02", time.Date(2026, 3, 2, 0, 0, 0, 0, berlin)},
		{"2026-03-02T04:00:00+02:00", time.Date(2026, 3, 2, 2, 0, 0, 0, time.UTC)},
		{" 7d ", now.AddDate(0, 0, -7)},
	} {
		got, err := storbench.ParseSince(tc.in, now, berlin)
		if err != nil || !got.Equal(tc.want) {
			t.Errorf("ParseSince(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "d", "-3d", "last tuesday", "3.5d", "2026-13-01", "-36h", "99999999d"} {
		var req *storbench.RequestError
		if _, err := storbench.ParseSince(bad, now, berlin); !errors.As(err, &req) || !strings.Contains(err.Error(), "Since") {
			t.Errorf("ParseSince(%q): %v, want a RequestError naming Since", bad, err)
		}
	}
}
