package app

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/result"
)

// fio exits non-zero but reports every job, one of them with error 0:
// exitall_on_error stopped "good" after a few milliseconds when "bad"
// failed. Its figures are kept, but it is not labelled complete.
func TestFailedFioRunIsNeverLabelledComplete(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	job := writeFile(t, dir, "mixed.fio", `[global]
size=8m
runtime=3
time_based
direct=1
ioengine=psync
exitall_on_error=1

[good]
rw=randread
bs=4k
filename=good.dat

[bad]
rw=read
bs=3
filename=bad.dat
`)
	target := t.TempDir()
	inv := storbench(t, db, "run", "--fio-job", job, "--target", target)
	if inv.code != cli.ExitFailed {
		t.Fatalf("exit %d, want 1: %s", inv.code, inv.stderr)
	}
	runs := runsJSON(t, db)
	s := showJSON(t, db, runs[0].ID)
	if runs[0].Status != result.StatusFailed || len(s.Results) != 2 {
		t.Fatalf("run %s, results %+v", runs[0].Status, s.Results)
	}
	for _, r := range s.Results {
		if r.Status != result.StatusFailed || r.Error == "" {
			t.Errorf("%s: status %s, error %q; want failed with the reason", r.Workload, r.Status, r.Error)
		}
	}
	table := storbench(t, db, "show", runs[0].ID)
	for _, w := range []string{"FAILED good", "FAILED bad"} {
		if !strings.Contains(table.stdout, w) {
			t.Errorf("show lacks %q:\n%s", w, table.stdout)
		}
	}
	assertEmptyDir(t, target)
}

// Sizes and durations that overflow say "too large", on flags too.
func TestOverflowingFlagsSayTooLarge(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	for _, args := range [][]string{
		{"cleanup", "--k8s", "--timeout", "9999999999h"},
		{"cleanup", "--k8s", "--older-than", "3000000000000s"},
		{"run", "--target", "k8s:x", "--size", "99999999999999999999"},
		{"qualify", "--for", "general", "--target", t.TempDir(), "--device-size", "9999999TiB"},
	} {
		inv := storbench(t, db, args...)
		if inv.code != cli.ExitUsage || !strings.Contains(inv.stderr, "too large") || strings.Contains(inv.stderr, "-9") {
			t.Errorf("%v: exit %d: %s", args, inv.code, inv.stderr)
		}
	}
}
