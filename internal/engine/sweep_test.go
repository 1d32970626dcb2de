package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// sweepWorkload is a short random read for the sweep's tests.
func sweepWorkload(t *testing.T, runtime string) spec.Workload {
	t.Helper()
	s, err := spec.Parse([]byte("name: s\nworkloads:\n  - {name: rr, rw: randread, bs: 4k, size: 16MiB, iodepth: 4, runtime: "+runtime+"}\n"), "sweep.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s.Workloads[0]
}

func TestSweepJob(t *testing.T) {
	s := &Sweep{Workload: sweepWorkload(t, "2s")}
	job := s.sweepJob(3, 8<<20, "")
	if len(job.Sections) != 3 {
		t.Fatalf("%d sections, want 3", len(job.Sections))
	}
	args := strings.Join(job.Args(), " ")
	for _, want := range []string{"--group_reporting=0", "--output-format=json+", "--log_unix_epoch=1", "--log_avg_msec=100",
		"--name=rr.client1 --filename=storbench-sweep-1.dat", "--name=rr.client3 --filename=storbench-sweep-3.dat", "--size=8388608", "--numjobs=1"} {
		if !strings.Contains(args, want) {
			t.Errorf("job lacks %q:\n%s", want, args)
		}
	}
	for _, bad := range []string{"stonewall", "--filename=storbench-test", "group_reporting=1"} {
		if strings.Contains(args, bad) {
			t.Errorf("job has %q:\n%s", bad, args)
		}
	}
}

func TestSweepSteps(t *testing.T) {
	tests := []struct {
		name    string
		s       Sweep
		steps   string
		est     time.Duration
		atMost  bool
		invalid string
	}{
		{name: "given", s: Sweep{Clients: []int{1, 2, 4, 8}}, steps: "1,2,4,8", est: 8 * time.Second},
		{name: "auto to the cap", s: Sweep{MaxClients: 8}, steps: "1,2,4,8", est: 8 * time.Second, atMost: true},
		{name: "auto default", s: Sweep{}, steps: "1,2,4,8,16,32", est: 12 * time.Second, atMost: true},
		{name: "not growing", s: Sweep{Clients: []int{2, 2}}, steps: "2,2", est: 4 * time.Second, invalid: "steps must grow"},
		{name: "zero", s: Sweep{Clients: []int{0}}, steps: "0", est: 2 * time.Second, invalid: "out of range"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Workload = sweepWorkload(t, "2s")
			if got := joinInts(tc.s.Steps()); got != tc.steps {
				t.Errorf("steps %s, want %s", got, tc.steps)
			}
			if d, atMost := tc.s.Estimate(); d != tc.est || atMost != tc.atMost {
				t.Errorf("estimate %s (at most %v), want %s (%v)", d, atMost, tc.est, tc.atMost)
			}
			err := tc.s.Validate()
			if (err != nil) != (tc.invalid != "") || (err != nil && !strings.Contains(err.Error(), tc.invalid)) {
				t.Errorf("Validate = %v, want %q", err, tc.invalid)
			}
		})
	}
	s := Sweep{Workload: sweepWorkload(t, "2s")}
	s.Workload.Runtime = 0
	if err := s.Validate(); err == nil || !strings.Contains(err.Error(), "time-based") {
		t.Errorf("a size-based workload: %v", err)
	}
}

func TestSweepClientSize(t *testing.T) {
	tests := []struct {
		name                      string
		clientSize, granted, want int64
		wantsShrunk               bool
	}{
		{name: "room for all", granted: 64 << 20, want: 16 << 20},
		{name: "--max-size", clientSize: 4 << 20, granted: 64 << 20, want: 4 << 20},
		{name: "free space shared by four", granted: 40 << 20, want: 10 << 20, wantsShrunk: true},
		{name: "whole pages", granted: 40<<20 + 5, want: 10 << 20, wantsShrunk: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := &Sweep{Workload: sweepWorkload(t, "2s"), Clients: []int{1, 4}, ClientSize: tc.clientSize}
			need := runner.Need{}
			s.adjustNeed(&need)
			if want := s.clientSize() * 4; need.FileSize != want {
				t.Errorf("asks for %d bytes, want %d", need.FileSize, want)
			}
			if got, shrunk := s.sizeIn(tc.granted); got != tc.want || shrunk != tc.wantsShrunk {
				t.Errorf("client size %d (shrunk %v), want %d (%v)", got, shrunk, tc.want, tc.wantsShrunk)
			}
		})
	}
}

// TestSweepRealFio sweeps 1, 2 and 4 clients on a directory with real fio:
// one result per step in its round, the window and spread known, the
// latency merged from every client's bins, nothing left behind.
func TestSweepRealFio(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir, st, obs := sweepSetup(t)
	run, err := sweepRun(context.Background(), st, obs, dir, &Sweep{Workload: sweepWorkload(t, "2s"), Clients: []int{1, 2, 4}})
	if err != nil {
		t.Fatal(err)
	}
	emptyDir(t, dir)
	if !strings.Contains(strings.Join(obs.messages, "\n"), "sweep of rr over 1,2,4 clients: about 6s") {
		t.Errorf("no estimate before the sweep: %q", obs.messages)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d results, want 3", len(rs))
	}
	for i, r := range rs {
		n := 1 << i
		if r.Round != result.SweepRound(n) || result.LabelClients.Of(r.Labels) != strconv.Itoa(n) || r.Status != result.StatusComplete {
			t.Errorf("result %d: round %s clients %q status %s %s", i, r.Round, result.LabelClients.Of(r.Labels), r.Status, r.Error)
		}
		raw, err := st.RawFioJSON(context.Background(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		checkSweepStep(t, r, raw, n)
	}
}

func checkSweepStep(t *testing.T, r result.Result, raw []byte, n int) {
	t.Helper()
	window, _ := strconv.ParseFloat(result.LabelSweepWindow.Of(r.Labels), 64)
	spread, _ := strconv.ParseFloat(result.LabelSweepStartSpread.Of(r.Labels), 64)
	if window < 1000 || window > 2100 || spread > 500 {
		t.Errorf("%d clients: window %v ms, spread %v ms (want about 2 s and little)", n, window, spread)
	}
	if r.Read == nil || r.Read.IOPS <= 0 || r.Read.Runtime != time.Duration(window*1e6) {
		t.Fatalf("%d clients: read %+v", n, r.Read)
	}
	lo, _ := strconv.ParseFloat(result.LabelSweepClientMinIOPS.Of(r.Labels), 64)
	hi, _ := strconv.ParseFloat(result.LabelSweepClientMaxIOPS.Of(r.Labels), 64)
	if lo <= 0 || hi < lo || hi*float64(n) < r.Read.IOPS*0.99 || lo*float64(n) > r.Read.IOPS*1.01 {
		t.Errorf("%d clients: client min %v max %v against the aggregate %v", n, lo, hi, r.Read.IOPS)
	}
	// The merged latency covers every client's completions.
	var doc fio.Output
	docs, _, _, err := fio.ParseOutputs(strings.NewReader(string(raw)))
	if err != nil || len(docs) != 1 {
		t.Fatalf("raw fio JSON: %v", err)
	}
	doc = docs[0]
	var ios int64
	var fioIOPS float64
	for _, j := range doc.Jobs {
		ios += int64(*j.Read.ClatNS.N)
		fioIOPS += *j.Read.IOPS
		if len(j.Read.ClatNS.Bins) == 0 {
			t.Errorf("client %s: no json+ bins", j.Name)
		}
	}
	// All clients start within milliseconds, so the window is nearly every
	// client's whole run and the two figures agree.
	if d := r.Read.IOPS/fioIOPS - 1; d > 0.1 || d < -0.1 {
		t.Errorf("%d clients: window aggregate %.0f IOPS, fio's own sum %.0f", n, r.Read.IOPS, fioIOPS)
	}
	if r.Read.Completion.Samples != ios || len(doc.Jobs) != n {
		t.Errorf("%d clients: merged %d completions of %d", n, r.Read.Completion.Samples, ios)
	}
	if p99, ok := r.Read.Completion.At(99); !ok || p99 <= 0 || p99 > r.Read.Completion.Max {
		t.Errorf("%d clients: merged p99 %v (max %v)", n, p99, r.Read.Completion.Max)
	}
}

// TestSweepLateAndFailedClients runs a step's job with real fio where
// client 2 starts a second late and client 3's file cannot be made: the
// figures name both.
func TestSweepLateAndFailedClients(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("runs fio")
	}
	needFio(t)
	dir := diskDir(t)
	s := &Sweep{Workload: sweepWorkload(t, "3s")}
	job := s.sweepJob(3, 8<<20, "")
	job.Sections[1].Options = append(job.Sections[1].Options, fio.Option{Key: "startdelay", Value: "1"})
	// Client 3 reads back its file with verify: fio laid it out with
	// random data, not verify headers, so the job fails (EILSEQ).
	job.Sections[2].Options = append(job.Sections[2].Options, fio.Option{Key: "rw", Value: "read"},
		fio.Option{Key: "verify", Value: "crc32c"}, fio.Option{Key: "do_verify", Value: "1"}, fio.Option{Key: "verify_fatal", Value: "1"})
	out, _ := fio.Runner{Cmder: execx.Local{}, Dir: dir}.Run(context.Background(), job, nil)
	if out == nil || len(out.Final.Jobs) != 3 {
		t.Fatalf("fio output: %+v", out)
	}
	logs := map[int]clientLog{}
	for i := 1; i <= 3; i++ {
		iops, _ := os.ReadFile(filepath.Join(dir, sweepLogFile("iops", i)))
		bw, _ := os.ReadFile(filepath.Join(dir, sweepLogFile("bw", i)))
		l, err := parseClientLog(iops, bw)
		if err != nil {
			t.Fatal(err)
		}
		logs[i] = l
	}
	f := aggregateSweep(sweepReading{output: &out.Final, logs: logs, interval: s.logInterval(), planned: 3 * time.Second})
	if len(f.failed) != 1 || !strings.HasPrefix(f.failed[0], "client 3: ") {
		t.Errorf("failed %q, want client 3", f.failed)
	}
	if len(f.late) != 1 || !strings.HasPrefix(f.late[0], "client 2 (+") {
		t.Errorf("late %q, want client 2", f.late)
	}
	if f.spread < 800*time.Millisecond || f.spread > 1500*time.Millisecond {
		t.Errorf("start spread %s, want about 1 s", f.spread)
	}
	if f.window < 1500*time.Millisecond || f.window > 2200*time.Millisecond {
		t.Errorf("window %s, want about 2 s (3 s less the late start)", f.window)
	}
}

// TestSweepInterrupted cancels a sweep in its first step: the run ends
// interrupted and every client's file is gone.
func TestSweepInterrupted(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir, st, obs := sweepSetup(t)
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	run, err := sweepRun(ctx, st, obs, dir, &Sweep{Workload: sweepWorkload(t, "20s"), Clients: []int{4, 8}})
	if err != ErrInterrupted || run.Status != result.StatusInterrupted {
		t.Errorf("run %v, err %v", run, err)
	}
	emptyDir(t, dir)
}

// sweepSetup gives a sweep test a directory on a disk, a store and an
// observer.
func sweepSetup(t *testing.T) (string, *store.SQLite, *notes) {
	t.Helper()
	needFio(t)
	return diskDir(t), openStore(t), &notes{}
}

// sweepRun runs the sweep s on the local directory dir.
func sweepRun(ctx context.Context, st store.Store, obs *notes, dir string, s *Sweep) (*result.Run, error) {
	plan := Plan{Targets: []runner.Target{local.NewTarget(dir, local.Options{})}, Sweep: s}
	return (&Engine{Store: st, Observer: obs}).Run(ctx, plan)
}

// TestSweepStopsAtAFailedStep: every client of the first step fails (a
// verify of data fio never wrote with verify headers), so the step is
// stored failed naming them, the sweep stops and the run fails.
func TestSweepStopsAtAFailedStep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	dir, st, obs := sweepSetup(t)
	w := sweepWorkload(t, "2s")
	w.RW = "read"
	w.Extra = map[string]string{"verify": "crc32c", "do_verify": "1", "verify_fatal": "1"}
	run, err := sweepRun(context.Background(), st, obs, dir, &Sweep{Workload: w, Clients: []int{2, 4}})
	if !errors.Is(err, ErrWorkloadFailed) || run.Status != result.StatusFailed {
		t.Errorf("run %v, err %v", run, err)
	}
	emptyDir(t, dir)
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].Round != result.SweepRound(2) || rs[0].Status != result.StatusFailed ||
		!strings.Contains(result.LabelSweepFailed.Of(rs[0].Labels), "client 1: ") || !strings.Contains(result.LabelSweepFailed.Of(rs[0].Labels), "client 2: ") {
		t.Fatalf("results %+v", rs)
	}
	if !strings.Contains(strings.Join(obs.messages, "\n"), "sweep stopped at 2 clients") {
		t.Errorf("notices %q", obs.messages)
	}
}
