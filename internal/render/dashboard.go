package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// The dashboard (storbench serve) is server-rendered HTML: each page is
// whole without JavaScript. Its comparisons and charts are the HTML
// report's own (ReportHTML), embedded as fragments, so the report file and
// the dashboard always draw the same thing.

//go:embed dashboard.html.tmpl
var dashboardTemplates string

var dashboard = template.Must(template.New("dashboard").Funcs(template.FuncMap{
	"when": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"took": func(r result.Run) string {
		if r.Finished.IsZero() {
			return "-"
		}
		return r.Finished.Sub(r.Started).Round(time.Second).String()
	},
	"labels": userLabels,
	"join":   strings.Join,
	"list":   func(s ...string) []string { return s },
	"add": func(a ...int) int {
		n := 0
		for _, v := range a {
			n += v
		}
		return n
	},
}).Parse(dashboardTemplates))

// DashboardPage is what every dashboard page shows around its content.
type DashboardPage struct {
	Title string
	// Nav is the active section: runs, compare, trend.
	Nav string
	// Database is the file the dashboard reads.
	Database string
	// Problem is shown instead of the content: a database not there yet,
	// a request that cannot be answered.
	Problem string
}

// ReportFragment is an HTML report cut for embedding in a dashboard page:
// its stylesheet and its body.
type ReportFragment struct {
	Style template.CSS
	Body  template.HTML
}

var (
	styleRe = regexp.MustCompile(`(?s)<style>(.*?)</style>`)
	bodyRe  = regexp.MustCompile(`(?s)<body>(.*)</body>`)
)

// NewReportFragment renders r as ReportHTML does and keeps its style and
// body.
func NewReportFragment(r *Report) (*ReportFragment, error) {
	var b bytes.Buffer
	if err := ReportHTML(&b, r); err != nil {
		return nil, err
	}
	style, body := styleRe.FindSubmatch(b.Bytes()), bodyRe.FindSubmatch(b.Bytes())
	if body == nil {
		return nil, fmt.Errorf("the HTML report has no body to embed")
	}
	f := &ReportFragment{Body: template.HTML(body[1])}
	if style != nil {
		f.Style = template.CSS(style[1])
	}
	return f, nil
}

// DashboardRuns is the runs list: its filter, one page of runs, and links
// to the pages beside it ("" when there is none).
type DashboardRuns struct {
	DashboardPage
	Filter           DashboardFilter
	Runs             []result.Run
	PrevURL, NextURL string
	// First is the position of the first run shown, from 1.
	First int
}

// DashboardFilter is the runs list's filter as the user typed it.
type DashboardFilter struct {
	Target, Label, Suite, Status, Since, Until string
}

// DashboardRun is one run: what show prints, telemetry timelines, and the
// report on it (nil while no result is complete: ReportNote says why).
type DashboardRun struct {
	DashboardPage
	Run *result.Run
	// Show is the show command's text: header, results, limits, checks.
	Show string
	// Live is set while the run is running: the page follows it.
	Live bool
	// StatusURL answers the run's status and result count as JSON.
	StatusURL  string
	Timelines  []Timeline
	Report     *ReportFragment
	ReportNote string
}

// DashboardCompare is the compare page: the form and the comparison.
type DashboardCompare struct {
	DashboardPage
	RunIDs                   []string
	GroupBy, Baseline, Round string
	Report                   *ReportFragment
}

// DashboardLogin asks for the token.
type DashboardLogin struct {
	DashboardPage
	Next string
}

// DashboardRunsHTML writes the runs list page.
func DashboardRunsHTML(w io.Writer, v *DashboardRuns) error { return dashboardPage(w, "runs", v) }

// DashboardRunHTML writes a run's page.
func DashboardRunHTML(w io.Writer, v *DashboardRun) error { return dashboardPage(w, "run", v) }

// DashboardCompareHTML writes the compare page.
func DashboardCompareHTML(w io.Writer, v *DashboardCompare) error {
	return dashboardPage(w, "compare", v)
}

// DashboardLoginHTML writes the page asking for the token.
func DashboardLoginHTML(w io.Writer, v *DashboardLogin) error { return dashboardPage(w, "login", v) }

// DashboardProblemHTML writes a page that only says what is wrong.
func DashboardProblemHTML(w io.Writer, v *DashboardPage) error { return dashboardPage(w, "problem", v) }

// dashboardPage renders the page named into a buffer first, so a
// template error never leaves half a page behind a 200.
func dashboardPage(w io.Writer, name string, v any) error {
	var b bytes.Buffer
	if err := dashboard.ExecuteTemplate(&b, name, v); err != nil {
		return fmt.Errorf("rendering the %s page: %w", name, err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
