package store

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestRunFilter(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	day := func(d int) time.Time { return time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC) }
	runs := []struct {
		id, suite, target string
		status            result.Status
		started           time.Time
		runLabels         map[string]string
		resultLabels      map[string]string
		noResult          bool
	}{
		{"r1", "quick", "/mnt/a", result.StatusComplete, day(1), map[string]string{"site": "home"}, map[string]string{"storage": "ssd"}, false},
		{"r2", "standard", "/mnt/b", result.StatusComplete, day(2), nil, map[string]string{"storage": "hdd"}, false},
		{"r3", "quick", "/mnt/b", result.StatusFailed, day(3), map[string]string{"site": "lab"}, map[string]string{"storage": "hdd"}, false},
		{"r4", "quick", "/mnt/c", result.StatusRunning, day(4), map[string]string{"site": "home"}, nil, true},
	}
	for _, r := range runs {
		run := &result.Run{ID: r.id, Suite: r.suite, Status: r.status, Started: r.started, Targets: []string{r.target}, Labels: r.runLabels}
		if err := s.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		if r.noResult {
			continue
		}
		res := sample(r.id, "seq-read")
		res.Target, res.Labels = r.target, r.resultLabels
		if err := s.AddResult(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name string
		f    RunFilter
		want []string
	}{
		{"all, newest first", RunFilter{}, []string{"r4", "r3", "r2", "r1"}},
		{"limit", RunFilter{Limit: 2}, []string{"r4", "r3"}},
		{"second page", RunFilter{Limit: 2, Offset: 2}, []string{"r2", "r1"}},
		{"offset alone", RunFilter{Offset: 3}, []string{"r1"}},
		{"suite", RunFilter{Suite: "quick"}, []string{"r4", "r3", "r1"}},
		{"status", RunFilter{Status: result.StatusFailed}, []string{"r3"}},
		{"target of a result", RunFilter{Target: "/mnt/b"}, []string{"r3", "r2"}},
		{"target of a run with no result yet", RunFilter{Target: "/mnt/c"}, []string{"r4"}},
		{"run label", RunFilter{Labels: map[string]string{"site": "home"}}, []string{"r4", "r1"}},
		{"result label", RunFilter{Labels: map[string]string{"storage": "hdd"}}, []string{"r3", "r2"}},
		{"two labels", RunFilter{Labels: map[string]string{"storage": "hdd", "site": "lab"}}, []string{"r3"}},
		{"since", RunFilter{Since: day(3)}, []string{"r4", "r3"}},
		{"until", RunFilter{Until: day(2)}, []string{"r1"}},
		{"since and until", RunFilter{Since: day(2), Until: day(4)}, []string{"r3", "r2"}},
		{"nothing", RunFilter{Target: "/mnt/z"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Runs(ctx, tc.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, r := range got {
				ids = append(ids, r.ID)
			}
			if !slices.Equal(ids, tc.want) {
				t.Errorf("runs %v, want %v", ids, tc.want)
			}
		})
	}
	if _, err := s.Runs(ctx, RunFilter{Labels: map[string]string{`a"b`: "x"}}); err == nil {
		t.Error("a label key with a quote was accepted")
	}
}

// The dashboard's queries use the indexes of migration 5, not a scan of
// every result.
func TestRunFilterUsesIndexes(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	where, args, err := runWhere(RunFilter{Target: "/mnt/a", Labels: map[string]string{"storage": "ssd"}}, s.version)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := s.db.QueryContext(ctx, `EXPLAIN QUERY PLAN SELECT id FROM runs WHERE `+where+` ORDER BY started_ns DESC`, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	for _, want := range []string{"SEARCH result_figures USING COVERING INDEX result_figures_target (target=?)",
		"SEARCH result_labels USING PRIMARY KEY (key=? AND value=?)"} {
		if !slices.Contains(plan, want) {
			t.Errorf("the plan has no %q:\n%s", want, strings.Join(plan, "\n"))
		}
	}
}

// A database of schema 4 filters by label as it is (read-only, not
// migrated), and migration 5 indexes the labels of the results it holds.
func TestLabelFilterAcrossMigration5(t *testing.T) {
	ctx := context.Background()
	s, path := open(t)
	if err := s.CreateRun(ctx, &result.Run{ID: "old", Suite: "quick", Status: result.StatusComplete, Started: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResult(ctx, sample("old", "seq-read")); err != nil { // storage=ssd
		t.Fatal(err)
	}
	for _, q := range []string{"DROP TABLE result_labels", "DROP INDEX runs_status_started", "DROP INDEX runs_suite_started",
		"DROP INDEX result_figures_target", "DROP INDEX results_target", "PRAGMA user_version = 4"} {
		if _, err := s.db.ExecContext(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	want := func(st Store, stage string) {
		t.Helper()
		runs, err := st.Runs(ctx, RunFilter{Labels: map[string]string{"storage": "ssd"}})
		if err != nil || len(runs) != 1 {
			t.Errorf("%s: %d runs, %v; want the one", stage, len(runs), err)
		}
		none, err := st.Runs(ctx, RunFilter{Labels: map[string]string{"storage": "hdd"}})
		if err != nil || len(none) != 0 {
			t.Errorf("%s: %d runs for storage=hdd, %v", stage, len(none), err)
		}
	}
	ro, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want(ro, "schema 4, read-only")
	ro.Close()
	rw, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer rw.Close()
	if rw.version != len(migrations) {
		t.Fatalf("schema %d after opening, want %d", rw.version, len(migrations))
	}
	want(rw, "migrated")
}

func TestTargets(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	if got, err := s.Targets(ctx); err != nil || len(got) != 0 {
		t.Fatalf("an empty database: %v, %v", got, err)
	}
	if err := s.CreateRun(ctx, &result.Run{ID: "r", Suite: "quick", Status: result.StatusComplete, Started: time.Unix(100, 0)}); err != nil {
		t.Fatal(err)
	}
	for i, tg := range []string{"/mnt/a", "/mnt/b", "/mnt/a"} {
		r := sample("r", "seq-read")
		r.Target, r.Started = tg, time.Unix(int64(1000+i), 0)
		if err := s.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Targets(ctx)
	want := []TargetSummary{{"/mnt/a", 2, time.Unix(1002, 0)}, {"/mnt/b", 1, time.Unix(1001, 0)}}
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Targets() = %v, %v; want %v", got, err, want)
	}
}
