package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// qualify --for sqlite on a directory of a host over SSH (a real sshd):
// storbench's own binary is copied there, its two probe processes and the
// SQLite clients run on the host, the run is stored and judged, and
// neither the directory nor the host keeps anything (the binary's
// directory is gone).
func TestQualifySQLiteOverSSH(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("builds storbench and runs its probe processes over SSH")
	}
	bin := StorbenchBinary(t)
	srv := sshFleet(t, 1, true)[0]
	dir := t.TempDir()
	before, _ := filepath.Glob("/tmp/storbench-appfit.*")
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	target := sshURL(t, srv, dir)
	q, err := Qualify(context.Background(), st, QualifyRequest{For: analysis.ForSQLite, Targets: []string{target}, Repeat: 1,
		Binary: bin, AppDuration: 500 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s: %s", q.Verdict.Status, q.Verdict.Summary)
	if q.Measured == "" || !strings.Contains(q.Verdict.Summary, target+": locks work; ") || q.Verdict.Status == analysis.Fail {
		t.Errorf("verdict %s %q (run %q)", q.Verdict.Status, q.Verdict.Summary, q.Measured)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{q.Measured}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, r := range results {
		got[r.Workload] = r.Target == target
	}
	for _, w := range []string{"appfit:fcntl-lock", "sqlite:wal-full", "sqlite:wal-full-2clients"} {
		if !got[w] {
			t.Errorf("no stored %s result for %s: %v", w, target, got)
		}
	}
	if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
		t.Errorf("left in the target: %v %v", entries, err)
	}
	if after, _ := filepath.Glob("/tmp/storbench-appfit.*"); len(after) != len(before) {
		t.Errorf("the probe's binary directory stayed on the host: %v (before: %v)", after, before)
	}
	var reqErr *RequestError
	if _, err := Qualify(context.Background(), st, QualifyRequest{For: analysis.ForSQLite, Targets: []string{target + "/none"}, Repeat: 1, Binary: bin}); !errors.As(err, &reqErr) {
		t.Errorf("a missing directory on the host: %v, want a request error", err)
	}
}

// StorbenchBinary builds storbench's command for a test that runs its
// hidden probe, removed at the test's end (the external tests use it too).
func StorbenchBinary(t *testing.T) string {
	t.Helper()
	var bins testenv.Binaries
	t.Cleanup(func() {
		if err := bins.Remove(); err != nil {
			t.Error(err)
		}
	})
	return bins.Build(t, "github.com/storbench/storbench/cmd/storbench")
}
