package render

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/storbench/storbench/internal/analysis"
	goldenfile "github.com/storbench/storbench/internal/golden"
	"github.com/storbench/storbench/internal/result"
)

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	goldenfile.Compare(t, filepath.Join("testdata", name), got)
}

// fixture is the four-target, two-group, two-round fixture of the analysis
// tests (see internal/analysis/compare_test.go for its figures).
func fixture(t *testing.T) []result.Figures {
	t.Helper()
	rs := resultsFile(t, "testdata/fixture.json")
	rs[0].Bottleneck = &result.Attribution{LimitedBy: "device", Evidence: "nvme0n1 99% utilised, queue depth 7.8"}
	var out []result.Figures
	for i := range rs {
		out = append(out, rs[i].Figures())
	}
	return out
}

// resultsFile reads stored results (JSON).
func resultsFile(t *testing.T, path string) []result.Result {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	return rs
}

var fixtureRun = result.Run{ID: "20261122-100000-aaaa", Suite: "standard", Source: "storbench", Status: result.StatusComplete,
	Started: time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)}

func report(t *testing.T, o analysis.Options, verdicts ...string) *Report {
	t.Helper()
	c, err := analysis.Compare(fixture(t), o)
	if err != nil {
		t.Fatal(err)
	}
	r := &Report{View: analysis.NewView(c), Runs: []result.Run{fixtureRun}}
	for _, k := range verdicts {
		v, err := analysis.VerdictFor(k, c, analysis.VerdictOptions{})
		if err != nil {
			t.Fatal(err)
		}
		r.Verdicts = append(r.Verdicts, v)
		r.Environment = true
	}
	return r
}

func TestCompareGolden(t *testing.T) {
	tests := []struct {
		name     string
		opts     analysis.Options
		verdicts []string
	}{
		{"grouped", analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"}, nil},
		{"targets", analysis.Options{Baseline: "/mnt/n1", Round: result.RoundIsolated}, nil},
		{"report", analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"}, []string{analysis.ForGeneral}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := report(t, tt.opts, tt.verdicts...)
			var text, md bytes.Buffer
			if err := CompareText(&text, r, false); err != nil {
				t.Fatal(err)
			}
			if err := CompareMarkdown(&md, r); err != nil {
				t.Fatal(err)
			}
			golden(t, tt.name+".txt", text.Bytes())
			golden(t, tt.name+".md", md.Bytes())
			for i, line := range strings.Split(text.String(), "\n") {
				if n := utf8.RuneCountInString(line); n > Width {
					t.Errorf("line %d is %d columns wide: %q", i+1, n, line)
				}
			}
			if strings.Contains(text.String(), "\x1b[") {
				t.Error("colour codes without colour")
			}
		})
	}
}

func TestCompareTextColour(t *testing.T) {
	var b bytes.Buffer
	if err := CompareText(&b, report(t, analysis.Options{GroupBy: "storage"}), true); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "\x1b[1;32m"+Star+"\x1b[0m") {
		t.Error("the best is not highlighted in colour")
	}
}

func TestBarsFitWidth(t *testing.T) {
	var b bytes.Buffer
	tw := &textWriter{w: &b}
	tw.bars(bars{items: []bar{
		{label: "/a/very/long/path/to/a/mount/point/that/never/ends", value: 1234.5, display: "1234 MB/s", best: true, note: "unstable outlier"},
		{label: "short", value: 10, display: "10 MB/s"},
		{label: "zero", value: 0, display: "0 MB/s"},
	}})
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 3 {
		t.Fatalf("%d lines:\n%s", len(lines), b.String())
	}
	for _, l := range lines {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if !strings.HasPrefix(lines[0], "…") || !strings.Contains(lines[0], "1234 MB/s ★ unstable outlier") {
		t.Errorf("long label: %q", lines[0])
	}
	if !strings.Contains(lines[1], "▏") && !strings.Contains(lines[1], "▎") {
		t.Errorf("a small value still shows a sliver: %q", lines[1])
	}
	if strings.ContainsAny(lines[2], "█▏▎▍▌▋▊▉") {
		t.Errorf("zero draws a bar: %q", lines[2])
	}
}

func TestCompareJSONSchema(t *testing.T) {
	var b bytes.Buffer
	if err := CompareJSON(&b, report(t, analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"})); err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if doc["schema"] != JSONSchema {
		t.Errorf("schema = %v", doc["schema"])
	}
	required := map[string][]string{
		"groups":       {"group", "round", "workload", "metric", "mean", "unit", "n"},
		"efficiency":   {"group", "baseline", "round", "workload", "metric", "percent"},
		"round_change": {"group", "from", "to", "workload", "metric", "percent"},
		"best":         {"round", "workload", "metric", "target"},
		"outliers":     {"target", "group", "round", "workload", "metric", "ratio"},
	}
	for array, fields := range required {
		list, ok := doc[array].([]any)
		if !ok || len(list) == 0 {
			t.Errorf("%s: missing or empty array", array)
			continue
		}
		for _, f := range fields {
			if _, ok := list[0].(map[string]any)[f]; !ok {
				t.Errorf("%s[0] has no %q: %v", array, f, list[0])
			}
		}
	}
	// Arrays stay arrays when empty.
	b.Reset()
	if err := CompareJSON(&b, report(t, analysis.Options{Round: result.RoundIsolated})); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"efficiency", "round_change", "verdicts", "skipped"} {
		if l, ok := doc[k].([]any); !ok || len(l) != 0 {
			t.Errorf("%s = %v, want []", k, doc[k])
		}
	}
}

func TestCompareCSV(t *testing.T) {
	var b bytes.Buffer
	if err := CompareCSV(&b, report(t, analysis.Options{GroupBy: "storage", Baseline: "storage=nvme"})); err != nil {
		t.Fatal(err)
	}
	golden(t, "grouped.csv", b.Bytes())
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(rows[0], ",") != strings.Join(CSVHeader, ",") {
		t.Errorf("header = %v", rows[0])
	}
	found := false
	for _, r := range rows[1:] {
		if len(r) != len(CSVHeader) {
			t.Fatalf("row of %d fields: %v", len(r), r)
		}
		if r[0] == "group" && r[1] == "sata" && r[3] == "isolated" && r[4] == "seq-read" && r[5] == "bw" {
			found = true
			if r[9] != "350000000" || r[19] != "35" || r[18] != "false" {
				t.Errorf("sata seq-read row = %v", r)
			}
		}
	}
	if !found {
		t.Error("no group row for sata seq-read")
	}
}

func TestWideTableDropsOptionalColumns(t *testing.T) {
	long := strings.Repeat("x", 30)
	tb := table{head: []string{"TARGET", "A", "B", "C"}, right: []bool{false, true, true, true}, optional: []bool{false, false, true, false},
		rows: [][]string{{long, strings.Repeat("1", 20), strings.Repeat("2", 20), strings.Repeat("3", 20)}}}
	var b bytes.Buffer
	(&textWriter{w: &b}).table(tb)
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		if n := utf8.RuneCountInString(l); n > Width {
			t.Errorf("%d columns: %q", n, l)
		}
	}
	if strings.Contains(b.String(), "222") || !strings.Contains(b.String(), "333") {
		t.Errorf("the optional column should go first:\n%s", b.String())
	}
}
