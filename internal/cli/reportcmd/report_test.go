package reportcmd_test

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
)

const fixture = "../../analysis/testdata/fixture.json"

func TestReportFormats(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	check := map[string]func(t *testing.T, data []byte){
		"report.html": func(t *testing.T, data []byte) {
			s := string(data)
			if !strings.HasPrefix(s, "<!DOCTYPE html>") || strings.Count(s, `<svg class="chart"`) != 8 || !strings.Contains(s, "general") {
				t.Errorf("html report: %d charts", strings.Count(s, `<svg class="chart"`))
			}
		},
		"report.md": func(t *testing.T, data []byte) {
			if !strings.HasPrefix(string(data), "## storbench report") || !strings.Contains(string(data), "### Verdicts") {
				t.Errorf("markdown report:\n%s", data)
			}
		},
		"report.json": func(t *testing.T, data []byte) {
			var doc struct {
				Schema   string
				Verdicts []struct{ For, Status string }
				Groups   []any
			}
			if err := json.Unmarshal(data, &doc); err != nil || doc.Schema != "storbench.compare/v1" || len(doc.Verdicts) != 1 ||
				doc.Verdicts[0].For != "general" || len(doc.Groups) == 0 {
				t.Errorf("json report: %v %+v", err, doc)
			}
		},
		"report.csv": func(t *testing.T, data []byte) {
			rows, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
			if err != nil || len(rows) < 2 || rows[0][0] != "scope" {
				t.Errorf("csv report: %v, %d rows", err, len(rows))
			}
		},
	}
	for name, fn := range check {
		t.Run(name, func(t *testing.T) {
			out := filepath.Join(dir, name)
			inv := clitest.Run(t, app.Run, db, "report", id, "--group-by", "storage", "-o", out)
			if inv.Code != 0 {
				t.Fatalf("exit %d: %s", inv.Code, inv.Stderr)
			}
			data, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			fn(t, data)
		})
	}
	// No stray temporary files next to the reports.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestReportToStdout(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	inv := clitest.Run(t, app.Run, db, "report", id)
	if inv.Code != 0 || !strings.Contains(inv.Stdout, "storbench report") || !strings.Contains(inv.Stdout, "Environment") {
		t.Errorf("exit %d\n%s%s", inv.Code, inv.Stdout, inv.Stderr)
	}
	inv = clitest.Run(t, app.Run, db, "report", id, "--output", "json")
	if inv.Code != 0 || !json.Valid([]byte(inv.Stdout)) {
		t.Errorf("--output json: exit %d %s", inv.Code, inv.Stderr)
	}
}

func TestReportErrors(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	existing := filepath.Join(dir, "keep.html")
	if err := os.WriteFile(existing, []byte("mine"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"unknown extension", []string{"report", id, "-o", filepath.Join(dir, "r.docx")}, `unknown extension ".docx"`},
		{"unknown verdict", []string{"report", id, "--for", "zfs"}, `--for "zfs"`},
		{"verdict without data", []string{"report", id, "--for", "etcd", "-o", existing}, "no fdatasync latency measured"},
		{"bad format", []string{"report", id, "--format", "pdf"}, `--format "pdf"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, tt.args...)
			if inv.Code != cli.ExitUsage || !strings.Contains(inv.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want %q", inv.Code, inv.Stderr, tt.want)
			}
		})
	}
	if data, _ := os.ReadFile(existing); string(data) != "mine" {
		t.Error("a failed report replaced an existing file")
	}
}
