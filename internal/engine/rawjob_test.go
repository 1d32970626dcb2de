package engine

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// groupsJob has clones reported one by one (a), clones reported as one
// group (b), a new group after a stonewall (c), and a second section with
// a's name.
const groupsJob = `[global]
ioengine=psync
bs=4k
size=2m
direct=0

[a]
rw=randread
numjobs=2

[b]
stonewall
rw=randwrite
numjobs=2
group_reporting

[c]
stonewall
new_group
rw=read
numjobs=2
group_reporting

[a]
stonewall
rw=write
`

func openStore(t *testing.T) *store.SQLite {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// Every job report in fio's JSON is one stored result, named as fio names
// it (repeats told apart by #n in fio's order), its figures exactly fio's,
// and it says the options it ran with. fio run directly on the same file
// reports the same jobs.
func TestRawJobResultsAreFiosJobReports(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "groups.fio")
	if err := os.WriteFile(path, []byte(groupsJob), 0o644); err != nil {
		t.Fatal(err)
	}
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	target := t.TempDir()
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{
		RawJob: &RawJob{Path: path, File: jf}, Targets: []runner.Target{local.NewTarget(target, local.Options{})},
	})
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range results {
		names = append(names, r.Workload)
	}
	if want := []string{"a", "a#2", "b", "c", "a#3"}; !reflect.DeepEqual(names, want) {
		t.Fatalf("results %v, want %v", names, want)
	}
	raw0, err := st.RawFioJSON(context.Background(), results[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var out fio.Output
	if err := json.Unmarshal(raw0, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Jobs) != len(results) {
		t.Fatalf("fio reported %d jobs, %d stored", len(out.Jobs), len(results))
	}
	for i, j := range out.Jobs {
		want := fio.ToResult(j)
		got := results[i]
		if !reflect.DeepEqual(got.Read, want.Read) || !reflect.DeepEqual(got.Write, want.Write) || got.CPU != want.CPU {
			t.Errorf("%s: stored figures differ from fio's job report %d", got.Workload, i)
		}
		if !strings.Contains(got.Method, "groups.fio") || !strings.Contains(got.Method, "rw="+j.Options["rw"]) || !strings.Contains(got.Method, "bs=4k") {
			t.Errorf("%s: method %q does not say what ran", got.Workload, got.Method)
		}
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("left %d entries in the target", len(ents))
	}

	// fio itself, on the same file.
	direct := t.TempDir()
	cmd := exec.Command("fio", "--output-format=json", path)
	cmd.Dir = direct
	raw, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	var own fio.Output
	if err := json.Unmarshal(raw, &own); err != nil {
		t.Fatal(err)
	}
	var ownNames []string
	for _, j := range own.Jobs {
		ownNames = append(ownNames, j.Name)
	}
	if want := []string{"a", "a", "b", "c", "a"}; !reflect.DeepEqual(ownNames, want) {
		t.Errorf("fio reports %v", ownNames)
	}
	for i := range own.Jobs {
		if own.Jobs[i].GroupID != out.Jobs[i].GroupID {
			t.Errorf("report %d: group %d under fio, %d under storbench", i, own.Jobs[i].GroupID, out.Jobs[i].GroupID)
		}
	}
}

// Even if spec's allowlist let it through, a suite whose workload reads but
// whose extra options make fio write is refused by the judgement of fio's
// reading, and the device is unchanged.
func TestSuiteJudgedOnFiosReading(t *testing.T) {
	testenv.Root(t)
	testenv.Fio(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs")
	dev := testenv.LoopDevice(t, 32<<20)
	if out, err := exec.Command("mkfs.ext4", "-q", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	before := deviceSum(t, dev)
	s, err := spec.Parse([]byte("name: r\ndefaults: {size: 1MiB, runtime: 1s}\nworkloads:\n  - {name: r, rw: read, bs: 4KiB}\n"), "r.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, extra := range []map[string]string{{"rw": "write"}, {"readwrite": "trimwrite"}, {"rw": "randread", "unlink": "1", "ioengine": "filedelete"}} {
		s.Workloads[0].Extra = extra // bypasses spec's allowlist on purpose
		st := openStore(t)
		_, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{
			Suite: s, Policy: safety.Policy{Destructive: []string{dev}},
			Targets: []runner.Target{local.NewTarget(dev, local.Options{Destructive: []string{dev}})},
		})
		if err == nil || !strings.Contains(err.Error(), "refusing to write") {
			t.Errorf("extra %v: %v, want a refusal", extra, err)
		}
		if deviceSum(t, dev) != before {
			t.Fatalf("extra %v changed the device", extra)
		}
	}
}

func deviceSum(t *testing.T, dev string) string {
	t.Helper()
	out, err := exec.Command("sha256sum", dev).Output()
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(out))[0]
}

// A suite workload can be a job file, run as fio runs it beside the
// suite's own workloads: one result per job report, named within the
// workload.
func TestSuiteJobWorkload(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "two.fio"), []byte("[global]\nioengine=psync\nbs=4k\nsize=1m\n[r]\nrw=randread\n[w]\nstonewall\nrw=write\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	suite := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(suite, []byte("name: s\nworkloads:\n  - {name: plain, rw: randread, bs: 4KiB, size: 1MiB, direct: false}\n  - {name: mine, job: two.fio}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Load(suite)
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	target := t.TempDir()
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{Suite: s, Targets: []runner.Target{local.NewTarget(target, local.Options{})}})
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, r := range results {
		names = append(names, r.Workload)
	}
	if got := strings.Join(names, ","); got != "plain,mine/r,mine/w" {
		t.Errorf("results %s", got)
	}
	if !strings.Contains(results[2].Method, "two.fio") || results[2].Write == nil {
		t.Errorf("job workload result %+v", results[2])
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("left %d entries in the target", len(ents))
	}
}
