package web

import (
	"errors"
	"io"
	"net/http"
	"strings"

	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/trend"
)

// charted is how many series the trend page draws when it judges more:
// the worst ones.
const charted = 12

func (s *Server) trend(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := &render.DashboardTrend{DashboardPage: s.page("Trend", "trend"), Filter: render.DashboardTrendFilter{
		Target: q.Get("target"), Workload: q.Get("workload"), Round: q.Get("round"), Label: q.Get("label"), Since: q.Get("since")}}
	status := http.StatusOK
	if err := s.judge(r, v); err != nil {
		v.Problem, status = err.Error(), failure(err)
		var req *storbench.RequestError
		if errors.As(err, &req) && strings.HasPrefix(err.Error(), "no complete results match") {
			status = http.StatusOK // an empty history, not a bad request
		}
		if errors.Is(err, errNoDatabase) {
			status = http.StatusOK
		}
	}
	s.html(w, status, func(b io.Writer) error { return render.DashboardTrendHTML(b, v) })
}

func (s *Server) judge(r *http.Request, v *render.DashboardTrend) error {
	labels, err := parseLabels(v.Filter.Label)
	if err != nil {
		return &storbench.RequestError{Err: err}
	}
	since, err := day(v.Filter.Since, "since", false)
	if err != nil {
		return &storbench.RequestError{Err: err}
	}
	st, err := s.reader(r)
	if err != nil {
		return err
	}
	if strings.TrimSpace(v.Filter.Target) == "" {
		// Every history at once (or one workload on every target) is slow
		// on a large database and too much to read: list the targets to
		// pick from.
		targets, err := st.Targets(r.Context())
		for _, t := range targets {
			v.Targets = append(v.Targets, render.DashboardTarget{Target: t.Target, Results: t.Results, Last: t.Last})
		}
		return err
	}
	rep, err := storbench.Trend(r.Context(), st, storbench.TrendRequest{Target: strings.TrimSpace(v.Filter.Target),
		Workload: strings.TrimSpace(v.Filter.Workload), Round: v.Filter.Round, Labels: labels, Since: since})
	if err != nil {
		return err
	}
	v.Verdict, v.Charted = rep.Verdict, min(len(rep.Series), charted)
	if len(rep.Series) <= 2*charted {
		v.Charted = len(rep.Series)
	}
	for _, verdict := range []trend.Verdict{trend.Regression, trend.Warning, trend.OK, trend.InsufficientHistory} {
		if n := rep.Count(verdict); n > 0 {
			v.Counts = append(v.Counts, render.VerdictCount{Verdict: verdict, N: n})
		}
	}
	for i, ser := range rep.Series {
		v.Series = append(v.Series, render.NewTrendSeries(ser.Assessment, ser.Points, i < v.Charted))
	}
	return nil
}
