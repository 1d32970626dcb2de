package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// The contention round on a host: the probe alone, then beside the bulk
// writer, both on the host; nothing left there.
func TestRunSSHContentionRound(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Round, req.Probe = result.RoundContention, "rr"
	req.Given = func(o string) bool { return o == "suite" }
	req.Targets = []string{sshURL(t, servers[0], dir)}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	r, err := Run(context.Background(), st, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	o, err := LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Contention) != 1 || o.Contention[0].Target != req.Targets[0] {
		t.Fatalf("contention reports %+v", o.Contention)
	}
	for _, res := range o.Results {
		d := res.Read // the probe reads; the bulk writer writes
		if strings.HasPrefix(res.Workload, "bulk-write") {
			d = res.Write
		}
		if res.Status != result.StatusComplete || res.Round != result.RoundContention || d == nil || d.IOPS <= 0 {
			t.Errorf("%s %s: %s %s %+v", res.Target, res.Workload, res.Status, res.Error, d)
		}
	}
	if len(o.Results) < 2 {
		t.Errorf("%d results, want the probe alone and loaded", len(o.Results))
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("the run left %v on the host", left)
	}
}

// A user's fio job runs on the host as fio runs it, judged there first.
func TestRunSSHRawJob(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	job := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(job, []byte("[j]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=1\ntime_based\nioengine=psync\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := DefaultRunRequest()
	req.FioJob, req.Telemetry = job, false
	req.Targets = []string{sshURL(t, servers[0], dir)}
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	r, err := Run(context.Background(), st, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{r.ID}})
	if err != nil || len(results) != 1 || results[0].Status != result.StatusComplete || results[0].Write == nil || results[0].Write.IOPS <= 0 {
		t.Fatalf("results %+v, %v", results, err)
	}
	if results[0].Target != req.Targets[0] || result.LabelHostname.Of(results[0].Labels) == "" {
		t.Errorf("result of %s with labels %v", results[0].Target, results[0].Labels)
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("the run left %v on the host", left)
	}
}

// --dry-run on hosts: the raw job judged by the host's fio on the
// prepared target, nothing run, nothing left; a device holding data
// refused, unchanged.
func TestDryRunSSH(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	var ext4 func(testing.TB) string
	for _, c := range safetytest.Cases() {
		if c.Name == "ext4" {
			ext4 = c.Device
		}
	}
	used := ext4(t)
	job := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(job, []byte("[j]\nrw=randwrite\nbs=4k\nsize=4m\nruntime=1\ntime_based\nioengine=psync\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := DefaultRunRequest()
	req.FioJob = job
	req.Targets = []string{sshURL(t, servers[0], dir)}
	judged, err := DryRun(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(judged) != 1 || judged[0].Path != req.Targets[0] || judged[0].Reading == nil || len(judged[0].Reading.Jobs) != 1 || judged[0].TimeBased != time.Second {
		t.Fatalf("judged %+v", judged)
	}
	if !strings.HasPrefix(judged[0].WorkDir, dir+"/storbench-dry-run-") {
		t.Errorf("judged in %s, not in the target's work directory on the host", judged[0].WorkDir)
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("the dry run left %v on the host", left)
	}
	before := safetytest.Sum(t, used)
	req.Targets = []string{sshURL(t, servers[0], used)}
	req.Destructive = req.Targets
	_, err = DryRun(context.Background(), req)
	var rerr *RequestError
	if !errors.As(err, &rerr) || !strings.Contains(err.Error(), "ext2/3/4 superblock") {
		t.Errorf("want the ext4 device refused, got %v", err)
	}
	if after := safetytest.Sum(t, used); after != before {
		t.Errorf("the device changed: %s -> %s", before, after)
	}
}
