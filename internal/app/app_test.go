package app

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// These tests run the real command tree with real fio on temporary
// directories and a real SQLite file.

type invocation struct {
	code           int
	stdout, stderr string
}

func storbench(t *testing.T, db string, args ...string) invocation {
	t.Helper()
	var out, errb bytes.Buffer
	env := func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return os.Getenv(k)
	}
	code := Run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, append([]string{"--db", db}, args...), env)
	return invocation{code, out.String(), errb.String()}
}

func needFio(t *testing.T) {
	t.Helper()
	testenv.Fio(t)
}

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// tinySuite runs in about a second: what its tests check is what is
// stored and shown, not the figures.
const tinySuite = `name: tiny
description: two short workloads for tests
defaults:
  size: 8MiB
  runtime: 500ms
workloads:
  - name: rr
    rw: randread
    bs: 4KiB
    iodepth: 4
  - name: sw
    rw: write
    bs: 64KiB
    iodepth: 2
`

type shown struct {
	Run     result.Run      `json:"run"`
	Results []result.Result `json:"results"`
}

func showJSON(t *testing.T, db, id string) shown {
	t.Helper()
	inv := storbench(t, db, "show", id, "--output", "json")
	if inv.code != 0 {
		t.Fatalf("show: %d %s", inv.code, inv.stderr)
	}
	var s shown
	if err := json.Unmarshal([]byte(inv.stdout), &s); err != nil {
		t.Fatalf("show JSON: %v\n%s", err, inv.stdout)
	}
	return s
}

func runsJSON(t *testing.T, db string) []result.Run {
	t.Helper()
	inv := storbench(t, db, "runs", "--output", "json")
	if inv.code != 0 {
		t.Fatalf("runs: %d %s", inv.code, inv.stderr)
	}
	var runs []result.Run
	if err := json.Unmarshal([]byte(inv.stdout), &runs); err != nil {
		t.Fatalf("runs JSON: %v\n%s", err, inv.stdout)
	}
	return runs
}

func assertEmptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

func TestQuickSuiteStoredAndShown(t *testing.T) {
	needFio(t)
	db := filepath.Join(t.TempDir(), "results.db")
	target := t.TempDir()
	inv := storbench(t, db, "run", "--suite", "quick", "--target", target, "--label", "storage=test-disk")
	if inv.code != 0 {
		t.Fatalf("exit %d\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	for _, want := range []string{"[1/4] seq-read", "[4/4] rand-write-4k-qd32", "WORKLOAD", "IOPS", "MB/s", "P99.9", "complete"} {
		if !strings.Contains(inv.stdout, want) {
			t.Errorf("output lacks %q:\n%s", want, inv.stdout)
		}
	}
	if strings.Contains(inv.stdout, "\r") {
		t.Error("progress line written to a non-terminal")
	}
	assertEmptyDir(t, target)

	runs := runsJSON(t, db)
	if len(runs) != 1 || runs[0].Status != result.StatusComplete || runs[0].Suite != "quick" {
		t.Fatalf("runs = %+v", runs)
	}
	for _, k := range []string{"hostname", "kernel", "arch", "fio_version", "storbench_version", "storage"} {
		if runs[0].Labels[k] == "" {
			t.Errorf("run label %s missing: %v", k, runs[0].Labels)
		}
	}
	s := showJSON(t, db, runs[0].ID[:15])
	if len(s.Results) != 4 {
		t.Fatalf("%d results", len(s.Results))
	}
	for _, r := range s.Results {
		iops, ok := r.Metric(result.MetricIOPS)
		if r.Status != result.StatusComplete || !ok || iops <= 0 {
			t.Errorf("%s: status %s iops %v", r.Workload, r.Status, iops)
		}
		if p, ok := r.Metric(result.MetricLatP999); !ok || p <= 0 {
			t.Errorf("%s: no p99.9", r.Workload)
		}
		for _, k := range []string{"fs_type", "mount_point", "fio_version", "storage"} {
			if r.Labels[k] == "" {
				t.Errorf("%s: label %s missing: %v", r.Workload, k, r.Labels)
			}
		}
	}
	text := storbench(t, db, "show", runs[0].ID)
	if text.code != 0 || !strings.Contains(text.stdout, "rand-read-4k-qd32") || !strings.Contains(text.stdout, "storage=test-disk") {
		t.Errorf("show table:\n%s", text.stdout)
	}
}

func TestRepeatCustomSuiteAndJSONOutput(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "tiny.yaml", tinySuite)
	target := t.TempDir()
	inv := storbench(t, db, "run", "--suite", suite, "--target", target, "--repeat", "2", "--output", "json")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	var got shown
	if err := json.Unmarshal([]byte(inv.stdout), &got); err != nil {
		t.Fatalf("run --output json is not JSON: %v\n%s", err, inv.stdout)
	}
	if len(got.Results) != 4 || got.Run.Suite != "tiny" {
		t.Fatalf("results %d suite %s", len(got.Results), got.Run.Suite)
	}
	reps := map[string][]int{}
	for _, r := range got.Results {
		reps[r.Workload] = append(reps[r.Workload], r.Repetition)
	}
	if len(reps["rr"]) != 2 || reps["rr"][0] != 1 || reps["rr"][1] != 2 {
		t.Errorf("repetitions %v", reps)
	}
	if got.Results[1].Write == nil || got.Results[1].Write.BytesPerSec <= 0 {
		t.Errorf("sw wrote nothing: %+v", got.Results[1])
	}
	assertEmptyDir(t, target)
}

func TestRawFioJobFile(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	job := writeFile(t, dir, "mine.fio", `; a user's own job file
[global]
size=8m
runtime=1
time_based
direct=1
ioengine=psync

[writer]
rw=write
bs=64k
stonewall

[reader]
rw=randread
bs=4k
stonewall
`)
	target := t.TempDir()
	inv := storbench(t, db, "run", "--fio-job", job, "--target", target, "--output", "json")
	if inv.code != 0 {
		t.Fatalf("exit %d: %s", inv.code, inv.stderr)
	}
	var got shown
	if err := json.Unmarshal([]byte(inv.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Results) != 2 || got.Results[0].Workload != "writer" || got.Results[1].Workload != "reader" {
		t.Fatalf("results: %+v", got.Results)
	}
	if got.Results[0].Write == nil || got.Results[1].Read == nil {
		t.Error("directions missing")
	}
	assertEmptyDir(t, target)
	// show says what ran, in fio's words, and does not call it imported.
	show := storbench(t, db, "show", got.Run.ID)
	if !strings.Contains(show.stdout, "What ran") || !strings.Contains(show.stdout, "rw=write") || strings.Contains(show.stdout, "As imported") {
		t.Errorf("show of a raw job:\n%s", show.stdout)
	}
}

func TestInvalidSuiteIsAUsageErrorAndStoresNothing(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "bad.yaml", "name: bad\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    qd: 4\n")
	inv := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir())
	if inv.code != cli.ExitUsage {
		t.Fatalf("exit %d, want 2", inv.code)
	}
	if !strings.Contains(inv.stderr, "bad.yaml:6: qd is not a workload option") {
		t.Errorf("error does not name the field and line: %s", inv.stderr)
	}
	if runs := runsJSON(t, db); len(runs) != 0 {
		t.Errorf("a run was stored: %v", runs)
	}
	for _, c := range [][]string{
		{"run", "--target", t.TempDir(), "--suite", "nonesuch"},
		{"run"},
		{"run", "--target", t.TempDir(), "--repeat", "0"},
		{"run", "--target", t.TempDir(), "--label", "novalue"},
		{"run", "--target", t.TempDir(), "--bogus-flag"},
		{"show", "no-such-run"},
		{"runs", "--output", "yaml"},
	} {
		if inv := storbench(t, db, c...); inv.code != cli.ExitUsage {
			t.Errorf("%v: exit %d (%s), want 2", c, inv.code, inv.stderr)
		}
	}
}

func TestFailedWorkloadIsRecordedAndTheSuiteGoesOn(t *testing.T) {
	needFio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	suite := writeFile(t, dir, "partly.yaml", `name: partly
defaults: {size: 8MiB, runtime: 1s}
workloads:
  - {name: broken, rw: read, bs: 4KiB, ioengine: storbench-no-such-engine}
  - {name: fine, rw: randread, bs: 4KiB}
`)
	inv := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir())
	if inv.code != cli.ExitFailed {
		t.Fatalf("exit %d, want 1\n%s\n%s", inv.code, inv.stdout, inv.stderr)
	}
	if !strings.Contains(inv.stdout, "FAILED broken") || !strings.Contains(inv.stdout, "storbench-no-such-engine") {
		t.Errorf("the failure's reason is not shown:\n%s", inv.stdout)
	}
	runs := runsJSON(t, db)
	s := showJSON(t, db, runs[0].ID)
	if runs[0].Status != result.StatusFailed || len(s.Results) != 2 || s.Results[0].Status != result.StatusFailed || s.Results[1].Status != result.StatusComplete {
		t.Fatalf("run %s, results %+v", runs[0].Status, s.Results)
	}
	if !strings.Contains(s.Results[0].Error, "workload broken") || !strings.Contains(s.Results[0].Error, "storbench-no-such-engine") {
		t.Errorf("error %q does not name the workload and fio's message", s.Results[0].Error)
	}

	ff := storbench(t, db, "run", "--suite", suite, "--target", t.TempDir(), "--fail-fast", "--output", "json")
	var got shown
	if err := json.Unmarshal([]byte(ff.stdout), &got); err != nil {
		t.Fatal(err)
	}
	if ff.code != cli.ExitFailed || len(got.Results) != 1 {
		t.Errorf("--fail-fast: exit %d, %d results", ff.code, len(got.Results))
	}
}

func TestMissingFioNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	dir := t.TempDir()
	suite := writeFile(t, dir, "tiny.yaml", tinySuite)
	inv := storbench(t, filepath.Join(dir, "r.db"), "run", "--suite", suite, "--target", t.TempDir())
	if inv.code != cli.ExitFailed || !strings.Contains(inv.stderr, "apt-get install fio") {
		t.Errorf("exit %d: %s", inv.code, inv.stderr)
	}
}

func TestSuitesListing(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	inv := storbench(t, db, "suites", "--output", "json")
	var suites []struct {
		Name      string `json:"name"`
		Workloads []any  `json:"workloads"`
	}
	if err := json.Unmarshal([]byte(inv.stdout), &suites); err != nil || len(suites) != 8 {
		t.Fatalf("suites JSON: %v %s", err, inv.stdout)
	}
	show := storbench(t, db, "suites", "show", "standard")
	for _, want := range []string{"[rand-write-4k-qd1]", "randrepeat=0", "ramp_time=2", "runtime=10", "stonewall", "rand-read-4k-qd32"} {
		if !strings.Contains(show.stdout, want) {
			t.Errorf("suites show standard lacks %q", want)
		}
	}
}
