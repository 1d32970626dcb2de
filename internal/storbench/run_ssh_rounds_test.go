package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
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
	req.Targets = []string{sshURL(t, servers[0], dir)}
	o := runStored(t, req)
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
	ext4 := corpusDevice(t, "ext4")
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
	if len(judged) != 1 || judged[0].Target != req.Targets[0] || len(judged[0].Jobs) != 1 || judged[0].TimeBased != time.Second {
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

// A job file on a host is judged device by device from that host's facts,
// as fio reads the job: a second device it writes is refused for the data
// on it (not merely as unknown), refused while the user has not named it,
// refused while something holds it, and written once it is blank, free
// and named with --destructive as ssh://HOST/dev/...; held on the host
// while it runs, let go after.
func TestRunSSHRawJobOtherDevices(t *testing.T) {
	testenv.Fio(t)
	testenv.Loop(t)
	servers := sshFleet(t, 1, true)
	ext4 := corpusDevice(t, "ext4")
	target, blank, used := testenv.LoopDevice(t, 64<<20), testenv.LoopDevice(t, 64<<20), ext4(t)
	run := func(other string, destructive ...string) ([]result.Result, error) {
		t.Helper()
		job := filepath.Join(t.TempDir(), "job.fio")
		text := "[global]\nbs=4k\nsize=4m\nruntime=1\ntime_based\nioengine=psync\ndirect=1\n\n[own]\nrw=randwrite\n\n[other]\nrw=randwrite\nfilename=" + other + "\n"
		if err := os.WriteFile(job, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		req := DefaultRunRequest()
		req.FioJob, req.Telemetry = job, false
		req.Targets = []string{sshURL(t, servers[0], target)}
		req.Destructive = append([]string{req.Targets[0]}, destructive...)
		st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
		defer st.Close()
		r, err := Run(context.Background(), st, req, nil)
		if err != nil {
			return nil, err
		}
		return st.Results(context.Background(), store.ResultFilter{RunIDs: []string{r.ID}})
	}

	before := safetytest.Sum(t, used)
	if _, err := run(used, sshURL(t, servers[0], used)); err == nil || !strings.Contains(err.Error(), "ext2/3/4 superblock") || !strings.Contains(err.Error(), used) {
		t.Errorf("a job writing %s (ext4) on the host: want it refused for its filesystem, got %v", used, err)
	}
	if after := safetytest.Sum(t, used); after != before {
		t.Errorf("%s changed: %s -> %s", used, before, after)
	}

	if _, err := run(blank); err == nil || !strings.Contains(err.Error(), "pass --destructive "+sshURL(t, servers[0], blank)+" ") {
		t.Errorf("a job writing %s, not named: want it refused with the flag that allows it, got %v", blank, err)
	}

	// Named and blank, but held where the host's facts cannot see it (here
	// exclusively, by this test): the hold on the host refuses it, and
	// nothing is written.
	h, err := safety.HoldExclusive(blank)
	if err != nil {
		t.Fatal(err)
	}
	beforeBlank := safetytest.Sum(t, blank)
	if _, err := run(blank, sshURL(t, servers[0], blank)); err == nil || !strings.Contains(err.Error(), blank+" is in use") {
		t.Errorf("a job writing %s while something holds it: want it refused as in use, got %v", blank, err)
	}
	if err := h.Release(); err != nil {
		t.Fatal(err)
	}
	if after := safetytest.Sum(t, blank); after != beforeBlank {
		t.Errorf("%s changed while held elsewhere", blank)
	}

	results, err := run(blank, sshURL(t, servers[0], blank))
	if err != nil {
		t.Fatal(err)
	}
	// Both devices let go once the run is over.
	for _, dev := range []string{target, blank} {
		h, err := safety.HoldExclusive(dev)
		if err != nil {
			t.Errorf("%s still held after the run: %v", dev, err)
			continue
		}
		h.Release()
	}
	if len(results) != 2 {
		t.Fatalf("%d results, want 2", len(results))
	}
	for _, r := range results {
		if r.Status != result.StatusComplete || r.Write == nil || r.Write.IOPS <= 0 {
			t.Errorf("%s: %s %s %+v", r.Workload, r.Status, r.Error, r.Write)
		}
	}
}

// --defeat-cache reads each host's memory through its connection: here
// the loopback host is this one, so the figures must match.
func TestHostMemory(t *testing.T) {
	servers := sshFleet(t, 1, true)
	req := DefaultRunRequest()
	req.Targets = []string{sshURL(t, servers[0], t.TempDir()), sshURL(t, servers[0], t.TempDir())}
	p, err := buildRunPlan(&req, false)
	if err != nil {
		t.Fatal(err)
	}
	opened, err := openGroups(context.Background(), &req, p, runner.GroupOptions{ReadMemory: true})
	if err != nil {
		t.Fatal(err)
	}
	defer opened.close()
	mems := opened.memory
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	if len(mems) != 1 || mems[0].Err != nil || mems[0].Bytes != engine.MemTotal(data) || !strings.Contains(mems[0].Whose, strings.Split(servers[0].Addr(), ":")[0]) {
		t.Errorf("memories %+v, want one (one connection) of %d bytes", mems, engine.MemTotal(data))
	}
}

// --noise-target on a host: the bulk writer runs there (here the probe's
// own host, another directory), the probe on its target; both labelled,
// nothing left in either directory.
func TestRunSSHContentionNoiseTarget(t *testing.T) {
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir, noise := t.TempDir(), t.TempDir()
	req := DefaultRunRequest()
	req.Suite, req.Telemetry = "testdata/run-tiny.yaml", false
	req.Round, req.Probe = result.RoundContention, "rr"
	req.Targets = []string{sshURL(t, servers[0], dir)}
	req.NoiseTarget = sshURL(t, servers[0], noise)
	o := runStored(t, req)
	if len(o.Contention) != 1 || len(o.Results) < 2 {
		t.Fatalf("contention %+v, %d results", o.Contention, len(o.Results))
	}
	var bulk int
	for _, res := range o.Results {
		if got := result.LabelNoiseTarget.Of(res.Labels); got != req.NoiseTarget {
			t.Errorf("%s %s: noise target %q, want %s", res.Target, res.Workload, got, req.NoiseTarget)
		}
		if strings.HasPrefix(res.Workload, "bulk-write") {
			bulk++
			if res.Write == nil || res.Write.IOPS <= 0 {
				t.Errorf("bulk writer: %s %s %+v", res.Status, res.Error, res.Write)
			}
		} else if res.Target != req.Targets[0] || res.Read == nil || res.Read.IOPS <= 0 {
			t.Errorf("probe %s: %s %s %+v", res.Target, res.Status, res.Error, res.Read)
		}
	}
	for _, d := range []string{dir, noise} {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("the run left %v in %s on the host", left, d)
		}
	}
}

// corpusDevice is the maker of the hostile corpus's device called name.
func corpusDevice(t *testing.T, name string) func(testing.TB) string {
	t.Helper()
	for _, c := range safetytest.Cases() {
		if c.Name == name {
			return c.Device
		}
	}
	t.Fatalf("no corpus device %s", name)
	return nil
}

// runStored runs req into a new lazily opened store and reads the run back.
func runStored(t *testing.T, req RunRequest) *RunOutcome {
	t.Helper()
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
	return o
}
