package render

import (
	"bytes"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/trend"
	"github.com/storbench/storbench/internal/trend/trendtest"
)

// trendAssessments assesses generated histories with every verdict: a step
// down, a latency drift up, a warning, an improvement, a steady series
// and one with too little history.
func trendAssessments() []trend.Assessment {
	series := func(h trendtest.History, seed uint64, target, workload, round, metric string) trend.Series {
		s := h.Series(seed)
		s.Target, s.Workload, s.Round, s.Metric, s.Unit = target, workload, round, metric, result.MetricUnit(metric)
		return s
	}
	var js []trend.Assessment
	for _, s := range []trend.Series{
		series(trendtest.History{Runs: 20, Level: 12000, CV: 0.03, Step: -0.41, StepAt: 16}, 1, "nas-disk-2", "rand-write-4k-qd32", "isolated", result.MetricIOPS),
		series(trendtest.History{Runs: 40, Level: 2e6, CV: 0.03, Drift: 0.5, Better: trend.LowerIsBetter}, 2, "sd-card", "rand-read-4k-qd1", "isolated", result.MetricLatP99),
		series(trendtest.History{Runs: 15, Level: 110e6, CV: 0.02, Step: -0.3, StepAt: 14}, 3, "usb-ssd", "seq-read-1m", "parallel", result.MetricBW),
		series(trendtest.History{Runs: 30, Level: 400e6, CV: 0.02, Step: 0.5, StepAt: 27}, 4, "nvme0", "seq-write-1m", "isolated", result.MetricBW),
		series(trendtest.History{Runs: 12, Level: 90000, CV: 0.05}, 5, "nvme0", "rand-read-4k-qd32", "isolated", result.MetricIOPS),
		series(trendtest.History{Runs: 3, Level: 150, CV: 0.05}, 6, "hdd\x1b[31m", "rand-write-4k-qd32", "isolated", result.MetricIOPS),
	} {
		js = append(js, trend.Assess(s, trend.Options{}))
	}
	trend.Sort(js)
	return js
}

func TestTrendText(t *testing.T) {
	js := trendAssessments()
	want := []trend.Verdict{trend.Regression, trend.Regression, trend.Warning, trend.InsufficientHistory, trend.OK, trend.OK}
	for i, j := range js {
		if j.Verdict != want[i] {
			t.Fatalf("judgement %d (%s on %s) is %s, want %s: the generated histories no longer cover every verdict", i, j.Workload, j.Target, j.Verdict, want[i])
		}
	}
	for _, tc := range []struct {
		golden string
		write  func(*bytes.Buffer) error
	}{
		{"trend.txt", func(b *bytes.Buffer) error { return TrendText(b, js, false) }},
		{"trend-color.txt", func(b *bytes.Buffer) error { return TrendText(b, js, true) }},
		{"trend.md", func(b *bytes.Buffer) error { return TrendMarkdown(b, js) }},
		{"trend-none.txt", func(b *bytes.Buffer) error { return TrendText(b, nil, false) }},
	} {
		t.Run(tc.golden, func(t *testing.T) {
			var out bytes.Buffer
			if err := tc.write(&out); err != nil {
				t.Fatal(err)
			}
			golden(t, tc.golden, out.Bytes())
		})
	}
}
