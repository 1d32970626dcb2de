package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// --dry-run says what fio would run, where, whether it is allowed and how
// long it takes, and runs and stores nothing.
func TestFioJobDryRun(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	writeFile(t, dir, "common.inc", "bs=4k ; block size\nruntime=2\ntime_based\n")
	job := writeFile(t, dir, "job.fio", "[global]\nname=from-global\nrw=randread\nsize=4m\n\n[one]\ninclude common.inc\nfilename=/tmp/storbench-dryrun.dat\n\n[two]\nrw=write\n")
	target := t.TempDir()
	db := filepath.Join(t.TempDir(), "r.db")
	inv := storbench(t, db, "run", "--fio-job", job, "--target", target, "--dry-run")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	for _, want := range []string{
		"bs=4k\n", // the include, spliced in, its comment dropped
		`; changed by storbench from "filename=/tmp/storbench-dryrun.dat"`,
		"filename=tmp/storbench-dryrun.dat",
		"[one] bs=4k filename=tmp/storbench-dryrun.dat name=one runtime=2 rw=randread size=4m time_based",
		"two writes <work>/two.0.0",
		"Safety: allowed (writing jobs: two)",
		"Estimated time: at most 2s for the time-based jobs, plus 1 job(s)",
		"nothing ran and nothing was stored",
	} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("dry run lacks %q:\n%s", want, inv.stdout)
		}
	}
	if _, err := os.Stat(db); err == nil {
		t.Error("a dry run created the database")
	}
	if left := entries(t, target); len(left) > 0 {
		t.Errorf("a dry run left %v in the target", left)
	}
}

// What fio refuses is refused before anything runs, in fio's words, at the
// line of the user's file (an included one too).
func TestFioJobRefusedEarlyInFiosWords(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	writeFile(t, dir, "bad.inc", "\n; comment\nrw=sideways\n")
	cases := map[string]struct{ text, want string }{
		"bad-value.fio":   {"[j]\nsize=1m\nrw=sideways\n", "bad-value.fio:3: fio refuses the job: fio: failed parsing rw=sideways"},
		"unknown.fio":     {"[j]\nsize=1m\nno_such_option=1\n", "unknown.fio:3: fio refuses the job: Bad option <no_such_option=1>"},
		"included.fio":    {"[j]\nsize=1m\ninclude bad.inc\n", "bad.inc:3: fio refuses the job"},
		"no-engine.fio":   {"[j]\nsize=1m\nioengine=storbench-none\n", "no-engine.fio:3: fio refuses the job: fio here has no I/O engine \"storbench-none\""},
		"only-global.fio": {"[global]\nrw=read\n", "no job section"},
		"no-section.fio":  {"rw=read\n[j]\n", "no-section.fio:1: option \"rw=read\" stands outside"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			job := writeFile(t, dir, name, c.text)
			target := t.TempDir()
			db := filepath.Join(t.TempDir(), "r.db")
			inv := storbench(t, db, "run", "--fio-job", job, "--target", target)
			if inv.code != 2 || !strings.Contains(inv.stderr, c.want) {
				t.Fatalf("exit %d, stderr %q; want exit 2 and %q", inv.code, inv.stderr, c.want)
			}
			if _, err := os.Stat(db); err == nil {
				t.Error("a refused run created the database")
			}
			if left := entries(t, target); len(left) > 0 {
				t.Errorf("left %v in the target", left)
			}
		})
	}
}
