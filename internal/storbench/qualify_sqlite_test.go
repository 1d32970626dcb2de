package storbench_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// qualify --for sqlite on a directory: two processes of the real storbench
// probe it and commit to SQLite; the run is stored, judged, judged again
// from the store, and the directory is left as it was.
func TestQualifySQLite(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("builds storbench and runs its probe processes")
	}
	bin := storbench.StorbenchBinary(t)
	st := sqliteStore(t)
	dir := t.TempDir()
	ctx := context.Background()
	q, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForSQLite, Targets: []string{dir}, Repeat: 1,
		Binary: bin, AppDuration: 500 * time.Millisecond, Labels: map[string]string{"storage": "tmp"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", q.Verdict.Status, q.Verdict.Summary)
	if q.Measured == "" || !strings.Contains(q.Verdict.Summary, dir+": locks work; ") || q.Verdict.Status == analysis.Fail {
		t.Errorf("verdict %s %q (run %q)", q.Verdict.Status, q.Verdict.Summary, q.Measured)
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left in the target: %v %v", entries, err)
	}
	results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{q.Measured}})
	if err != nil {
		t.Fatal(err)
	}
	workloads := map[string]bool{}
	for _, r := range results {
		workloads[r.Workload] = r.Round == result.RoundApp && r.Labels["storage"] == "tmp"
	}
	for _, w := range []string{"appfit:fcntl-lock", "appfit:rename-atomic", "sqlite:wal-full", "sqlite:delete-normal", "sqlite:wal-full-2clients"} {
		if !workloads[w] {
			t.Errorf("no stored %s result of round app labelled storage=tmp: %v", w, workloads)
		}
	}
	again, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForSQLite, RunIDs: []string{q.Measured}, Repeat: 1})
	if err != nil || again.Verdict.Summary != q.Verdict.Summary {
		t.Errorf("judged from the store: %v %+v", err, again)
	}
	var reqErr *storbench.RequestError
	if _, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForSQLite, Targets: []string{dir + "/none"}, Repeat: 1, Binary: bin}); !errors.As(err, &reqErr) {
		t.Errorf("a missing directory: %v, want a request error", err)
	}
}
