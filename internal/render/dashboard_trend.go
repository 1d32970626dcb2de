package render

import (
	"fmt"
	"html"
	"html/template"
	"io"
	"math"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/trend"
)

// DashboardTrend is the trend page: each target × workload × round judged
// against its own history, worst first; the first Charted of them drawn.
type DashboardTrend struct {
	DashboardPage
	Filter  DashboardTrendFilter
	Verdict trend.Verdict
	Series  []DashboardTrendSeries
	// Counts is how many series got each verdict, worst first.
	Counts []VerdictCount
	// Charted is how many series have a chart; the rest are rows only.
	Charted int
	// Targets, without a target or workload chosen, lists the targets to
	// pick from instead of judging every history at once.
	Targets []DashboardTarget
}

// DashboardTarget is a target holding results.
type DashboardTarget struct {
	Target  string
	Results int
	Last    time.Time
}

// DashboardTrendFilter is the trend page's filter as the user typed it.
type DashboardTrendFilter struct {
	Target, Workload, Round, Label, Since string
}

// VerdictCount is how many series got one verdict.
type VerdictCount struct {
	Verdict trend.Verdict
	N       int
}

// DashboardTrendSeries is one history with its verdict: the judgement in words and
// numbers and, when charted, the chart.
type DashboardTrendSeries struct {
	trend.Assessment
	Anchor   string
	Baseline string // formatted with its unit
	Level    string
	Band     string
	Chart    template.HTML
}

// NewTrendSeries formats a judgement and, if chart, draws its history.
func NewTrendSeries(j trend.Assessment, points []trend.Point, chart bool) DashboardTrendSeries {
	s := DashboardTrendSeries{Assessment: j, Anchor: anchor(j.Target + "-" + j.Workload + "-" + j.Round)}
	if j.Baseline != 0 {
		s.Baseline = FormatValue(j.Metric, j.Baseline)
		s.Band = fmt.Sprintf("±%.1f%%", 100*j.Band)
	}
	if j.Level != 0 {
		s.Level = FormatValue(j.Metric, j.Level)
	}
	if chart && len(points) > 0 {
		s.Chart = trendChartSVG(j, points)
	}
	return s
}

// DashboardTrendHTML writes the trend page.
func DashboardTrendHTML(w io.Writer, v *DashboardTrend) error { return dashboardPage(w, "trend", v) }

func anchor(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// maxTrendDots is the longest history drawn with a dot per run.
const maxTrendDots = 120

// trendChartSVG draws a history over time: the points, the baseline and
// its noise band over the baseline runs, and the runs since a change
// marked (red for a regression or warning, green for an improvement).
func trendChartSVG(j trend.Assessment, points []trend.Point) template.HTML {
	const w, h, left, right, top, bottom = svgWidth, 200.0, 64.0, 12.0, 10.0, 26.0
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, p := range points {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
	}
	if j.Baseline != 0 {
		lo = math.Min(lo, j.Baseline*(1-j.Band))
		hi = math.Max(hi, j.Baseline*(1+j.Band))
	}
	lo = math.Max(0, lo-(hi-lo)*0.1)
	hi += (hi - lo) * 0.1
	if hi <= lo {
		hi = lo + 1
	}
	t0, t1 := points[0].Time, points[len(points)-1].Time
	span := t1.Sub(t0)
	x := func(t time.Time) float64 {
		if span <= 0 {
			return (left + w - right) / 2
		}
		return left + (w-left-right)*float64(t.Sub(t0))/float64(span)
	}
	y := func(v float64) float64 { return top + (h-top-bottom)*(1-(v-lo)/(hi-lo)) }
	title := fmt.Sprintf("%s on %s (%s): %s over time", j.Workload, j.Target, j.Round, MetricLabel(j.Metric))
	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="chart" data-chart="trend" data-verdict="%s" viewBox="0 0 %.0f %.0f" width="100%%" role="img" aria-label="%s">`,
		j.Verdict, w, h, html.EscapeString(title))
	fmt.Fprintf(&b, `<title>%s</title>`, html.EscapeString(title))
	for i := 0; i <= 4; i++ {
		v := lo + (hi-lo)*float64(i)/4
		fmt.Fprintf(&b, `<line class="grid" x1="%.0f" x2="%.0f" y1="%.1f" y2="%.1f"></line>`, left, w-right, y(v), y(v))
		fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.1f" text-anchor="end">%s</text>`, left-4, y(v)+4, html.EscapeString(FormatValue(j.Metric, v)))
	}
	fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.0f">%s</text>`, left, h-8, t0.Local().Format("2006-01-02"))
	fmt.Fprintf(&b, `<text class="axis" x="%.0f" y="%.0f" text-anchor="end">%s</text>`, w-right, h-8, t1.Local().Format("2006-01-02"))
	changeAt := -1
	if j.Since != nil {
		for i, p := range points {
			if p.RunID == j.Since.RunID {
				changeAt = i
			}
		}
	}
	if j.Baseline != 0 {
		end := t1
		if changeAt > 0 {
			end = points[changeAt-1].Time
		}
		x0, x1 := x(t0), x(end)
		if j.BaselineRuns > 0 && !j.BaselineSince.IsZero() {
			x0 = x(j.BaselineSince)
		}
		if x1-x0 < 4 {
			x1 = x0 + 4
		}
		fmt.Fprintf(&b, `<rect class="band" x="%.1f" y="%.1f" width="%.1f" height="%.1f"><title>noise band %s</title></rect>`,
			x0, y(j.Baseline*(1+j.Band)), x1-x0, math.Max(1, y(j.Baseline*(1-j.Band))-y(j.Baseline*(1+j.Band))), fmt.Sprintf("±%.1f%%", 100*j.Band))
		fmt.Fprintf(&b, `<line class="baseline" x1="%.1f" x2="%.1f" y1="%.1f" y2="%.1f"><title>baseline %s</title></line>`,
			x0, x1, y(j.Baseline), y(j.Baseline), html.EscapeString(FormatValue(j.Metric, j.Baseline)))
	}
	var pts []string
	for _, p := range points {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(p.Time), y(p.Value)))
	}
	fmt.Fprintf(&b, `<polyline class="history" points="%s" fill="none"></polyline>`, strings.Join(pts, " "))
	// A dot per run while they can be told apart; in a long history only
	// the runs since a change and the latest get one.
	dense := len(points) > maxTrendDots
	for i, p := range points {
		changed := changeAt >= 0 && i >= changeAt
		if dense && !changed && i != len(points)-1 {
			continue
		}
		class := "point"
		if changed {
			class = "point changed"
			if j.Improved {
				class += " better"
			}
		}
		fmt.Fprintf(&b, `<circle class="%s" cx="%.1f" cy="%.1f" r="2.5"><title>%s %s: %s</title></circle>`, class, x(p.Time), y(p.Value),
			html.EscapeString(p.RunID), p.Time.Local().Format("2006-01-02 15:04"), html.EscapeString(FormatValue(j.Metric, p.Value)))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}
