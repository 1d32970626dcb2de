package analysis_test

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// diskDir is a directory on a real disk (not tmpfs) next to the test.
func diskDir(t *testing.T) string {
	t.Helper()
	var st unix.Statfs_t
	dir := t.TempDir()
	if unix.Statfs(dir, &st) == nil && st.Type != unix.TMPFS_MAGIC {
		return dir
	}
	dir, err := os.MkdirTemp(".", "real-test-")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(abs) })
	return abs
}

// ramDir is a directory on tmpfs: memory standing in for storage that
// answers from a cache and acknowledges writes it has not made durable.
func ramDir(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("/dev/shm", "storbench-test-")
	if err != nil {
		testenv.Missing(t, "tmpfs", "no /dev/shm: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// measure runs one workload on a directory through the engine and returns
// the stored figures.
func measure(t *testing.T, st *store.SQLite, dir, workloadYAML string, labels map[string]string, tel bool) []result.Figures {
	t.Helper()
	s, err := spec.Parse([]byte("name: t\nworkloads:\n  - "+workloadYAML+"\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	plan := engine.Plan{Suite: s, Labels: labels, Targets: []runner.Target{local.NewTarget(dir, local.Options{})}}
	plan.Telemetry = tel
	run, err := (&engine.Engine{Store: st, Observer: engine.Silent{}}).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	figs, err := st.Figures(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	return figs
}

func openStore(t *testing.T) *store.SQLite {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func rules(c *analysis.Comparison, rule string) []analysis.Sanity {
	var out []analysis.Sanity
	for _, s := range c.Sanity {
		if s.Rule == rule {
			out = append(out, s)
		}
	}
	return out
}

// Reads from memory (tmpfs, buffered) against direct reads from the local
// disk: the cache-answered rule fires for the memory-backed target.
func TestRealCacheAnswered(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	st := openStore(t)
	const w = "{name: rand-read-4k-qd1, rw: randread, bs: 4KiB, size: 32MiB, runtime: 2s, DIRECT}"
	figs := measure(t, st, diskDir(t), strings.Replace(w, "DIRECT", "direct: true", 1), map[string]string{"storage": "local"}, false)
	figs = append(figs, measure(t, st, ramDir(t), strings.Replace(w, "DIRECT", "direct: false", 1), map[string]string{"storage": "ram"}, false)...)
	c, err := analysis.Compare(figs, analysis.Options{Baseline: "storage=local"})
	if err != nil {
		t.Fatal(err)
	}
	got := rules(c, analysis.RuleCacheAnswered)
	if len(got) != 1 || got[0].Who != "ram" || !strings.Contains(got[0].Text, "a cache answered") {
		t.Fatalf("cache-answered: %+v (all %+v)", got, c.Sanity)
	}
}

// Synced writes on tmpfs, where fdatasync has nothing to wait for, against
// the local disk: the early-ack rule fires.
func TestRealEarlyAck(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	st := openStore(t)
	const w = "{name: rand-write-4k-qd1, rw: randwrite, bs: 4KiB, size: 32MiB, runtime: 2s, direct: false, fdatasync: 1, ioengine: sync}"
	figs := measure(t, st, diskDir(t), w, map[string]string{"storage": "local"}, false)
	figs = append(figs, measure(t, st, ramDir(t), w, map[string]string{"storage": "ram"}, false)...)
	c, err := analysis.Compare(figs, analysis.Options{Baseline: "storage=local"})
	if err != nil {
		t.Fatal(err)
	}
	got := rules(c, analysis.RuleEarlyAck)
	if len(got) != 1 || got[0].Who != "ram" || !strings.Contains(got[0].Text, "before they are durable") {
		t.Fatalf("early-ack: %+v (all %+v)", got, c.Sanity)
	}
}

// A QD1 latency workload measured while every core spins: the CPU-bound
// rule fires from the telemetry the engine recorded.
func TestRealCPUBound(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	st := openStore(t)
	var stop atomic.Bool
	for range runtime.NumCPU() + 1 {
		go func() {
			for !stop.Load() {
			}
		}()
	}
	figs := measure(t, st, diskDir(t), "{name: rand-read-4k-qd1, rw: randread, bs: 4KiB, size: 32MiB, runtime: 3s}", nil, true)
	stop.Store(true)
	if idle := result.LabelCPUIdle.Of(figs[0].Labels); idle == "" {
		t.Fatalf("no CPU idle recorded: labels %v", figs[0].Labels)
	}
	c, err := analysis.Compare(figs, analysis.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got := rules(c, analysis.RuleCPUBound); len(got) != 1 || !strings.Contains(got[0].Text, "measures the CPU") {
		t.Fatalf("cpu-bound: %+v, idle %s%%", c.Sanity, result.LabelCPUIdle.Of(figs[0].Labels))
	}
}
