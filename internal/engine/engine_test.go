package engine

import (
	"bufio"
	"context"
	"errors"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/fio/fiotest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

// fakeFio is the shared fake fio (fiotest) behind the engine's start
// line: it answers a parallel round's gate as the gate script does, then
// runs the command behind it; the measurement checks' cat /proc/meminfo
// reads 1 MiB.
type fakeFio struct{ *fiotest.Fio }

func newFakeFio(f *fiotest.Fio) *fakeFio {
	if f.Other == nil {
		f.Other = func(args []string, stdout io.Writer) error {
			if strings.Join(args, " ") == "cat /proc/meminfo" {
				_, err := io.WriteString(stdout, "MemTotal:       1024 kB\n")
				return err
			}
			return nil // the measurement checks' sh, rm
		}
	}
	return &fakeFio{f}
}

func (f *fakeFio) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return &fakeGateCmd{fio: f.Fio, ctx: ctx, args: append([]string{name}, args...)}
}

type fakeGateCmd struct {
	fio    *fiotest.Fio
	ctx    context.Context
	args   []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (c *fakeGateCmd) SetDir(string) execx.Cmd         { return c }
func (c *fakeGateCmd) SetEnv(...string) execx.Cmd      { return c }
func (c *fakeGateCmd) SetStdin(r io.Reader) execx.Cmd  { c.stdin = r; return c }
func (c *fakeGateCmd) SetStdout(w io.Writer) execx.Cmd { c.stdout = w; return c }
func (c *fakeGateCmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

func (c *fakeGateCmd) Run() error {
	args := c.args
	if len(args) > 4 && args[0] == "sh" && (args[2] == gateScript || args[2] == fioGateScript) {
		// A parallel round's start line, as the gate behaves: ready on
		// stderr, then the command once a "go" line arrives on stdin.
		if _, err := io.WriteString(c.stderr, gateMarker+"\n"); err != nil {
			return err
		}
		if line, err := bufio.NewReader(c.stdin).ReadString('\n'); err != nil || line != gateGo+"\n" {
			return &execx.RunError{Command: args, ExitCode: 125}
		}
		postrun := false
		if args[2] == fioGateScript {
			if postrun = args[len(args)-1] == fioEndPostrun; postrun {
				args = args[:len(args)-1]
			}
			if args[len(args)-1] != fioGatePrerun {
				return &execx.RunError{Command: args, ExitCode: 1, Stderr: "no prerun gate"}
			}
			args = args[:len(args)-1]
		}
		args = args[4:]
		err := c.fio.Command(c.ctx, args[0], args[1:]...).SetStdin(c.stdin).SetStdout(c.stdout).SetStderr(c.stderr).Run()
		if postrun && err == nil { // the I/O is over, as fio's postrun says
			_, err = io.WriteString(c.stderr, endMarker+"\n")
		}
		return err
	}
	return c.fio.Command(c.ctx, args[0], args[1:]...).SetStdin(c.stdin).SetStdout(c.stdout).SetStderr(c.stderr).Run()
}

type fakeTarget struct {
	name       string
	cmder      execx.Cmder
	prepareErr error
	cleanups   int
	// labels replace the default {device: fake0}.
	labels map[string]string
	// sampler, when set, is offered as the target's telemetry.
	sampler    runner.Sampler
	samplerErr error // what Telemetry says instead
	samplings  int   // calls of Prepared.Telemetry
}

func (t *fakeTarget) Name() string { return t.name }
func (t *fakeTarget) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	if t.prepareErr != nil {
		return nil, t.prepareErr
	}
	labels := t.labels
	if labels == nil {
		labels = map[string]string{"device": "fake0"}
	}
	p := &runner.Prepared{Name: t.name, Kind: "fake", Cmder: t.cmder, File: fio.File{Name: "f.dat"},
		Labels: labels,
		Cleanup: func(context.Context) error {
			t.cleanups++
			return nil
		}}
	if t.sampler != nil || t.samplerErr != nil {
		p.Telemetry = func() (runner.Sampler, error) {
			t.samplings++
			if t.samplerErr != nil {
				return nil, t.samplerErr
			}
			return t.sampler, nil
		}
	}
	return p, nil
}

type notes struct{ messages []string }

func (n *notes) RunStarted(*result.Run)                 {}
func (n *notes) Notice(target, m string)                { n.messages = append(n.messages, target+": "+m) }
func (n *notes) WorkloadStarted(Step)                   {}
func (n *notes) WorkloadProgress(Step, result.Progress) {}
func (n *notes) WorkloadFinished(Step, *result.Result)  {}

func setup(t *testing.T) (*store.SQLite, *spec.Suite, []byte) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	s, err := spec.Parse([]byte("name: two\ndefaults: {size: 8MiB, runtime: 1s}\nworkloads:\n  - {name: a, rw: randread, bs: 4KiB, iodepth: 8}\n  - {name: b, rw: randread, bs: 4KiB}\n"), "two.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return st, s, fiotest.Recorded(t, "libaio-randread.json")
}

func TestFallsBackToPsyncWithANotice(t *testing.T) {
	st, s, raw := setup(t)
	ff := newFakeFio(&fiotest.Fio{JSON: raw, NoLibaio: true})
	tgt := &fakeTarget{name: "t1", cmder: ff}
	n := &notes{}
	run, err := (&Engine{Store: st, Observer: n}).Run(context.Background(), Plan{Suite: s, Targets: []runner.Target{tgt}, Labels: map[string]string{"storage": "x"}})
	if err != nil {
		t.Fatal(err)
	}
	if run.Status != result.StatusComplete || tgt.cleanups != 1 {
		t.Errorf("status %s, cleanups %d", run.Status, tgt.cleanups)
	}
	if len(n.messages) != 1 || !strings.Contains(n.messages[0], "psync") {
		t.Errorf("notices: %q", n.messages)
	}
	jobs := 0
	for _, c := range ff.Calls() {
		if strings.HasPrefix(c[len(c)-1], "--stonewall") {
			jobs++
			if !contains(c, "--ioengine=psync") || contains(c, "--ioengine=libaio") {
				t.Errorf("job not switched to psync: %v", c)
			}
		}
	}
	if jobs != 2 {
		t.Errorf("%d jobs run, want 2", jobs)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(rs) != 2 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	if rs[0].Labels["storage"] != "x" || result.LabelDevice.Of(rs[0].Labels) != "fake0" || result.LabelFioVersion.Of(rs[0].Labels) != "fio-3.33" {
		t.Errorf("labels %v", rs[0].Labels)
	}
	if rawOut, err := st.RawFioJSON(context.Background(), rs[0].ID); err != nil || !strings.Contains(string(rawOut), `"fio version"`) {
		t.Errorf("raw fio JSON not kept: %v", err)
	}
}

func TestPrepareFailureIsRecordedAndOtherTargetsRun(t *testing.T) {
	st, s, raw := setup(t)
	bad := &fakeTarget{name: "bad", prepareErr: errors.New("PVC never bound")}
	good := &fakeTarget{name: "good", cmder: newFakeFio(&fiotest.Fio{JSON: raw})}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{Suite: s, Targets: []runner.Target{bad, good}})
	if !errors.Is(err, ErrWorkloadFailed) || !strings.Contains(err.Error(), "PVC never bound") {
		t.Fatalf("error %v", err)
	}
	if run.Status != result.StatusFailed || good.cleanups != 1 {
		t.Errorf("status %s cleanups %d", run.Status, good.cleanups)
	}
	rs, _ := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	var failed, ok int
	for _, r := range rs {
		switch {
		case r.Target == "bad" && r.Status == result.StatusFailed && strings.Contains(r.Error, "PVC never bound"):
			failed++
		case r.Target == "good" && r.Status == result.StatusComplete:
			ok++
		}
	}
	if failed != 2 || ok != 2 {
		t.Errorf("failed %d ok %d: %+v", failed, ok, rs)
	}
}

func TestCancelCleansUpAndMarksInterrupted(t *testing.T) {
	st, s, raw := setup(t)
	ff := newFakeFio(&fiotest.Fio{JSON: raw, Block: true})
	tgt := &fakeTarget{name: "t", cmder: ff}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		<-ff.Started()
		cancel()
	}()
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(ctx, Plan{Suite: s, Targets: []runner.Target{tgt}})
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v", err)
	}
	if tgt.cleanups != 1 {
		t.Errorf("cleanups %d", tgt.cleanups)
	}
	got, err := st.Run(context.Background(), run.ID)
	if err != nil || got.Status != result.StatusInterrupted || got.Finished.IsZero() {
		t.Errorf("stored run %+v %v", got, err)
	}
}

func contains(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}
