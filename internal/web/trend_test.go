package web

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// storeHistory stores runs of one workload on target, one a day: IOPS at
// level for the first, then at level*after for the last changed.
func storeHistory(t *testing.T, db, target string, runs, changed int, after float64) {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	start := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	for i := range runs {
		at := start.AddDate(0, 0, i)
		run := &result.Run{ID: fmt.Sprintf("%s-%s", at.Format("20060102-150405"), strings.Trim(filepath.Base(target), "/")), Suite: "standard",
			Status: result.StatusComplete, Started: at, Finished: at.Add(time.Minute), Targets: []string{target}}
		if err := st.CreateRun(ctx, run); err != nil {
			t.Fatal(err)
		}
		iops := 10000 * (1 + 0.02*float64(i%3-1)) // ±2% noise
		if i >= runs-changed {
			iops *= after
		}
		r := &result.Result{RunID: run.ID, Target: target, Round: result.RoundIsolated, Repetition: 1, Workload: "rand-read-4k-qd32",
			Status: result.StatusComplete, Started: at, Finished: at.Add(30 * time.Second), Labels: map[string]string{"storage": "hdd"},
			Read: &result.Direction{IOPS: iops, BytesPerSec: iops * 4096, TotalIOs: int64(iops * 30), Runtime: 30 * time.Second}}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTrendPage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "results.db")
	storeHistory(t, db, "/mnt/nas-disk-2", 14, 4, 0.5)
	storeHistory(t, db, "/mnt/steady", 14, 0, 1)
	storeHistory(t, db, "/mnt/new", 2, 0, 1)
	ts := serve(t, Options{DB: db})
	c := ts.Client()
	for _, tc := range []struct {
		name, query string
		status      int
		has, hasNot []string
	}{
		{"the targets", "", 200, []string{`data-target="/mnt/nas-disk-2"`, `data-target="/mnt/steady"`, "Pick a target"}, []string{`data-chart="trend"`}},
		{"a regression", "?target=/mnt/nas-disk-2", 200,
			[]string{`data-verdict="regression"`, "rand-read-4k-qd32 on /mnt/nas-disk-2", `class="point changed"`, `class="band"`, "below its baseline"}, nil},
		{"steady", "?target=/mnt/steady&workload=rand-read-4k-qd32&round=isolated", 200,
			[]string{`data-verdict="ok"`, `class="band"`}, []string{"point changed"}},
		{"too little history", "?target=/mnt/new", 200, []string{"insufficient-history"}, nil},
		{"by label", "?target=/mnt/steady&label=storage%3Dhdd", 200, []string{`data-verdict="ok"`}, nil},
		{"no such target", "?target=/mnt/none", 200, []string{"no complete results match"}, nil},
		{"a bad label", "?target=/mnt/steady&label=hdd", 400, []string{"key=value"}, nil},
		{"a bad date", "?target=/mnt/steady&since=soon", 400, []string{"give a date"}, nil},
		{"since the change", "?target=/mnt/nas-disk-2&since=2026-03-11", 200, []string{"insufficient-history"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ts.URL + "/trend" + tc.query
			if strings.Contains(tc.query, "/mnt") {
				q, _ := url.ParseQuery(strings.TrimPrefix(tc.query, "?"))
				u = ts.URL + "/trend?" + q.Encode()
			}
			code, body := get(t, c, u)
			if code != tc.status {
				t.Fatalf("%s: %d, want %d\n%s", u, code, tc.status, body)
			}
			for _, h := range tc.has {
				if !strings.Contains(body, h) {
					t.Errorf("no %q in the page", h)
				}
			}
			for _, h := range tc.hasNot {
				if strings.Contains(body, h) {
					t.Errorf("%q in the page", h)
				}
			}
		})
	}
}
