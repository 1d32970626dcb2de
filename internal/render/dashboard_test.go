package render

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/trend"
)

func TestTrendChartDots(t *testing.T) {
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	pts := func(n int) []trend.Point {
		var out []trend.Point
		for i := range n {
			out = append(out, trend.Point{Time: start.AddDate(0, 0, i), RunID: string(rune('a' + i%26)), Value: 100})
		}
		return out
	}
	j := trend.Assessment{Target: "/mnt/a", Workload: "w", Metric: result.MetricIOPS, Verdict: trend.OK, Baseline: 100, Band: 0.05, BaselineRuns: 10, BaselineSince: start}
	for _, tc := range []struct {
		points, dots int
	}{
		{10, 10},
		{200, 1}, // only the latest
	} {
		svg := string(trendChartSVG(j, pts(tc.points)))
		if n := strings.Count(svg, "<circle"); n != tc.dots {
			t.Errorf("%d points: %d dots, want %d", tc.points, n, tc.dots)
		}
		if !strings.Contains(svg, `class="band"`) || !strings.Contains(svg, `class="baseline"`) {
			t.Errorf("%d points: no band or baseline", tc.points)
		}
	}
	// The runs since a change keep their (red) dots in a long history.
	p := pts(200)
	p[190].RunID = "changed"
	j.Verdict, j.Since = trend.Regression, &p[190]
	svg := string(trendChartSVG(j, p))
	if n := strings.Count(svg, `class="point changed"`); n != 10 {
		t.Errorf("%d changed dots, want 10", n)
	}
}

func TestTimelines(t *testing.T) {
	r := result.Result{Workload: "w", Target: "/mnt/a", Round: result.RoundIsolated, Repetition: 1, Telemetry: &result.Telemetry{
		Series: &result.TelemetrySeries{OffsetsMS: []int64{1000, 2000, 3000}, Values: map[string][]float64{
			result.SeriesCPUBusy: {10, 50, 90}, result.SeriesDiskWriteBPS: {1e8, 2e8, 1.5e8}, result.SeriesDiskUtil: {1, 2}, // short: left out
		}}}}
	tl := Timelines([]result.Result{r, {Workload: "none"}})
	if len(tl) != 2 || len(tl[0].Legend) != 1 || tl[0].Legend[0].Name != result.SeriesCPUBusy || len(tl[1].Legend) != 1 {
		t.Fatalf("timelines: %+v", tl)
	}
	if !strings.Contains(string(tl[1].SVG), "MB/s") || strings.Count(string(tl[0].SVG), "<polyline") != 1 {
		t.Errorf("charts: %s\n%s", tl[0].SVG, tl[1].SVG)
	}
}
