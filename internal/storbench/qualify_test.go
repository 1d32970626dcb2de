package storbench_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// etcdResult is an etcd-fdatasync result with the given p99 sync latency.
func etcdResult(target string, p99 time.Duration) result.Result {
	return result.Result{Target: target, Round: result.RoundIsolated, Repetition: 1, Workload: "etcd-fdatasync",
		Status: result.StatusComplete, Labels: map[string]string{result.LabelHostname.String(): "lab"},
		Write: &result.Direction{IOPS: 400, BytesPerSec: 400 * 2300, TotalIOs: 10000},
		Sync:  &result.Latency{Samples: 10000, Percentiles: []result.Percentile{{P: 99, Value: p99}}}}
}

func TestQualifyStoredRuns(t *testing.T) {
	st := sqliteStore(t)
	ctx := context.Background()
	for i, tt := range []struct {
		p99  time.Duration
		want analysis.Status
	}{
		{4 * time.Millisecond, analysis.Pass},
		{15 * time.Millisecond, analysis.Warn},
		{30 * time.Millisecond, analysis.Fail},
	} {
		t.Run(string(tt.want), func(t *testing.T) {
			id := storeRun(t, st, result.Run{ID: "etcd-" + string(tt.want), Started: started.Add(time.Duration(i) * time.Hour)},
				[]result.Result{etcdResult("/var/lib/etcd", tt.p99)})
			q, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForEtcd, RunIDs: []string{id}, Repeat: 1})
			if err != nil {
				t.Fatal(err)
			}
			if q.Verdict.Status != tt.want || q.Verdict.For != analysis.ForEtcd || len(q.Runs) != 1 || q.Runs[0].ID != id || q.Measured != "" || q.Failed != nil {
				t.Errorf("qualification = %+v, verdict %+v", q, q.Verdict)
			}
		})
	}

	// ceph-osd sizes block.db from the device size given.
	sync := result.Result{Target: "/dev/sdb", Round: result.RoundIsolated, Repetition: 1, Workload: "sync-write-4k-qd1",
		Status: result.StatusComplete, Write: &result.Direction{IOPS: 1800, BytesPerSec: 1800 * 4096, TotalIOs: 54000}}
	seq := result.Result{Target: "/dev/sdb", Round: result.RoundIsolated, Repetition: 1, Workload: "seq-write-4m",
		Status: result.StatusComplete, Write: &result.Direction{IOPS: 100, BytesPerSec: 420e6, TotalIOs: 256}}
	id := storeRun(t, st, result.Run{ID: "ceph", Started: started}, []result.Result{seq, sync})
	q, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForCephOSD, RunIDs: []string{id}, Repeat: 1, DeviceSize: "1TB"})
	if err != nil {
		t.Fatal(err)
	}
	if advice := strings.Join(q.Verdict.Advice, "\n"); q.Verdict.Status != analysis.Warn || !strings.Contains(advice, "9.3 GiB-18.6 GiB for RBD") {
		t.Errorf("ceph-osd: %s, advice:\n%s", q.Verdict.Status, advice)
	}
}

func TestQualifyBadRequests(t *testing.T) {
	st := sqliteStore(t)
	id := storeRun(t, st, result.Run{ID: "etcd", Started: started}, []result.Result{etcdResult("/var/lib/etcd", time.Millisecond)})
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		req  storbench.QualifyRequest
		want string
	}{
		{"no verdict", storbench.QualifyRequest{RunIDs: []string{id}, Repeat: 1}, "For is required"},
		{"unknown verdict", storbench.QualifyRequest{For: "zfs", RunIDs: []string{id}, Repeat: 1}, `For "zfs"`},
		{"nothing to judge", storbench.QualifyRequest{For: "etcd", Repeat: 1}, "name stored runs"},
		{"runs and targets", storbench.QualifyRequest{For: "etcd", RunIDs: []string{id}, Targets: []string{dir}, Repeat: 1}, "not both"},
		{"run options without a target", storbench.QualifyRequest{For: "etcd", RunIDs: []string{id}, Repeat: 1, Suite: "quick"}, "apply to Targets runs only"},
		{"no repetition", storbench.QualifyRequest{For: "etcd", Targets: []string{dir}}, "Repeat 0"},
		{"bad device size", storbench.QualifyRequest{For: "ceph-osd", RunIDs: []string{id}, Repeat: 1, DeviceSize: "big"}, `DeviceSize "big"`},
		{"device size too large", storbench.QualifyRequest{For: "ceph-osd", RunIDs: []string{id}, Repeat: 1, DeviceSize: "9999999TiB"}, "too large"},
		{"missing measurements", storbench.QualifyRequest{For: "pi-score", RunIDs: []string{id}, Repeat: 1}, "run the pi suite"},
		{"unknown run", storbench.QualifyRequest{For: "etcd", RunIDs: []string{"19990101"}, Repeat: 1}, "not found"},
		{"unknown suite", storbench.QualifyRequest{For: "etcd", Targets: []string{dir}, Repeat: 1, Suite: "no-such-suite"}, "no-such-suite"},
		{"a target twice", storbench.QualifyRequest{For: "etcd", Targets: []string{dir, dir}, Repeat: 1}, "given twice"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			q, err := storbench.Qualify(context.Background(), st, tt.req)
			var req *storbench.RequestError
			if !errors.As(err, &req) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want a RequestError saying %q", err, tt.want)
			}
			if q != nil && q.Measured != "" {
				t.Errorf("a refused request stored run %s", q.Measured)
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("refused requests left files in the target: %v", entries)
	}
}

// workloads records the workloads an engine run reports finished.
type workloads struct {
	storbench.Silent
	mu       sync.Mutex
	started  []string
	finished []result.Status
}

func (w *workloads) RunStarted(r *result.Run) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.started = append(w.started, r.ID)
}
func (w *workloads) WorkloadFinished(_ engine.Step, r *result.Result) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.finished = append(w.finished, r.Status)
}

// TestQualifyMeasures runs the etcd workload with real fio on a temporary
// directory (2 MiB, see testdata), stores the run and judges it.
func TestQualifyMeasures(t *testing.T) {
	testenv.Fio(t)
	st := sqliteStore(t)
	target := filepath.Join(t.TempDir(), "etcd")
	if err := os.Mkdir(target, 0o755); err != nil {
		t.Fatal(err)
	}
	obs := &workloads{}
	ctx := context.Background()
	q, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForEtcd, Targets: []string{target}, Repeat: 1,
		Suite: "testdata/etcd-small.yaml", Labels: map[string]string{"storage": "tmp"}, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	if q.Measured == "" || q.Failed != nil || len(q.Runs) != 1 || q.Runs[0].ID != q.Measured {
		t.Fatalf("qualification = %+v", q)
	}
	if len(q.Verdict.Checks) != 2 || q.Verdict.Checks[0].Subject != target {
		t.Errorf("verdict = %+v", q.Verdict)
	}
	if len(obs.started) != 1 || obs.started[0] != q.Measured || len(obs.finished) != 1 || obs.finished[0] != result.StatusComplete {
		t.Errorf("observer heard runs %v, workloads %v", obs.started, obs.finished)
	}
	// The run is stored with its labels, and judging it again agrees.
	rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{q.Measured}})
	if err != nil || len(rs) != 1 || rs[0].Labels["storage"] != "tmp" {
		t.Errorf("stored results %+v, %v", rs, err)
	}
	again, err := storbench.Qualify(ctx, st, storbench.QualifyRequest{For: analysis.ForEtcd, RunIDs: []string{q.Measured}, Repeat: 1})
	if err != nil || again.Verdict.Status != q.Verdict.Status {
		t.Errorf("judged again: %+v, %v; live %s", again, err, q.Verdict.Status)
	}
	if left, _ := filepath.Glob(filepath.Join(target, "*")); len(left) != 0 {
		t.Errorf("test files left behind: %v", left)
	}
}
