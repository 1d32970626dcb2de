package web

import (
	"context"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// storeQualification stores a class qualification as classes --measure
// does: the report's own results under a run of its ID.
func storeQualification(t *testing.T, st store.Store, rep *classcheck.Report) {
	t.Helper()
	ctx := context.Background()
	run := &result.Run{ID: rep.RunID, Suite: "class:" + rep.Class, Source: "storbench", Status: result.StatusComplete,
		Started: rep.Started, Finished: rep.Finished, Targets: []string{classcheck.TargetName(rep.Class)}}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	results := rep.Results()
	for i := range results {
		if err := st.AddResult(ctx, &results[i]); err != nil {
			t.Fatal(err)
		}
	}
}

// classesFixture holds three qualified classes (the app-fit check passed,
// warned, not run) and a class measured only by the imports' labels.
func classesFixture(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 28, 3, 0, 0, 0, time.UTC)
	for i, c := range []struct {
		class  string
		appFit *classcheck.Check
	}{
		{"longhorn", &classcheck.Check{Name: classcheck.CheckAppFit, Outcome: classcheck.Works, Took: 40 * time.Second,
			Reason: "pass: k8s:longhorn: locks work; 212 commits/s (WAL, FULL), p99 9.8 ms: fine for Home Assistant's recorder"}},
		{"netfs", &classcheck.Check{Name: classcheck.CheckAppFit, Outcome: classcheck.Works, Took: 50 * time.Second,
			Reason: "warn: k8s:netfs: file locks are not shared between nodes: a SQLite database opened from two nodes can be corrupted; one node at a time is safe"}},
		{"local-path", nil},
	} {
		rep := &classcheck.Report{RunID: "20261128-03000" + string(rune('0'+i)) + "-c1a5", Class: c.class, Profile: classcheck.Full,
			Started: start, Finished: start.Add(time.Minute), Checks: []classcheck.Check{
				{Name: classcheck.CheckProvisioning, Outcome: classcheck.Works, Took: 2 * time.Second},
				{Name: classcheck.CheckSnapshot, Outcome: classcheck.NotSupportedMeasured, Reason: "no snapshot class"},
			}}
		if c.appFit != nil {
			rep.Checks = append(rep.Checks, *c.appFit)
		} else {
			rep.Profile = classcheck.Quick
		}
		storeQualification(t, st, rep)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	return db
}

// The classes page has the SQLITE column classes prints: each class's
// app-fit answer, the risk in its title, - where it was not measured.
func TestClassesPage(t *testing.T) {
	ts := serve(t, Options{DB: classesFixture(t)})
	code, body := get(t, http.DefaultClient, ts.URL+"/classes")
	if code != http.StatusOK {
		t.Fatalf("%d: %s", code, body)
	}
	if !strings.Contains(body, "<th>SQLITE</th>") || !strings.Contains(body, `href="/classes" class="active"`) {
		t.Errorf("no SQLITE column or no active nav link:\n%s", body)
	}
	for _, tc := range []struct{ class, answer, title, checks string }{
		{"longhorn", "pass", "fine for Home Assistant", "2 of 3 work"},
		{"netfs", "warn", "file locks are not shared between nodes", "2 of 3 work"},
		{"local-path", "-", "", "1 of 2 work"},
	} {
		row := regexp.MustCompile(`(?s)<tr data-class="` + tc.class + `">.*?</tr>`).FindString(body)
		cell := regexp.MustCompile(`<td class="app-([^"]+)" data-app="SQLITE"( title="([^"]*)")?>([^<]*)</td>`).FindStringSubmatch(row)
		if cell == nil || cell[1] != tc.answer || cell[4] != tc.answer || !strings.Contains(cell[3], tc.title) || !strings.Contains(row, tc.checks) {
			t.Errorf("%s: want SQLITE %s (%q) and %q, got %q", tc.class, tc.answer, tc.title, tc.checks, row)
		}
	}

	empty := serve(t, Options{DB: filepath.Join(t.TempDir(), "none.db")})
	if code, body := get(t, http.DefaultClient, empty.URL+"/classes"); code != http.StatusOK || !strings.Contains(body, "storbench classes --measure") {
		t.Errorf("no database: %d %s", code, body)
	}
}

// Headless Chromium draws the classes page: no console message, nothing
// from elsewhere, the SQLITE column there.
func TestClassesPageInChromium(t *testing.T) {
	testenv.Chromium(t)
	ts := serve(t, Options{DB: classesFixture(t)})
	dom, stderr := testenv.Browse(t, ts.URL+"/classes", "--dump-dom")
	if msgs := testenv.ConsoleMessages(stderr); len(msgs) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(msgs, "\n"))
	}
	if remoteRef.MatchString(dom) {
		t.Error("the page refers to another site")
	}
	for _, want := range []string{"SQLITE", `data-class="netfs"`, "warn", "Storage classes"} {
		if !strings.Contains(dom, want) {
			t.Errorf("no %q in the page", want)
		}
	}
	shot := filepath.Join(artefacts(t, "dashboard"), "classes.png")
	testenv.Browse(t, ts.URL+"/classes", "--window-size=1200,900", "--hide-scrollbars", "--screenshot="+shot)
}
