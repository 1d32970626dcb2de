package render

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

//go:embed dashboard_classes.html.tmpl
var dashboardClassesTemplate string

// dashboardClasses is the dashboard's templates with the classes page.
var dashboardClasses = template.Must(template.Must(dashboard.Clone()).Parse(dashboardClassesTemplate))

// DashboardClasses is the classes page: each StorageClass the database
// holds answers for, with its app-profile columns as `storbench classes`
// prints them (SQLITE).
type DashboardClasses struct {
	DashboardPage
	// AppProfiles are the app-profile columns' heads, upper case.
	AppProfiles []string
	Classes     []DashboardClass
}

// DashboardClass is one class's row.
type DashboardClass struct {
	Name string
	// RunID, When and Profile are its newest qualification's ("" when
	// it was never qualified).
	RunID   string
	When    time.Time
	Profile string
	// Checks counts the qualification's checks that work: "7 of 9 work".
	Checks string
	// Apps are its answers per app profile, in AppProfiles order.
	Apps []DashboardAppAnswer
	// Performance is one line per measured workload; Measure the command
	// that measures it when there is none.
	Performance []string
	Measure     string
}

// DashboardAppAnswer is a class's answer for one app profile: pass, warn,
// fail, or - when not measured; Reason is the app-fit check's summary.
type DashboardAppAnswer struct {
	Profile, Answer, Reason string
}

// NewDashboardClasses makes the classes page's rows from the classes.
func NewDashboardClasses(page DashboardPage, classes []analysis.Class) *DashboardClasses {
	v := &DashboardClasses{DashboardPage: page}
	for _, p := range analysis.AppProfiles {
		v.AppProfiles = append(v.AppProfiles, strings.ToUpper(p))
	}
	for _, c := range classes {
		row := DashboardClass{Name: c.Name, Checks: "-", Measure: c.Measure}
		if q := c.Qualification; q != nil {
			row.RunID, row.When, row.Profile = q.RunID, q.When, q.Profile
			works := 0
			for _, ch := range q.Checks {
				if ch.Outcome == "works" {
					works++
				}
			}
			row.Checks = fmt.Sprintf("%d of %d work", works, len(q.Checks))
		}
		for _, p := range analysis.AppProfiles {
			a := DashboardAppAnswer{Profile: strings.ToUpper(p), Answer: analysis.ClassAppAnswer(c.Qualification, p)}
			if c.Qualification != nil && a.Answer != "-" {
				if ch := c.Qualification.Check("app-fit"); ch != nil {
					a.Reason = ch.Reason
				}
			}
			row.Apps = append(row.Apps, a)
		}
		for _, f := range c.Measured {
			row.Performance = append(row.Performance, fmt.Sprintf("%s: %s IOPS, %s, p99 %s (median of %d)", f.Workload,
				units.IOPS(f.IOPS), units.MBps(f.BytesPerSec), units.Latency(f.LatencyP99), f.Results))
		}
		v.Classes = append(v.Classes, row)
	}
	return v
}

// DashboardClassesHTML writes the classes page.
func DashboardClassesHTML(w io.Writer, v *DashboardClasses) error {
	var b bytes.Buffer
	if err := dashboardClasses.ExecuteTemplate(&b, "classes", v); err != nil {
		return fmt.Errorf("rendering the classes page: %w", err)
	}
	_, err := w.Write(b.Bytes())
	return err
}
