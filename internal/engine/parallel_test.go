package engine

import (
	"context"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"

	"github.com/storbench/storbench/internal/fio/fiotest"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

func TestParallelRoundRealFio(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	st, _, _ := setup(t)
	s, err := spec.Parse([]byte("name: one\nworkloads:\n  - {name: w, rw: randwrite, bs: 4KiB, size: 4MiB, runtime: 1s, ioengine: psync}\n"), "one.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var targets []runner.Target
	for range 3 {
		targets = append(targets, local.NewTarget(t.TempDir(), local.Options{}))
	}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{
		Suite: s, Targets: targets, Rounds: []string{result.RoundIsolated, result.RoundParallel}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	byRound := map[string][]result.Result{}
	for _, r := range res {
		if r.Status != result.StatusComplete {
			t.Errorf("%s %s: %s", r.Round, r.Target, r.Error)
		}
		byRound[r.Round] = append(byRound[r.Round], r)
	}
	if len(byRound[result.RoundIsolated]) != 3 || len(byRound[result.RoundParallel]) != 3 {
		t.Fatalf("results per round: isolated %d, parallel %d", len(byRound[result.RoundIsolated]), len(byRound[result.RoundParallel]))
	}
	if overlap(byRound[result.RoundIsolated]) {
		t.Error("isolated results overlap in time")
	}
	par := byRound[result.RoundParallel]
	if !overlap(par) {
		t.Error("parallel results did not run at the same time")
	}
	for _, r := range par {
		skew, err := strconv.ParseFloat(result.LabelStartSkew.Of(r.Labels), 64)
		if err != nil || skew < 0 || skew > 1000 {
			t.Errorf("%s: start skew %q ms", r.Target, result.LabelStartSkew.Of(r.Labels))
		}
		if result.LabelParallelTargets.Of(r.Labels) != "3" {
			t.Errorf("%s: parallel_targets %q", r.Target, result.LabelParallelTargets.Of(r.Labels))
		}
	}
	for _, r := range byRound[result.RoundIsolated] {
		if _, set := result.LabelStartSkew.In(r.Labels); set {
			t.Errorf("isolated result carries a start skew")
		}
	}
}

// overlap reports whether all results' time spans share a common moment.
func overlap(rs []result.Result) bool {
	var lastStart, firstEnd time.Time
	for _, r := range rs {
		if r.Started.After(lastStart) {
			lastStart = r.Started
		}
		if firstEnd.IsZero() || r.Finished.Before(firstEnd) {
			firstEnd = r.Finished
		}
	}
	return lastStart.Before(firstEnd)
}

func TestParallelTargetThatFailsToPrepare(t *testing.T) {
	st, s, raw := setup(t)
	ok1, ok2 := &fakeTarget{name: "ok1", cmder: newFakeFio(&fiotest.Fio{JSON: raw})}, &fakeTarget{name: "ok2", cmder: newFakeFio(&fiotest.Fio{JSON: raw})}
	bad := &fakeTarget{name: "bad", prepareErr: errors.New("PVC not bound within 5m0s: FailedScheduling")}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), Plan{
		Suite: s, Targets: []runner.Target{ok1, bad, ok2}, Rounds: []string{result.RoundIsolated, result.RoundParallel}})
	if !errors.Is(err, ErrWorkloadFailed) || run.Status != result.StatusFailed {
		t.Fatalf("err %v, status %s", err, run.Status)
	}
	res, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, r := range res {
		count[r.Target+"/"+r.Round+"/"+string(r.Status)]++
	}
	for _, round := range []string{result.RoundIsolated, result.RoundParallel} {
		if count["ok1/"+round+"/complete"] != 2 || count["ok2/"+round+"/complete"] != 2 || count["bad/"+round+"/failed"] != 2 {
			t.Errorf("round %s: %v", round, count)
		}
	}
	if ok1.cleanups != 1 || ok2.cleanups != 1 {
		t.Errorf("cleanups: %d %d", ok1.cleanups, ok2.cleanups)
	}
}

func TestStartSkew(t *testing.T) {
	base := time.UnixMilli(1_795_000_000_000)
	doc := func(endMS, runtimeMS int64) []byte {
		return []byte(`{"timestamp_ms": ` + strconv.FormatInt(endMS, 10) + `, "jobs": [{"job_runtime": ` + strconv.FormatInt(runtimeMS, 10) + `}]}`)
	}
	cases := []struct {
		name    string
		results []*result.Result
		ioEnds  map[string]time.Time
		want    time.Duration
		ok      bool
	}{
		{"from the end line: fio's report late by the I/O engine's close", []*result.Result{
			{Target: "a", RawFioJSON: doc(base.UnixMilli()+1000, 1000)},
			{Target: "gfapi", RawFioJSON: doc(base.UnixMilli()+6000, 1000)},
		}, map[string]time.Time{"a": base.Add(1000 * time.Millisecond), "gfapi": base.Add(1020 * time.Millisecond)}, 20 * time.Millisecond, true},
		{"the end line where said, fio's clock elsewhere", []*result.Result{
			{Target: "a", RawFioJSON: doc(base.UnixMilli()+1000, 1000)},
			{Target: "b", RawFioJSON: doc(base.UnixMilli()+1300, 1000)},
		}, map[string]time.Time{"a": base.Add(1100 * time.Millisecond)}, 200 * time.Millisecond, true},
		{"from fio's clock", []*result.Result{
			{Target: "a", RawFioJSON: doc(base.UnixMilli()+1000, 1000), Started: base.Add(-time.Second)},
			{Target: "b", RawFioJSON: doc(base.UnixMilli()+1040, 1000), Started: base},
		}, nil, 40 * time.Millisecond, true},
		{"from storbench's clock without fio's", []*result.Result{
			{Target: "a", Started: base, Status: result.StatusComplete},
			{Target: "b", Started: base.Add(15 * time.Millisecond), Status: result.StatusComplete},
		}, nil, 15 * time.Millisecond, true},
		{"failed results are left out", []*result.Result{
			{Target: "a", RawFioJSON: doc(base.UnixMilli()+1000, 1000)},
			{Target: "b", Started: base.Add(time.Hour), Status: result.StatusFailed},
		}, nil, 0, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, _, ok := startSkew(tc.results, tc.ioEnds)
			if got != tc.want || ok != tc.ok {
				t.Errorf("got %s %v, want %s %v", got, ok, tc.want, tc.ok)
			}
		})
	}
}

// The parallel round checks each result as the isolated round does: a
// read whose span fits in memory is flagged on every target, and the CPU
// idle share is recorded where telemetry ran.
func TestParallelRoundChecks(t *testing.T) {
	testenv.Fio(t)
	labels := map[string]string{}
	result.LabelMemBytes.Set(labels, strconv.Itoa(64<<20))
	s := suiteOf(t, "name: t\nworkloads:\n  - {name: rr, rw: randread, bs: 4KiB, size: 8MiB, runtime: 1s, ioengine: psync}\n")
	rs, _ := runPlan(t, Plan{Suite: s, Labels: labels, Telemetry: true, Rounds: []string{result.RoundIsolated, result.RoundParallel},
		Targets: []runner.Target{local.NewTarget(t.TempDir(), local.Options{}), local.NewTarget(t.TempDir(), local.Options{})}})
	per := map[string]int{}
	for _, r := range rs {
		per[r.Round]++
		if r.CacheRisk == nil || r.CacheRisk.SpanBytes != 8<<20 || result.LabelCacheRisk.Of(r.Labels) == "" {
			t.Errorf("%s %s: cache risk %+v, label %q", r.Round, r.Target, r.CacheRisk, result.LabelCacheRisk.Of(r.Labels))
		}
		if idle, err := strconv.ParseFloat(result.LabelCPUIdle.Of(r.Labels), 64); err != nil || idle < 0 || idle > 100 {
			t.Errorf("%s %s: cpu idle label %q", r.Round, r.Target, result.LabelCPUIdle.Of(r.Labels))
		}
	}
	if per[result.RoundIsolated] != 2 || per[result.RoundParallel] != 2 {
		t.Errorf("results per round %v", per)
	}
	// --defeat-cache: the read sized beyond the memory, the page cache
	// dropped before it on every target, nothing flagged in either round.
	if got := s.DefeatCache(80 << 20); len(got) != 1 {
		t.Fatalf("resized %v", got)
	}
	rs, notices := runPlan(t, Plan{Suite: s, Labels: labels, Measurement: Measurement{DropCaches: true},
		Rounds:  []string{result.RoundIsolated, result.RoundParallel},
		Targets: []runner.Target{local.NewTarget(t.TempDir(), local.Options{}), local.NewTarget(t.TempDir(), local.Options{})}})
	if len(rs) != 4 {
		t.Fatalf("%d results, want 4", len(rs))
	}
	for _, r := range rs {
		if r.Status != result.StatusComplete || r.CacheRisk != nil || result.LabelCacheRisk.Of(r.Labels) != "" {
			t.Errorf("%s %s: %s, flagged after --defeat-cache: %+v (notices %v)", r.Round, r.Target, r.Status, r.CacheRisk, notices)
		}
	}
}
