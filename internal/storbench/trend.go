package storbench

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
)

// TrendRequest selects the histories Trend judges. Zero values mean no
// restriction.
type TrendRequest struct {
	Target   string
	Workload string
	Round    string
	// Labels: every key=value must be among a result's labels.
	Labels map[string]string
	// Since keeps results measured at or after it: older runs are neither
	// judged nor part of any baseline.
	Since time.Time
	// Metric is the figure judged (one of result.Metrics); empty judges
	// each workload by its primary metric, as compare does: sync p99 for
	// workloads that sync, bandwidth for large blocks, IOPS otherwise.
	Metric string
	// Options tunes the judgement; the zero value is trend's defaults.
	Options trend.Options
}

// TrendReport is one judgement per series (target × workload × round),
// worst first.
type TrendReport struct {
	// Verdict is the worst verdict of all series.
	Verdict trend.Verdict `json:"verdict"`
	Series  []TrendSeries `json:"series"`
}

// TrendSeries is a judgement with the history it judged (one point per
// run: the median of its repetitions), for charts.
type TrendSeries struct {
	trend.Assessment
	Points []trend.Point `json:"-"`
}

// Count returns how many series got verdict v.
func (r *TrendReport) Count(v trend.Verdict) int {
	n := 0
	for _, s := range r.Series {
		if s.Verdict == v {
			n++
		}
	}
	return n
}

// Trend judges every selected target × workload × round against its own
// history of complete results, ordered by the time they were measured.
// Repetitions of one run count as one point (their median). A series with
// too little history is judged "insufficient-history", not an error; a
// filter that selects no result at all is a RequestError (an empty
// database with no filter is an empty report).
func Trend(ctx context.Context, st store.Reader, req TrendRequest) (*TrendReport, error) {
	if req.Metric != "" && result.MetricIndex(req.Metric) < 0 {
		return nil, badRequest("%s %q: choose one of %s", FieldMetric, req.Metric, strings.Join(result.Metrics, ", "))
	}
	hist, err := st.History(ctx, store.HistoryFilter{Target: req.Target, Workload: req.Workload, Round: req.Round,
		Labels: req.Labels, Since: req.Since, Status: result.StatusComplete})
	if err != nil {
		return nil, err
	}
	if len(hist) == 0 {
		if filters := describeTrend(req); filters != "" {
			return nil, badRequest("no complete results match %s (see: storbench runs)", filters)
		}
		return &TrendReport{Verdict: trend.OK}, nil // an empty database: nothing to judge yet
	}
	report := &TrendReport{Verdict: trend.OK}
	for _, h := range groupHistory(hist) {
		metric := req.Metric
		if metric == "" {
			metric = h.primaryMetric()
		}
		s := trend.Series{Target: h.key.target, Workload: h.key.workload, Round: h.key.round, Metric: metric,
			Unit: result.MetricUnit(metric), Better: trend.LowerIsBetter, Points: h.points(metric)}
		if result.HigherIsBetter(metric) {
			s.Better = trend.HigherIsBetter
		}
		j := trend.Assess(s, req.Options)
		report.Series = append(report.Series, TrendSeries{Assessment: j, Points: s.Points})
		if j.Verdict.Severity() > report.Verdict.Severity() {
			report.Verdict = j.Verdict
		}
	}
	slices.SortStableFunc(report.Series, func(a, b TrendSeries) int { return trend.Compare(a.Assessment, b.Assessment) })
	return report, nil
}

type seriesKey struct{ target, workload, round string }

// runFigures is one run's results of one series: its repetitions.
type runFigures struct {
	runID    string
	measured time.Time
	figures  []*result.Figures
}

type history struct {
	key  seriesKey
	runs []*runFigures
}

// groupHistory splits figures ordered by measured time into series, each
// with its runs in that order. A contention round's roles (alone, loaded,
// noise) are separate series.
func groupHistory(hist []store.MeasuredFigures) []*history {
	var order []*history
	byKey := map[seriesKey]*history{}
	byRun := map[seriesKey]map[string]*runFigures{}
	for i := range hist {
		m := &hist[i]
		k := seriesKey{target: m.Target, workload: m.Workload, round: m.Round}
		if role := result.LabelContention.Of(m.Labels); role != "" {
			k.round += ":" + role
		}
		h := byKey[k]
		if h == nil {
			h = &history{key: k}
			byKey[k], byRun[k] = h, map[string]*runFigures{}
			order = append(order, h)
		}
		r := byRun[k][m.RunID]
		if r == nil {
			r = &runFigures{runID: m.RunID, measured: m.Measured}
			byRun[k][m.RunID] = r
			h.runs = append(h.runs, r)
		}
		r.figures = append(r.figures, &m.Figures)
	}
	return order
}

// values returns the run's values of metric, one per repetition holding it.
func (r *runFigures) values(metric string) []float64 {
	var vs []float64
	for _, f := range r.figures {
		if v, ok := f.Metric(metric); ok {
			vs = append(vs, v)
		}
	}
	return vs
}

// points is the series of metric: one point per run holding it, the
// median of its repetitions.
func (h *history) points(metric string) []trend.Point {
	var pts []trend.Point
	for _, r := range h.runs {
		if vs := r.values(metric); len(vs) > 0 {
			pts = append(pts, trend.Point{Time: r.measured, RunID: r.runID, Value: analysis.Summarize(vs).Median})
		}
	}
	return pts
}

// primaryMetric is analysis.PrimaryMetricOf the series' median IOPS and
// bandwidth.
func (h *history) primaryMetric() string {
	var iops, bw []float64
	synced := false
	for _, r := range h.runs {
		iops = append(iops, r.values(result.MetricIOPS)...)
		bw = append(bw, r.values(result.MetricBW)...)
		synced = synced || len(r.values(result.MetricSyncP99)) > 0
	}
	return analysis.PrimaryMetricOf(analysis.Summarize(iops).Median, analysis.Summarize(bw).Median, synced)
}

func describeTrend(req TrendRequest) string {
	var parts []string
	for _, c := range []struct{ flag, val string }{{"--target", req.Target}, {"--workload", req.Workload}, {"--round", req.Round}} {
		if c.val != "" {
			parts = append(parts, c.flag+" "+c.val)
		}
	}
	keys := make([]string, 0, len(req.Labels))
	for k := range req.Labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("--label %s=%s", k, req.Labels[k]))
	}
	if !req.Since.IsZero() {
		parts = append(parts, "--since "+req.Since.UTC().Format(time.RFC3339))
	}
	return strings.Join(parts, " ")
}

// ParseSince reads a --since value: a span back from now ("90d", "12w",
// "36h", any Go duration), a date ("2026-03-02", midnight in loc) or an
// RFC 3339 time. A malformed value is a RequestError naming Since.
func ParseSince(s string, now time.Time, loc *time.Location) (time.Time, error) {
	v := strings.TrimSpace(s)
	bad := badRequest("%s %q: give a span back from now (90d, 12w, 36h), a date (2026-03-02) or an RFC 3339 time", FieldSince, s)
	if v == "" {
		return time.Time{}, bad
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	if t, err := time.ParseInLocation(time.DateOnly, v, loc); err == nil {
		return t, nil
	}
	if n, unit := v[:len(v)-1], v[len(v)-1]; unit == 'd' || unit == 'w' {
		k, err := strconv.Atoi(n)
		if err != nil || k < 0 || k > 100*366 {
			return time.Time{}, bad
		}
		if unit == 'w' {
			k *= 7
		}
		return now.AddDate(0, 0, -k), nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < 0 {
		return time.Time{}, bad
	}
	return now.Add(-d), nil
}
