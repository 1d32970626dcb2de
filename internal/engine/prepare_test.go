package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/fio/fiotest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// countingSampler is a runner's sampler whose recordings say which
// recording they were.
type countingSampler struct {
	host             string
	mu               sync.Mutex
	started, stopped int
}

func (s *countingSampler) Start() runner.Recording {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started++
	return &countedRecording{s: s, n: s.started}
}

type countedRecording struct {
	s *countingSampler
	n int
}

func (r *countedRecording) Stop() *result.Telemetry {
	r.s.mu.Lock()
	defer r.s.mu.Unlock()
	r.s.stopped++
	return &result.Telemetry{Host: r.s.host, Missing: []string{"recording " + strconv.Itoa(r.n)}}
}

// TestTelemetryComesFromTheRunner: every fio run, in every round, is
// recorded by the sampler its target's runner offers, once; a runner that
// offers none yields results without telemetry (not sampled), and a plan
// that does not ask never makes a sampler.
func TestTelemetryComesFromTheRunner(t *testing.T) {
	rounds := map[string][]string{
		"isolated":          nil,
		"isolated+parallel": {result.RoundIsolated, result.RoundParallel},
	}
	for name, rs := range rounds {
		for _, asked := range []bool{true, false} {
			t.Run(name+"/asked="+strconv.FormatBool(asked), func(t *testing.T) {
				st, s, raw := setup(t)
				sampled := &fakeTarget{name: "sampled", cmder: newFakeFio(&fiotest.Fio{JSON: raw}), sampler: &countingSampler{host: "h1"}}
				blind := &fakeTarget{name: "blind", cmder: newFakeFio(&fiotest.Fio{JSON: raw})}
				plan := Plan{Suite: s, Targets: []runner.Target{sampled, blind}, Rounds: rs, Telemetry: asked, Repeat: 2}
				run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), plan)
				if err != nil {
					t.Fatal(err)
				}
				res, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
				if err != nil {
					t.Fatal(err)
				}
				roundsRun := max(len(rs), 1)
				if want := 2 * 2 * 2 * roundsRun; len(res) != want {
					t.Fatalf("%d results, want %d", len(res), want)
				}
				recordings := map[string]bool{}
				for _, r := range res {
					switch {
					case r.Target == "blind" || !asked:
						if r.Telemetry != nil {
							t.Errorf("%s %s %s: telemetry %+v, want none", r.Target, r.Round, r.Workload, r.Telemetry)
						}
					case r.Telemetry == nil || r.Telemetry.Host != "h1" || len(r.Telemetry.Missing) != 1:
						t.Errorf("%s %s %s: telemetry %+v, want the runner's recording", r.Target, r.Round, r.Workload, r.Telemetry)
					default:
						recordings[r.Telemetry.Missing[0]] = true
					}
				}
				cs := sampled.sampler.(*countingSampler)
				switch {
				case !asked:
					if sampled.samplings != 0 || cs.started != 0 {
						t.Errorf("telemetry off: sampler made %d times, started %d times", sampled.samplings, cs.started)
					}
				default:
					if sampled.samplings != 1 {
						t.Errorf("sampler made %d times for one prepared target, want once", sampled.samplings)
					}
					if runs := 2 * 2 * roundsRun; cs.started != runs || cs.stopped != runs || len(recordings) != runs {
						t.Errorf("%d fio runs: %d recordings started, %d stopped, %d distinct on results", runs, cs.started, cs.stopped, len(recordings))
					}
				}
			})
		}
	}
}

// A runner whose telemetry fails this time (an SSH host whose counters
// cannot be streamed) is said so once, by target, and its results stand
// without telemetry.
func TestTelemetryFailureIsSaid(t *testing.T) {
	st, s, raw := setup(t)
	failing := &fakeTarget{name: "far", cmder: newFakeFio(&fiotest.Fio{JSON: raw}), samplerErr: errors.New("streaming the counters of far: no counters from the host in 10s")}
	n := &notes{}
	run, err := (&Engine{Store: st, Observer: n}).Run(context.Background(), Plan{Suite: s, Targets: []runner.Target{failing}, Telemetry: true})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(res) != 2 {
		t.Fatalf("%d results, %v", len(res), err)
	}
	for _, r := range res {
		if r.Status != result.StatusComplete || r.Telemetry != nil {
			t.Errorf("%s: %s, telemetry %+v", r.Workload, r.Status, r.Telemetry)
		}
	}
	said := 0
	for _, m := range n.messages {
		if strings.HasPrefix(m, "far: no telemetry: streaming the counters of far: no counters from the host in 10s;") {
			said++
		}
	}
	if said != 1 || failing.samplings != 1 {
		t.Errorf("said %d times (%d attempts) in %q", said, failing.samplings, n.messages)
	}
}

// TestLabelsAreMergedOnceForEveryRound: each result carries fio's version,
// the target's kind and labels and the plan's labels (which win), whatever
// the round; the run takes the host labels of the first target in the
// plan, even when targets are prepared at once.
func TestLabelsAreMergedOnceForEveryRound(t *testing.T) {
	for name, rs := range map[string][]string{"isolated": nil, "isolated+parallel": {result.RoundIsolated, result.RoundParallel}} {
		t.Run(name, func(t *testing.T) {
			st, s, raw := setup(t)
			var targets []runner.Target
			for i := 1; i <= 3; i++ {
				n := strconv.Itoa(i)
				targets = append(targets, &fakeTarget{name: "t" + n, cmder: newFakeFio(&fiotest.Fio{JSON: raw}),
					labels: map[string]string{string(result.LabelHostname): "host" + n, string(result.LabelDevice): "fake" + n, "storage": "runner's"}})
			}
			plan := Plan{Suite: s, Targets: targets, Rounds: rs, Labels: map[string]string{"storage": "user's"}}
			run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), plan)
			if err != nil {
				t.Fatal(err)
			}
			if got := result.LabelHostname.Of(run.Labels); got != "host1" {
				t.Errorf("run hostname %q, want the first target's host1", got)
			}
			res, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range res {
				n := r.Target[1:]
				if result.LabelFioVersion.Of(r.Labels) != "fio-3.33" || result.LabelTargetKind.Of(r.Labels) != "fake" ||
					result.LabelDevice.Of(r.Labels) != "fake"+n || result.LabelHostname.Of(r.Labels) != "host"+n || r.Labels["storage"] != "user's" ||
					result.LabelInFlight.Of(r.Labels) != "16" { // the recorded job's libaio at iodepth 16
					t.Errorf("%s %s %s: labels %v", r.Target, r.Round, r.Workload, r.Labels)
				}
			}
		})
	}
}

// TestRawJobJudgedAndRunInEveryRound: with targets prepared at once, a
// user's job file is judged on each target and written into its work
// directory before any round runs it, as for a target run alone: a job
// that would run a command is refused before fio runs anything, and a safe
// one runs in the isolated and the parallel round.
func TestRawJobJudgedAndRunInEveryRound(t *testing.T) {
	testenv.Fio(t)
	marker := filepath.Join(t.TempDir(), "ran")
	cases := []struct {
		name, job, refusal string
	}{
		{"safe", "[r]\nrw=randread\nbs=4k\nsize=1m\nioengine=psync\n", ""},
		{"runs a command", "[r]\nrw=randread\nbs=4k\nsize=1m\nioengine=psync\nexec_prerun=touch " + marker + "\n", "storbench refuses it"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "job.fio")
			if err := os.WriteFile(path, []byte(tc.job), 0o644); err != nil {
				t.Fatal(err)
			}
			jf, err := fio.ReadJobFile(path, fio.ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := openStore(t)
			dirs := []string{t.TempDir(), t.TempDir()}
			var targets []runner.Target
			for _, d := range dirs {
				targets = append(targets, local.NewTarget(d, local.Options{}))
			}
			run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{
				RawJob: &RawJob{Path: path, File: jf}, Targets: targets, Rounds: []string{result.RoundIsolated, result.RoundParallel}})
			res, rerr := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
			if rerr != nil {
				t.Fatal(rerr)
			}
			if len(res) != 4 {
				t.Fatalf("%d results, want one per target and round", len(res))
			}
			for _, r := range res {
				switch {
				case tc.refusal == "" && r.Status != result.StatusComplete:
					t.Errorf("%s %s: %s %s", r.Target, r.Round, r.Status, r.Error)
				case tc.refusal != "" && (r.Status != result.StatusFailed || !strings.Contains(r.Error, tc.refusal)):
					t.Errorf("%s %s: %s %q, want a refusal saying %q", r.Target, r.Round, r.Status, r.Error, tc.refusal)
				}
			}
			if tc.refusal != "" && (err == nil || !strings.Contains(err.Error(), tc.refusal)) {
				t.Errorf("run error %v, want a refusal", err)
			}
			if tc.refusal == "" && err != nil {
				t.Error(err)
			}
			if _, err := os.Stat(marker); err == nil {
				t.Error("fio ran the job's command")
			}
			for _, d := range dirs {
				if entries, _ := os.ReadDir(d); len(entries) != 0 {
					t.Errorf("%s: left behind %v", d, entries)
				}
			}
		})
	}
}

// TestUserFactReplacesRunnersSource: replication facts the user gives win
// over the runner's reading, and the runner's note of where it read them
// goes with it; facts the user leaves alone keep theirs.
func TestUserFactReplacesRunnersSource(t *testing.T) {
	p := &runner.Prepared{Kind: "kubernetes", Labels: map[string]string{
		"replica_nodes": "kube-3", "replica_nodes_source": "the PV's server 10.0.0.3 is node kube-3's InternalIP",
		"replicas": "3", "replicas_source": "CephBlockPool rook-ceph/replicapool spec.replicated.size"}}
	got := targetLabels(Plan{Labels: map[string]string{"replica_nodes": "kube-2,kube-3"}}, p, "fio-3.33")
	if got["replica_nodes"] != "kube-2,kube-3" || got["replica_nodes_source"] != "" {
		t.Errorf("user's replica nodes: %v", got)
	}
	if got["replicas"] != "3" || got["replicas_source"] == "" {
		t.Errorf("the runner's replicas and their source: %v", got)
	}
}
