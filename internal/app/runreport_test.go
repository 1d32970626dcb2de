package app

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// run --report writes the run's report when it ends, in the format the
// file's extension names, as `storbench report RUN -o FILE` would; a name
// with no known extension is refused before anything runs.
func TestRunWritesItsReport(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "tiny.yaml", tinySuite)
	page := filepath.Join(dir, "report.html")
	inv := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir(), "--report", page)
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	html, err := os.ReadFile(page)
	if err != nil {
		t.Fatalf("no report: %v (stderr %s)", err, inv.stderr)
	}
	for _, want := range []string{"<h1>storbench report</h1>", "At a glance", `data-chart="bars"`, "rr · isolated", "sw · isolated"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the report has no %q", want)
		}
	}
	if !strings.Contains(inv.stderr, "wrote "+page+" (html,") {
		t.Errorf("stderr does not say where the report went: %s", inv.stderr)
	}

	bad := storbench(t, filepath.Join(dir, "other.db"), "run", "--suite", suite, "--target", t.TempDir(), "--report", filepath.Join(dir, "report.pdf"))
	if bad.code != 2 || !strings.Contains(bad.stderr, "--report") {
		t.Errorf("a .pdf report: exit %d, %s", bad.code, bad.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "other.db")); err == nil {
		t.Error("a refused run created its database")
	}
}
