package comparecmd_test

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
)

const fixture = "../../analysis/testdata/fixture.json"

func TestCompareJSON(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	inv := clitest.Run(t, app.Run, db, "compare", id[:13], "--group-by", "storage", "--baseline", "storage=nvme", "--output", "json")
	if inv.Code != cli.ExitOK {
		t.Fatalf("exit %d: %s", inv.Code, inv.Stderr)
	}
	var doc struct {
		Efficiency []struct {
			Group, Baseline, Round, Workload, Metric string
			Percent                                  float64
		}
		Best     []struct{ Round, Workload, Metric, Target string }
		Outliers []struct{ Target string }
		Runs     []struct{ ID string }
	}
	if err := json.Unmarshal([]byte(inv.Stdout), &doc); err != nil {
		t.Fatalf("%v\n%s", err, inv.Stdout)
	}
	found := false
	for _, e := range doc.Efficiency {
		if e.Group == "sata" && e.Round == "isolated" && e.Workload == "seq-read" && e.Metric == "bw" {
			found = e.Percent > 34.999 && e.Percent < 35.001
		}
	}
	if !found || len(doc.Best) == 0 || len(doc.Outliers) != 7 || len(doc.Runs) != 1 || doc.Runs[0].ID != id {
		t.Errorf("document: efficiency ok %v, %d best, %d outliers, runs %+v", found, len(doc.Best), len(doc.Outliers), doc.Runs)
	}
}

func TestCompareTableAndMarkdown(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	inv := clitest.Run(t, app.Run, db, "compare", id, "--round", "isolated")
	if inv.Code != 0 || !strings.Contains(inv.Stdout, "seq-read · isolated") || strings.Contains(inv.Stdout, "parallel") {
		t.Errorf("table: exit %d\n%s%s", inv.Code, inv.Stdout, inv.Stderr)
	}
	inv = clitest.Run(t, app.Run, db, "compare", id, "--output", "markdown")
	if inv.Code != 0 || !strings.Contains(inv.Stdout, "| TARGET |") || !strings.Contains(inv.Stdout, "```text") {
		t.Errorf("markdown: exit %d\n%s%s", inv.Code, inv.Stdout, inv.Stderr)
	}
}

func TestCompareErrors(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	id := clitest.Seed(t, db, "20261122-100000-aaaa", fixture)
	for _, tt := range []struct {
		name string
		args []string
		code int
		want string
	}{
		{"unknown run", []string{"compare", "19990101"}, cli.ExitUsage, `run "19990101": not found`},
		{"baseline nobody has", []string{"compare", id, "--baseline", "storage=usb"}, cli.ExitUsage, "no target carries that label"},
		{"unknown target", []string{"compare", id, "--baseline", "/mnt/x"}, cli.ExitUsage, "neither KEY=VALUE nor one of the targets"},
		{"bad output", []string{"compare", id, "--output", "yaml"}, cli.ExitUsage, "choose one of table, json, markdown"},
		{"no run", []string{"compare"}, cli.ExitUsage, "name at least one run ID"},
		{"round nobody ran", []string{"compare", id, "--round", "contention"}, cli.ExitFailed, `no completed results to compare in round "contention"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, tt.args...)
			if inv.Code != tt.code || !strings.Contains(inv.Stderr, tt.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", inv.Code, tt.code, inv.Stderr, tt.want)
			}
		})
	}
}
