package qualifycmd_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"

	"github.com/storbench/storbench/internal/app"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/clitest"
	"github.com/storbench/storbench/internal/result"
)

// etcdResult is an etcd-fdatasync result with the given p99 sync latency.
func etcdResult(target string, p99 time.Duration, iops float64) result.Result {
	return result.Result{Target: target, Round: result.RoundIsolated, Repetition: 1, Workload: "etcd-fdatasync",
		Status: result.StatusComplete, Labels: map[string]string{"hostname": "lab"},
		Write: &result.Direction{IOPS: iops, BytesPerSec: iops * 2300, TotalIOs: 10000},
		Sync:  &result.Latency{Samples: 10000, Percentiles: []result.Percentile{{P: 99, Value: p99}}}}
}

func TestQualifyExitCodes(t *testing.T) {
	for i, tt := range []struct {
		p99  time.Duration
		code int
		word string
	}{
		{4 * time.Millisecond, cli.ExitOK, "PASS"},
		{15 * time.Millisecond, cli.ExitWarn, "WARN"},
		{30 * time.Millisecond, cli.ExitVerdictFail, "FAIL"},
	} {
		t.Run(tt.word, func(t *testing.T) {
			db := filepath.Join(t.TempDir(), "r.db")
			id := clitest.SeedResults(t, db, fmt.Sprintf("20261122-10000%d-aaaa", i), []result.Result{etcdResult("/var/lib/etcd", tt.p99, 400)})
			inv := clitest.Run(t, app.Run, db, "qualify", "--for", "etcd", id)
			if inv.Code != tt.code || !strings.Contains(inv.Stdout, "Verdict for etcd: "+tt.word) ||
				!strings.Contains(inv.Stdout, "threshold: pass <= 10 ms, warn <= 20 ms") || !strings.Contains(inv.Stdout, "source: etcd documentation") {
				t.Errorf("exit %d (want %d)\n%s%s", inv.Code, tt.code, inv.Stdout, inv.Stderr)
			}
			inv = clitest.Run(t, app.Run, db, "qualify", "--for", "etcd", id, "--output", "json")
			var out struct {
				Verdict  struct{ Status string }
				ExitCode int `json:"exit_code"`
			}
			if err := json.Unmarshal([]byte(inv.Stdout), &out); err != nil || out.ExitCode != tt.code || out.ExitCode != inv.Code ||
				!strings.EqualFold(out.Verdict.Status, tt.word) {
				t.Errorf("json: %v %+v exit %d", err, out, inv.Code)
			}
		})
	}
}

func TestQualifyUsage(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	id := clitest.SeedResults(t, db, "20261122-100000-aaaa", []result.Result{etcdResult("/var/lib/etcd", time.Millisecond, 400)})
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no --for", []string{"qualify", id}, "--for is required"},
		{"unknown verdict", []string{"qualify", "--for", "zfs", id}, `--for "zfs"`},
		{"nothing to judge", []string{"qualify", "--for", "etcd"}, "name stored runs"},
		{"both runs and target", []string{"qualify", "--for", "etcd", id, "--target", t.TempDir()}, "not both"},
		{"missing measurements", []string{"qualify", "--for", "pi-score", id}, "run the pi suite"},
		{"bad device size", []string{"qualify", "--for", "ceph-osd", id, "--device-size", "big"}, `--device-size "big"`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			inv := clitest.Run(t, app.Run, db, tt.args...)
			if inv.Code != cli.ExitUsage || !strings.Contains(inv.Stderr, tt.want) {
				t.Errorf("exit %d, stderr %q, want %q", inv.Code, inv.Stderr, tt.want)
			}
		})
	}
}

// TestQualifyTarget runs the etcd workload with real fio on a temporary
// directory (on 2 MiB, see testdata), stores it and judges it.
func TestQualifyTarget(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	db := filepath.Join(dir, "r.db")
	target := filepath.Join(dir, "etcd")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	inv := clitest.Run(t, app.Run, db, "qualify", "--for", "etcd", "--target", target, "--label", "storage=tmp",
		"--suite", "testdata/etcd-small.yaml", "--output", "json")
	var out struct {
		Verdict struct {
			Status string
			Checks []struct{ Name, Subject, Threshold, Source string }
		}
		Runs     []string
		ExitCode int `json:"exit_code"`
	}
	if err := json.Unmarshal([]byte(inv.Stdout), &out); err != nil {
		t.Fatalf("exit %d: %v\n%s\n%s", inv.Code, err, inv.Stdout, inv.Stderr)
	}
	if inv.Code != out.ExitCode || len(out.Runs) != 1 || len(out.Verdict.Checks) != 2 || out.Verdict.Checks[0].Subject != target {
		t.Errorf("exit %d, output %+v\n%s", inv.Code, out, inv.Stderr)
	}
	if !strings.Contains(inv.Stderr, "stored as run "+out.Runs[0]) {
		t.Errorf("stderr: %s", inv.Stderr)
	}
	// The run is stored: judging it again gives the same answer.
	again := clitest.Run(t, app.Run, db, "qualify", "--for", "etcd", out.Runs[0])
	if again.Code != inv.Code {
		t.Errorf("stored run judged %d, live %d", again.Code, inv.Code)
	}
	matches, _ := filepath.Glob(filepath.Join(target, "*"))
	if len(matches) != 0 {
		t.Errorf("test files left behind: %v", matches)
	}
}

func TestQualifyCephDeviceSize(t *testing.T) {
	db := filepath.Join(t.TempDir(), "r.db")
	sync := result.Result{Target: "/dev/sdb", Round: result.RoundIsolated, Repetition: 1, Workload: "sync-write-4k-qd1",
		Status: result.StatusComplete, Write: &result.Direction{IOPS: 1800, BytesPerSec: 1800 * 4096, TotalIOs: 54000}}
	seq := result.Result{Target: "/dev/sdb", Round: result.RoundIsolated, Repetition: 1, Workload: "seq-write-4m",
		Status: result.StatusComplete, Write: &result.Direction{IOPS: 100, BytesPerSec: 420e6, TotalIOs: 256}}
	id := clitest.SeedResults(t, db, "20261122-100000-aaaa", []result.Result{seq, sync})
	inv := clitest.Run(t, app.Run, db, "qualify", "--for", "ceph-osd", id, "--device-size", "1TB", "--output", "json")
	if inv.Code != cli.ExitWarn || !strings.Contains(inv.Stdout, "consumer SSD without power-loss protection") ||
		!strings.Contains(inv.Stdout, "9.3 GiB-18.6 GiB for RBD") {
		t.Errorf("exit %d\n%s%s", inv.Code, inv.Stdout, inv.Stderr)
	}
}
