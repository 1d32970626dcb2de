package exportcmd_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

func seed(t *testing.T) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "results.db")
	labels := map[string]string{}
	result.LabelHostname.Set(labels, "pi4-1")
	clitest.SeedResults(t, db, "20261120-030000-aaaa", []result.Result{{
		Target: "/mnt/usb", Round: result.RoundIsolated, Repetition: 1, Workload: "etcd-fdatasync", Labels: labels,
		Status: result.StatusComplete, Started: time.Unix(1.7e9, 0),
		Write: &result.Direction{IOPS: 210, BytesPerSec: 483000, Completion: result.Latency{Mean: 2 * time.Millisecond,
			Percentiles: []result.Percentile{{P: 50, Value: time.Millisecond}, {P: 99, Value: 4 * time.Millisecond}}}},
		Sync: &result.Latency{Percentiles: []result.Percentile{{P: 99, Value: 25 * time.Millisecond}}},
	}})
	return db
}

// The textfile storbench export writes passes promtool's checks and holds
// the figures in base units, an etcd verdict among them.
func TestExportTextfile(t *testing.T) {
	promtool := testenv.Tool(t, "promtool", "prometheus", "prometheus")
	db := seed(t)
	file := filepath.Join(t.TempDir(), "storbench.prom")
	if inv := clitest.Run(t, app.Run, db, "export", "--format", "prometheus", file); inv.Code != 0 {
		t.Fatalf("export: exit %d\n%s", inv.Code, inv.Stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	labels := `hostname="pi4-1",node="",round="isolated",storage_class="",suite="standard",target="/mnt/usb",workload="etcd-fdatasync"`
	for _, want := range []string{
		`storbench_iops{` + labels + `} 210`,
		`storbench_sync_latency_p99_seconds{` + labels + `} 0.025`,
		`storbench_latency_seconds{` + labels + `,quantile="0.99"} 0.004`,
		`storbench_latency_seconds_sum{` + labels + `} 0.002`,
		`storbench_last_run_timestamp_seconds{` + labels + `} 1.7e+09`,
		// 25 ms p99 fdatasync: fail (warn up to 20 ms).
		`storbench_verdict_status{for="etcd",hostname="pi4-1",node="",round="isolated",storage_class="",target="/mnt/usb"} 3`,
	} {
		if !strings.Contains(string(data), want+"\n") {
			t.Errorf("textfile lacks %s", want)
		}
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = strings.NewReader(string(data))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("promtool check metrics %s: %v\n%s\n%s", file, err, out, data)
	}

	stdout := clitest.Run(t, app.Run, db, "export", "-")
	if stdout.Code != 0 || stdout.Stdout != string(data) {
		t.Errorf("export -: exit %d, output differs from the file:\n%s\n%s", stdout.Code, stdout.Stdout, stdout.Stderr)
	}
}

func TestExportUsage(t *testing.T) {
	db := seed(t)
	dir := t.TempDir()
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"unknown format": {[]string{"export", "--format", "openmetrics", filepath.Join(dir, "x.prom")}, `--format "openmetrics": choose prometheus`},
		"no file":        {[]string{"export"}, "name one file to write, or - for standard output"},
		"two files":      {[]string{"export", "a.prom", "b.prom"}, "name one file to write"},
	} {
		t.Run(name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, tc.args...)
			if inv.Code != cli.ExitUsage || !strings.Contains(inv.Stderr, tc.want) {
				t.Errorf("exit %d (want %d), stderr %q (want %q)", inv.Code, cli.ExitUsage, inv.Stderr, tc.want)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused exports wrote %v", entries)
	}
}
