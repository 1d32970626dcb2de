package store

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// latestRun stores a run started at start with one result per
// (target@host, workload, status) given as "target host workload status".
func latestRun(t *testing.T, s *SQLite, id string, start time.Time, rows ...[4]string) {
	t.Helper()
	ctx := context.Background()
	run := &result.Run{ID: id, Suite: "standard", Source: "storbench", Status: result.StatusComplete, Started: start}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		res := sample(id, r[2])
		res.Target = r[0]
		res.Labels = map[string]string{}
		result.LabelHostname.Set(res.Labels, r[1])
		res.Status = result.Status(r[3])
		if err := s.AddResult(ctx, res); err != nil {
			t.Fatal(err)
		}
	}
}

// keysOf lists "target host round workload run" per figure, sorted.
func keysOf(l *LatestFigures) []string {
	var out []string
	for _, f := range l.Figures {
		out = append(out, f.Target+" "+result.LabelHostname.Of(f.Labels)+" "+f.Round+" "+f.Workload+" "+f.RunID)
	}
	slices.Sort(out)
	return out
}

func TestLatest(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	empty, err := s.Latest(ctx, nil)
	if err != nil || len(empty.Figures) != 0 || len(empty.Runs) != 0 {
		t.Fatalf("empty database: %+v, %v", empty, err)
	}
	t0 := time.Date(2026, 11, 1, 3, 0, 0, 0, time.UTC)
	ok := string(result.StatusComplete)
	// Run IDs sort against their start times: order is by start time.
	latestRun(t, s, "c-oldest", t0,
		[4]string{"/mnt/a", "h1", "seq-read", ok}, [4]string{"/mnt/a", "h1", "seq-write", ok}, [4]string{"/mnt/a", "h2", "seq-read", ok})
	latestRun(t, s, "b-middle", t0.Add(time.Hour),
		[4]string{"/mnt/a", "h1", "seq-read", ok}, [4]string{"/mnt/a", "h1", "seq-read", ok}, // two repetitions
		[4]string{"/mnt/a", "h1", "seq-write", string(result.StatusFailed)})
	latestRun(t, s, "a-newest", t0.Add(2*time.Hour), [4]string{"/mnt/b", "h1", "seq-read", ok})
	want := []string{
		"/mnt/a h1 isolated seq-read b-middle", "/mnt/a h1 isolated seq-read b-middle",
		"/mnt/a h1 isolated seq-write c-oldest", // its newer result failed
		"/mnt/a h2 isolated seq-read c-oldest",  // the same path on another host
		"/mnt/b h1 isolated seq-read a-newest",
	}
	first, err := s.Latest(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(first); !slices.Equal(got, want) {
		t.Fatalf("latest:\n got %q\nwant %q", got, want)
	}
	var runs []string
	for _, r := range first.Runs {
		runs = append(runs, r.ID)
	}
	if !slices.Equal(runs, []string{"a-newest", "b-middle", "c-oldest"}) {
		t.Errorf("runs = %v, want newest first", runs)
	}

	// Building on the first answer reads what was stored since: a run
	// backfilled with an older time changes nothing, a newer one does.
	latestRun(t, s, "z-backfilled", t0.Add(-time.Hour), [4]string{"/mnt/b", "h1", "seq-read", ok})
	latestRun(t, s, "d-latest", t0.Add(3*time.Hour), [4]string{"/mnt/a", "h2", "seq-read", ok})
	want[3] = "/mnt/a h2 isolated seq-read d-latest"
	slices.Sort(want)
	second, err := s.Latest(ctx, first)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(second); !slices.Equal(got, want) {
		t.Fatalf("built on the first:\n got %q\nwant %q", got, want)
	}
	whole, err := s.Latest(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(whole); !slices.Equal(got, keysOf(second)) {
		t.Fatalf("read whole: %q, built on the first: %q", got, keysOf(second))
	}

	// Results deleted since an answer: the next call reads everything again.
	if _, err := s.db.DB.ExecContext(ctx, `DELETE FROM runs WHERE id = 'd-latest'`); err != nil {
		t.Fatal(err)
	}
	third, err := s.Latest(ctx, second)
	if err != nil {
		t.Fatal(err)
	}
	want = []string{"/mnt/a h1 isolated seq-read b-middle", "/mnt/a h1 isolated seq-read b-middle",
		"/mnt/a h1 isolated seq-write c-oldest", "/mnt/a h2 isolated seq-read c-oldest", "/mnt/b h1 isolated seq-read a-newest"}
	if got := keysOf(third); !slices.Equal(got, want) {
		t.Fatalf("after deleting the newest run:\n got %q\nwant %q", got, want)
	}
}

// Results stored before schema 3 have no result_figures row: Latest reads
// them from results.
func TestLatestWithoutFigureRows(t *testing.T) {
	ctx := context.Background()
	s, _ := open(t)
	latestRun(t, s, "a-run", time.Unix(1000, 0), [4]string{"/mnt/a", "h1", "seq-read", string(result.StatusComplete)})
	if _, err := s.db.DB.ExecContext(ctx, `DELETE FROM result_figures`); err != nil {
		t.Fatal(err)
	}
	l, err := s.Latest(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := keysOf(l); !slices.Equal(got, []string{"/mnt/a h1 isolated seq-read a-run"}) {
		t.Fatalf("latest = %q", got)
	}
	if v, ok := l.Figures[0].Metric(result.MetricIOPS); !ok || v != 1234.5 {
		t.Errorf("iops = %v, %v; want 1234.5 derived from the stored result", v, ok)
	}
}
