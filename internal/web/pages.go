package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

// pageSize is how many runs the runs list shows at once.
const pageSize = 50

func (s *Server) routes() {
	s.mux.HandleFunc("GET /{$}", s.runs)
	s.mux.HandleFunc("GET /runs/{id}", s.run)
	s.mux.HandleFunc("GET /runs/{id}/status.json", s.runStatus)
	s.mux.HandleFunc("GET /compare", s.compare)
	s.mux.HandleFunc("GET /trend", s.trend)
	s.mux.HandleFunc("GET /classes", s.classes)
	s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	s.mux.HandleFunc("GET /login", s.login)
	s.mux.HandleFunc("POST /login", s.login)
	s.mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "ok\n") })
}

func (s *Server) page(title, nav string) render.DashboardPage {
	return render.DashboardPage{Title: title, Nav: nav, Database: s.opts.DB}
}

// html renders a page whole before anything is sent, so a failure is a
// plain 500 rather than half a page.
func (s *Server) html(w http.ResponseWriter, status int, draw func(io.Writer) error) {
	var b bytes.Buffer
	if err := draw(&b); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// problem answers with a page that says only what went wrong.
func (s *Server) problem(w http.ResponseWriter, status int, title, nav, msg string) {
	p := s.page(title, nav)
	p.Problem = msg
	s.html(w, status, func(b io.Writer) error { return render.DashboardProblemHTML(b, &p) })
}

// failure maps an error from the library to a status: a bad request or
// an unknown run is the user's to fix, a database not there yet is 503.
func failure(err error) int {
	var req *storbench.RequestError
	switch {
	case errors.As(err, &req):
		return http.StatusBadRequest
	case errors.Is(err, errNoDatabase):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

var errNoDatabase = errors.New("no database yet")

// reader opens the database or says why it cannot.
func (s *Server) reader(r *http.Request) (storeReader, error) {
	st, err := s.db.get(r.Context())
	if err != nil {
		return nil, fmt.Errorf("%w: %s", errNoDatabase, notYet(s.opts.DB, err))
	}
	return st, nil
}

// runsFilter reads the runs list's query into a request and back into
// what the form shows.
func runsFilter(q url.Values) (storbench.RunsRequest, render.DashboardFilter, error) {
	f := render.DashboardFilter{Target: q.Get("target"), Label: q.Get("label"), Suite: q.Get("suite"),
		Status: q.Get("status"), Since: q.Get("since"), Until: q.Get("until")}
	req := storbench.RunsRequest{Limit: pageSize + 1, Target: strings.TrimSpace(f.Target), Suite: strings.TrimSpace(f.Suite),
		Status: result.Status(f.Status)}
	if off := q.Get("offset"); off != "" {
		n, err := strconv.Atoi(off)
		if err != nil || n < 0 {
			return req, f, fmt.Errorf("offset %q: give a whole number of runs to skip", off)
		}
		req.Offset = n
	}
	var err error
	if req.Labels, err = parseLabels(f.Label); err != nil {
		return req, f, err
	}
	if req.Since, err = day(f.Since, "since", false); err != nil {
		return req, f, err
	}
	req.Until, err = day(f.Until, "until", true)
	return req, f, err
}

// parseLabels reads "k=v" pairs separated by commas or spaces; none is
// nil.
func parseLabels(s string) (map[string]string, error) {
	var out map[string]string
	for _, pair := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		k, v, ok := strings.Cut(pair, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("label %q: write it as key=value (several: a=1,b=2)", pair)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[k] = v
	}
	return out, nil
}

// day reads a date (2026-03-02, the whole day) or an RFC 3339 time; end
// means the day's end, so "until 2026-03-02" keeps that day.
func day(s, name string, end bool) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if t, err := time.ParseInLocation("2006-01-02", s, time.Local); err == nil {
		if end {
			t = t.AddDate(0, 0, 1)
		}
		return t, nil
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%s %q: give a date (2026-03-02) or an RFC 3339 time", name, s)
	}
	return t, nil
}

func (s *Server) runs(w http.ResponseWriter, r *http.Request) {
	v := &render.DashboardRuns{DashboardPage: s.page("Runs", "runs")}
	req, filter, err := runsFilter(r.URL.Query())
	v.Filter, v.First = filter, req.Offset+1
	status := http.StatusOK
	var runs []result.Run
	if err == nil {
		var st storeReader
		if st, err = s.reader(r); err == nil {
			runs, err = storbench.Runs(r.Context(), st, req)
		}
	} else {
		err = &storbench.RequestError{Err: err}
	}
	if err != nil {
		v.Problem, status = err.Error(), failure(err)
		if errors.Is(err, errNoDatabase) {
			status = http.StatusOK // an empty dashboard, not a broken one
		}
	}
	if len(runs) > pageSize {
		runs = runs[:pageSize]
		v.NextURL = pageURL(r.URL.Query(), req.Offset+pageSize)
	}
	if req.Offset > 0 {
		v.PrevURL = pageURL(r.URL.Query(), max(req.Offset-pageSize, 0))
	}
	v.Runs = runs
	s.html(w, status, func(b io.Writer) error { return render.DashboardRunsHTML(b, v) })
}

func pageURL(q url.Values, offset int) string {
	q = maps(q)
	q.Del("offset")
	if offset > 0 {
		q.Set("offset", strconv.Itoa(offset))
	}
	if len(q) == 0 {
		return "/"
	}
	return "/?" + q.Encode()
}

func maps(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		if len(v) > 0 && v[0] != "" {
			out[k] = append([]string(nil), v...)
		}
	}
	return out
}

func (s *Server) run(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	st, err := s.reader(r)
	if err != nil {
		s.problem(w, failure(err), "Run "+id, "runs", err.Error())
		return
	}
	detail, err := storbench.Show(r.Context(), st, storbench.ShowRequest{RunID: id})
	if err != nil {
		status := failure(err)
		if status == http.StatusBadRequest {
			status = http.StatusNotFound
		}
		s.problem(w, status, "Run "+id, "runs", err.Error())
		return
	}
	v := &render.DashboardRun{DashboardPage: s.page("Run "+detail.Run.ID, "runs"), Run: detail.Run,
		Live: detail.Run.Status == result.StatusRunning, StatusURL: "/runs/" + url.PathEscape(detail.Run.ID) + "/status.json",
		Timelines: render.Timelines(detail.Results)}
	var text bytes.Buffer
	if err := errors.Join(render.RunDetail(&text, detail.Run, detail.Results, detail.Contention), render.SweepSection(&text, detail.Sweeps)); err != nil {
		s.problem(w, http.StatusInternalServerError, v.Title, "runs", err.Error())
		return
	}
	v.Show = text.String()
	rep, err := storbench.Report(r.Context(), st, storbench.ReportRequest{CompareRequest: storbench.CompareRequest{RunIDs: []string{detail.Run.ID}}})
	var req *storbench.RequestError
	switch {
	case errors.Is(err, analysis.ErrNoResults):
		v.ReportNote = "No completed result yet: the comparison, charts and verdicts appear with the first."
	case errors.As(err, &req):
		v.ReportNote = "No report: " + err.Error()
	case err != nil:
		s.problem(w, http.StatusInternalServerError, v.Title, "runs", err.Error())
		return
	default:
		v.Report, err = render.NewReportFragment(&render.Report{View: rep.View, Runs: rep.Runs, Verdicts: rep.Verdicts, Environment: true})
		if err != nil {
			s.problem(w, http.StatusInternalServerError, v.Title, "runs", err.Error())
			return
		}
	}
	s.html(w, http.StatusOK, func(b io.Writer) error { return render.DashboardRunHTML(b, v) })
}

// RunStatus is what a page following a run polls.
type RunStatus struct {
	ID       string        `json:"id"`
	Status   result.Status `json:"status"`
	Results  int           `json:"results"`
	Finished time.Time     `json:"finished,omitzero"`
}

func (s *Server) runStatus(w http.ResponseWriter, r *http.Request) {
	st, err := s.reader(r)
	var detail *storbench.RunDetail
	if err == nil {
		detail, err = storbench.Show(r.Context(), st, storbench.ShowRequest{RunID: r.PathValue("id")})
	}
	if err != nil {
		status := failure(err)
		if status == http.StatusBadRequest {
			status = http.StatusNotFound
		}
		http.Error(w, err.Error(), status)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(RunStatus{ID: detail.Run.ID, Status: detail.Run.Status, Results: len(detail.Results), Finished: detail.Run.Finished})
}

func (s *Server) compare(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	v := &render.DashboardCompare{DashboardPage: s.page("Compare", "compare"),
		GroupBy: strings.TrimSpace(q.Get("group_by")), Baseline: strings.TrimSpace(q.Get("baseline")), Round: q.Get("round")}
	for _, id := range append(q["run"], strings.Fields(q.Get("runs"))...) {
		if id = strings.TrimSpace(id); id != "" {
			v.RunIDs = append(v.RunIDs, id)
		}
	}
	status := http.StatusOK
	if len(v.RunIDs) > 0 {
		if err := s.comparison(r, v); err != nil {
			v.Problem, status = err.Error(), failure(err)
			if errors.Is(err, analysis.ErrNoResults) {
				status = http.StatusOK
			}
		}
	}
	s.html(w, status, func(b io.Writer) error { return render.DashboardCompareHTML(b, v) })
}

func (s *Server) comparison(r *http.Request, v *render.DashboardCompare) error {
	st, err := s.reader(r)
	if err != nil {
		return err
	}
	cmp, err := storbench.Compare(r.Context(), st, storbench.CompareRequest{RunIDs: v.RunIDs, GroupBy: v.GroupBy, Baseline: v.Baseline, Round: v.Round})
	if err != nil {
		return err
	}
	v.Report, err = render.NewReportFragment(&render.Report{View: cmp.View, Runs: cmp.Runs})
	return err
}
