package storbench

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// recorder is an observer that keeps what it heard.
type recorder struct {
	mu       sync.Mutex
	started  []string
	finished []string
	notices  []string
}

func (r *recorder) RunStarted(run *result.Run) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.started = append(r.started, run.ID)
}
func (r *recorder) Notice(target, msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.notices = append(r.notices, target+": "+msg)
}
func (r *recorder) WorkloadStarted(engine.Step)                   {}
func (r *recorder) WorkloadProgress(engine.Step, result.Progress) {}
func (r *recorder) WorkloadFinished(s engine.Step, res *result.Result) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished = append(r.finished, s.Workload+" "+string(res.Status))
}

// wrapped counts the targets a request's Wrap saw.
type wrapped struct {
	runner.Target
	prepared *int
}

func (w *wrapped) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	*w.prepared++
	return w.Target.Prepare(ctx, need)
}

func (w *wrapped) Check(ctx context.Context, need runner.Need) error {
	if c, ok := w.Target.(runner.Checker); ok {
		return c.Check(ctx, need)
	}
	return nil
}

func entries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// A suite runs through real fio on a directory into a real SQLite file:
// every result stored, the target left as it was.
func TestRunStoresEveryResult(t *testing.T) {
	testenv.Fio(t)
	target := t.TempDir()
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	prepared := 0
	req := DefaultRunRequest()
	req.Suite, req.Targets, req.Telemetry = "testdata/run-tiny.yaml", []string{target}, false
	req.Labels = map[string]string{"storage": "tmp"}
	req.Wrap = func(t runner.Target) runner.Target { return &wrapped{Target: t, prepared: &prepared} }
	obs := &recorder{}
	r, err := Run(context.Background(), st, req, obs)
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != result.StatusComplete || r.Suite != "run-tiny" || r.Labels["storage"] != "tmp" {
		t.Errorf("run %+v", r)
	}
	if !slices.Equal(obs.started, []string{r.ID}) || !slices.Equal(obs.finished, []string{"rr complete", "sw complete"}) {
		t.Errorf("observer heard %v, %v", obs.started, obs.finished)
	}
	if prepared != 1 {
		t.Errorf("Wrap saw %d preparations, want 1", prepared)
	}
	if left := entries(t, target); len(left) > 0 {
		t.Errorf("the run left %v in the target", left)
	}
	st.Close()
	// Read back from the file itself.
	again, err := store.Open(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	o, err := LoadRunOutcome(context.Background(), again, r)
	if err != nil {
		t.Fatal(err)
	}
	if o.Run != r || o.Contention != nil {
		t.Errorf("outcome %+v", o)
	}
	var got []string
	for _, x := range o.Results {
		iops, _ := x.Metric(result.MetricIOPS)
		if iops <= 0 {
			t.Errorf("%s: IOPS %g", x.Workload, iops)
		}
		got = append(got, x.Workload)
	}
	if !slices.Equal(got, []string{"rr", "sw"}) {
		t.Errorf("stored %v", got)
	}
	// A run with nothing stored has an empty list, never null, in JSON.
	none, err := LoadRunOutcome(context.Background(), again, &result.Run{ID: "20260101-000000-0000"})
	if err != nil {
		t.Fatal(err)
	}
	if doc, _ := json.Marshal(none); !strings.Contains(string(doc), `"results":[]`) || strings.Contains(string(doc), "contention") {
		t.Errorf("JSON %s", doc)
	}
}

// A raw job runs as fio runs it, judged first on the local target.
func TestRunRawJob(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	job := filepath.Join(dir, "job.fio")
	if err := os.WriteFile(job, []byte("[j]\nrw=randread\nbs=4k\nsize=4m\nruntime=1\ntime_based\nioengine=psync\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	st := store.NewLazy(filepath.Join(dir, "r.db"))
	defer st.Close()
	req := DefaultRunRequest()
	req.FioJob, req.Targets, req.Telemetry = job, []string{t.TempDir()}, false
	r, err := Run(context.Background(), st, req, &recorder{})
	if err != nil {
		t.Fatal(err)
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{r.ID}})
	if err != nil || len(results) != 1 || results[0].Status != result.StatusComplete {
		t.Fatalf("results %+v, %v", results, err)
	}
}

// What storbench refuses is a *RequestError, and a refused run creates
// no database and leaves nothing in the target.
func TestRunRefusals(t *testing.T) {
	testenv.Fio(t)
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	bad := write("bad.fio", "[j]\nsize=1m\nrw=sideways\n")
	engineless := write("engine.fio", "[j]\nsize=1m\nioengine=storbench-none\n")
	tests := []struct {
		name string
		edit func(r *RunRequest, target string)
		want string
	}{
		{"fio refuses the job", func(r *RunRequest, _ string) { r.FioJob = bad }, "bad.fio:3: fio refuses the job: fio: failed parsing rw=sideways"},
		{"fio lacks the engine", func(r *RunRequest, _ string) { r.FioJob = engineless }, `fio here has no I/O engine "storbench-none"`},
		{"no such target", func(r *RunRequest, target string) { r.FioJob, r.Targets = bad, []string{filepath.Join(target, "none")} }, "no such file"},
		{"bad option", func(r *RunRequest, _ string) { r.Repeat = 0 }, "Repeat 0: must be at least 1"},
		{"k8s option alone", func(r *RunRequest, _ string) { r.Kube = &KubeRequest{Timeout: time.Minute} }, "options apply to Kubernetes targets"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			target := t.TempDir()
			db := filepath.Join(t.TempDir(), "r.db")
			st := store.NewLazy(db)
			defer st.Close()
			req := DefaultRunRequest()
			req.Targets = []string{target}
			tt.edit(&req, target)
			_, err := Run(context.Background(), st, req, &recorder{})
			wantRefused(t, err, tt.want)
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused run created the database (%v)", err)
			}
			if left := entries(t, target); len(left) > 0 {
				t.Errorf("left %v in the target", left)
			}
		})
	}
}

// A blank device is written only when Destructive names it: refused the same
// way as any request, before anything is stored.
func TestRunRefusesAnUnnamedDevice(t *testing.T) {
	testenv.Fio(t)
	dev := testenv.LoopDevice(t, 64<<20)
	db := filepath.Join(t.TempDir(), "r.db")
	st := store.NewLazy(db)
	defer st.Close()
	job := filepath.Join(t.TempDir(), "dev.fio")
	if err := os.WriteFile(job, []byte("[w]\nfilename="+dev+"\nrw=randwrite\nbs=4k\nsize=4m\nruntime=1\ntime_based\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, edit := range map[string]func(r *RunRequest){
		"suite on the device":       func(r *RunRequest) { r.Suite, r.Targets = "testdata/run-tiny.yaml", []string{dev} },
		"raw job naming the device": func(r *RunRequest) { r.FioJob, r.Targets = job, []string{t.TempDir()} },
		"destructive names another one": func(r *RunRequest) {
			r.FioJob, r.Targets, r.Destructive = job, []string{t.TempDir()}, []string{"/dev/null"}
		},
	} {
		t.Run(name, func(t *testing.T) {
			req := DefaultRunRequest()
			req.Telemetry = false
			edit(&req)
			_, err := Run(context.Background(), st, req, &recorder{})
			wantRefused(t, err, "pass --destructive "+dev)
			if _, err := os.Stat(db); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a refused run created the database (%v)", err)
			}
		})
	}
}

// A dry run judges the job on every local target and runs nothing.
func TestDryRun(t *testing.T) {
	testenv.Fio(t)
	job := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(job, []byte("[a]\nrw=read\nsize=4m\nruntime=2\nramp_time=500ms\ntime_based\n[b]\nrw=write\nsize=1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	one, two := t.TempDir(), t.TempDir()
	req := DefaultRunRequest()
	req.FioJob, req.Targets = job, []string{one, "k8s:ignored", two}
	judged, err := DryRun(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if len(judged) != 2 || judged[0].Target != one || judged[1].Target != two {
		t.Fatalf("judged %+v", judged)
	}
	j := judged[0]
	if j.TimeBased.String() != "2.5s" || j.UntilDone != 1 || !slices.Equal(j.Writers, []string{"b"}) {
		t.Errorf("judged %+v: %s, %d, writers %v", j, j.TimeBased, j.UntilDone, j.Writers)
	}
	if !strings.Contains(string(j.Text), "[b]") {
		t.Errorf("job text %q", j.Text)
	}
	for _, d := range []string{one, two} {
		if left := entries(t, d); len(left) > 0 {
			t.Errorf("a dry run left %v in %s", left, d)
		}
	}
}

func TestFioSeconds(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"2": 2 * time.Second, " 1.5 ": 1500 * time.Millisecond, "500ms": 500 * time.Millisecond, "250us": 250 * time.Microsecond,
		"3s": 3 * time.Second, "2m": 2 * time.Minute, "1h": time.Hour, "1d": 24 * time.Hour, "xs": 0, "soon": 0,
	} {
		if got := fioSeconds(in); got != want {
			t.Errorf("fioSeconds(%q) = %s, want %s", in, got, want)
		}
	}
}
