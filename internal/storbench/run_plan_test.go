package storbench

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// request is the default request on /tmp, edited.
func request(edit func(r *RunRequest)) RunRequest {
	r := DefaultRunRequest()
	r.Targets = []string{"/tmp"}
	if edit != nil {
		edit(&r)
	}
	return r
}

// wantRefused checks err is a *RequestError saying want.
func wantRefused(t *testing.T, err error, want string) {
	t.Helper()
	var re *RequestError
	if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &re) {
		t.Fatalf("error %v, want a *RequestError with %q", err, want)
	}
}

// planOrRefusal builds the plan of r, or checks that r is refused with
// want and returns nil.
func planOrRefusal(t *testing.T, r RunRequest, want string) *runPlan {
	t.Helper()
	p, err := buildRunPlan(&r, false)
	if want != "" {
		wantRefused(t, err, want)
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// readJob is a small job file that reads.
func readJob(t *testing.T) string {
	t.Helper()
	job := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(job, []byte("[a]\nrw=read\nsize=1M\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return job
}

func TestRunRequestBasics(t *testing.T) {
	tests := []struct {
		name string
		edit func(r *RunRequest)
		err  string
	}{
		{"no target", func(r *RunRequest) { r.Targets = nil }, "no target: give Targets DIR or Targets /dev/DEVICE"},
		{"repeat zero", func(r *RunRequest) { r.Repeat = 0 }, "Repeat 0: must be at least 1"},
		{"target twice", func(r *RunRequest) { r.Targets = []string{"/tmp", "/tmp"} }, "Targets: /tmp is given twice"},
		{"unknown suite", func(r *RunRequest) { r.Suite = "no-such-suite" }, "no-such-suite"},
		{"unknown workload", func(r *RunRequest) { r.Suite, r.Workloads = "quick", []string{"nope"} }, "nope"},
		{"workloads of a job", func(r *RunRequest) { r.FioJob, r.Workloads = "x.fio", []string{"a"} }, "does not apply to FioJob"},
		{"missing job file", func(r *RunRequest) { r.FioJob = "testdata/none.fio" }, "none.fio"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := buildRunPlan(new(request(tt.edit)), false)
			wantRefused(t, err, tt.err)
		})
	}
	t.Run("suite and job", func(t *testing.T) {
		_, err := buildRunPlan(new(request(func(r *RunRequest) { r.Suite, r.FioJob = "quick", "x.fio" })), false)
		wantRefused(t, err, "Suite and FioJob are alternatives: give one")
	})
	t.Run("dry run of a suite", func(t *testing.T) {
		_, err := buildRunPlan(new(request(nil)), true)
		wantRefused(t, err, "DryRun applies to FioJob")
	})
}

// A caller's own suite runs as given and is never changed by the request.
func TestRunRequestSuiteSpec(t *testing.T) {
	own := request(func(r *RunRequest) { r.Suite = "quick" })
	p, err := buildRunPlan(&own, false)
	if err != nil {
		t.Fatal(err)
	}
	suite := *p.plan.Suite
	n := len(suite.Workloads)
	r := request(func(r *RunRequest) {
		r.SuiteSpec = &suite
		r.Workloads = []string{suite.Workloads[0].Name}
		r.Measure.UntilStable = true
	})
	p, err = buildRunPlan(&r, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.plan.Suite.Workloads) != 1 || p.plan.Suite.Workloads[0].SteadyState == nil {
		t.Errorf("plan suite %+v", p.plan.Suite.Workloads)
	}
	if len(suite.Workloads) != n || suite.Workloads[0].SteadyState != nil {
		t.Errorf("the caller's suite changed: %+v", suite.Workloads)
	}
}

func TestContentionRequest(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *RunRequest)
		probe string // want, or "" for an error
		err   string
	}{
		{"default probe", func(r *RunRequest) { r.Round = "contention" }, "etcd-fdatasync", ""},
		{"built-in workload", func(r *RunRequest) { r.Round, r.Probe = "contention", "rand-read-4k-qd1" }, "rand-read-4k-qd1", ""},
		{"suite of one", func(r *RunRequest) { r.Round, r.Probe = "contention", "etcd" }, "etcd-fdatasync", ""},
		{"workload of --suite", func(r *RunRequest) { r.Round, r.Suite, r.Probe = "contention", "quick", "seq-read" }, "seq-read", ""},
		{"unknown probe", func(r *RunRequest) { r.Round, r.Probe = "contention", "nope" }, "", "Probe nope: no built-in workload"},
		{"--suite with many workloads", func(r *RunRequest) { r.Round, r.Suite = "contention", "quick" }, "", "choose the probe with Probe"},
		{"probe without the round", func(r *RunRequest) { r.Probe = "etcd" }, "", "set Round contention"},
		{"unknown round", func(r *RunRequest) { r.Round = "chaos" }, "", `Round "chaos"`},
		{"noise target is a target", func(r *RunRequest) { r.Round, r.NoiseTarget = "contention", "/tmp" }, "", "is also in Targets"},
		{"workloads instead of a probe", func(r *RunRequest) { r.Round, r.Workloads = "contention", []string{"seq-read"} }, "", "choose it with Probe instead of Workloads"},
		{"noise size", func(r *RunRequest) { r.Round, r.NoiseSize = "contention", "256MiB" }, "etcd-fdatasync", ""},
		{"noise size not a size", func(r *RunRequest) { r.Round, r.NoiseSize = "contention", "big" }, "", `NoiseSize "big": give a size from 1MiB to 1TiB`},
		{"noise size under one write", func(r *RunRequest) { r.Round, r.NoiseSize = "contention", "4KiB" }, "", `NoiseSize "4KiB"`},
		{"noise size without the round", func(r *RunRequest) { r.NoiseSize = "256MiB" }, "", "NoiseSize belong to the contention round"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planOrRefusal(t, request(tt.edit), tt.err)
			if p == nil {
				return
			}
			plan := p.plan
			if plan.Contention == nil || plan.Contention.Probe.Name != tt.probe || plan.Suite != nil || plan.Round != result.RoundContention || !sampling(plan) {
				t.Errorf("plan %+v", plan)
			}
			if want := map[string]int64{"noise size": 256 << 20}[tt.name]; plan.Contention != nil && plan.Contention.NoiseSize != want {
				t.Errorf("noise size %d, want %d", plan.Contention.NoiseSize, want)
			}
		})
	}
	t.Run("fio job", func(t *testing.T) {
		job := readJob(t)
		_, err := buildRunPlan(new(request(func(r *RunRequest) { r.Round, r.FioJob = "contention", job })), false)
		wantRefused(t, err, "choose it with Probe instead of FioJob")
	})
}

// sampling reports whether the plan asks for telemetry, whatever the
// field's type (a sampler function, or a bool once runners supply their own).
func sampling(p *engine.Plan) bool { return !reflect.ValueOf(p.Telemetry).IsZero() }

func TestTelemetryOff(t *testing.T) {
	p, err := buildRunPlan(new(request(func(r *RunRequest) { r.Suite, r.Telemetry = "quick", false })), false)
	if err != nil || sampling(p.plan) || p.plan.Contention != nil {
		t.Errorf("plan %+v, %v", p, err)
	}
}

func TestMeasurementRequest(t *testing.T) {
	tests := []struct {
		name  string
		edit  func(r *RunRequest)
		err   string
		check func(t *testing.T, p *engine.Plan)
	}{
		{"repeat auto", func(r *RunRequest) {
			r.Measure.RepeatAuto, r.Measure.Precision, r.Measure.RepeatMax = true, new(2.5), new(20)
		}, "", func(t *testing.T, p *engine.Plan) {
			if a := p.Measurement.RepeatAuto; a == nil || a.Precision != 0.025 || a.Min != 3 || a.Max != 20 || p.Repeat != 1 {
				t.Errorf("repeat auto %+v, repeat %d", a, p.Repeat)
			}
		}},
		{"repeat count", func(r *RunRequest) { r.Repeat = 3 }, "", func(t *testing.T, p *engine.Plan) {
			if p.Repeat != 3 || p.Measurement.RepeatAuto != nil {
				t.Errorf("repeat %d %+v", p.Repeat, p.Measurement.RepeatAuto)
			}
		}},
		{"precision without auto", func(r *RunRequest) { r.Measure.Precision = new(3.0) }, "Measure.Precision belongs to Measure.RepeatAuto", nil},
		{"bad precision", func(r *RunRequest) { r.Measure.RepeatAuto, r.Measure.Precision = true, new(0.0) }, "between 0 and 100", nil},
		{"bad counts", func(r *RunRequest) { r.Measure.RepeatAuto, r.Measure.RepeatMin = true, new(1) }, "at least 2 runs", nil},
		{"until stable", func(r *RunRequest) {
			r.Measure.UntilStable, r.Measure.StableMax, r.Measure.StableInterval = true, new(2*time.Minute), new(2*time.Second)
		}, "", func(t *testing.T, p *engine.Plan) {
			for _, w := range p.Suite.Workloads {
				ss := w.SteadyState
				if ss == nil || time.Duration(ss.MaxRuntime) != 2*time.Minute || time.Duration(ss.Interval) != 2*time.Second ||
					time.Duration(ss.Window) != 20*time.Second || ss.Criterion() != "iops_slope:1%" {
					t.Errorf("%s: %+v", w.Name, ss)
				}
			}
		}},
		{"stable flags alone", func(r *RunRequest) { r.Measure.StableMax = new(2 * time.Minute) }, "belong to Measure.UntilStable", nil},
		{"odd interval", func(r *RunRequest) { r.Measure.UntilStable, r.Measure.StableInterval = true, new(700*time.Millisecond) }, "whole number of intervals", nil},
		{"short max", func(r *RunRequest) { r.Measure.UntilStable, r.Measure.StableMax = true, new(10*time.Second) }, "leaves no time", nil},
		{"defeat cache", func(r *RunRequest) {
			r.Measure.DefeatCache, r.Labels = true, map[string]string{string(result.LabelMemBytes): "1073741824"}
		}, "", func(t *testing.T, p *engine.Plan) {
			if !p.Measurement.DropCaches {
				t.Error("no page-cache drop")
			}
			for _, w := range p.Suite.Workloads {
				want := int64(1 << 30)
				if w.CacheProne() {
					want = 1280 << 20
				}
				if int64(w.FileSize) != want {
					t.Errorf("%s: size %s, want %d", w.Name, w.FileSize, want)
				}
			}
		}},
		{"defeat cache in the parallel round", func(r *RunRequest) {
			r.Measure.DefeatCache, r.Rounds = true, []string{"isolated", "parallel"}
			r.Labels = map[string]string{string(result.LabelMemBytes): "1073741824"}
		}, "", func(t *testing.T, p *engine.Plan) {
			if !p.Measurement.DropCaches || len(p.Rounds) != 2 {
				t.Errorf("drop caches %v, rounds %v", p.Measurement.DropCaches, p.Rounds)
			}
		}},
		{"defeat cache bad label", func(r *RunRequest) {
			r.Measure.DefeatCache, r.Labels = true, map[string]string{string(result.LabelMemBytes): "lots"}
		}, "Labels mem_bytes=lots: give the memory in bytes", nil},
		{"precondition needs destructive", func(r *RunRequest) { r.Measure.Precondition = true }, "needs Destructive", nil},
		{"precondition", func(r *RunRequest) { r.Measure.Precondition, r.Destructive = true, []string{"/dev/loop9"} }, "", func(t *testing.T, p *engine.Plan) {
			if !p.Measurement.Precondition {
				t.Error("precondition off")
			}
		}},
		{"auto in the contention round", func(r *RunRequest) { r.Measure.RepeatAuto, r.Round = true, "contention" }, "apply to the isolated round", nil},
		{"auto in the parallel round", func(r *RunRequest) { r.Measure.RepeatAuto, r.Rounds = true, []string{"parallel"} }, "apply to the isolated round", nil},
		{"precondition in the parallel round", func(r *RunRequest) { r.Measure.Precondition, r.Rounds = true, []string{"isolated", "parallel"} }, "apply to the isolated round", nil},
		{"defeat-cache in the contention round", func(r *RunRequest) { r.Measure.DefeatCache, r.Round = true, "contention" }, "no cache answers", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planOrRefusal(t, request(tt.edit), tt.err)
			if p == nil {
				return
			}
			tt.check(t, p.plan)
		})
	}
	t.Run("fio job", func(t *testing.T) {
		job := readJob(t)
		_, err := buildRunPlan(new(request(func(r *RunRequest) { r.Measure.UntilStable, r.FioJob = true, job })), false)
		wantRefused(t, err, "a FioJob runs as written")
	})
}

// --defeat-cache on Kubernetes targets sizes the suite beyond the nodes'
// memory, not this host's: a Pi node's 4 GiB, not the laptop's 32.
func TestDefeatCacheSizedForNodes(t *testing.T) {
	sizes := func(p *runPlan) map[string]int64 {
		out := map[string]int64{}
		for _, w := range p.plan.Suite.Workloads {
			if w.CacheProne() {
				out[w.Name] = int64(w.FileSize)
			}
		}
		return out
	}
	kubeOnly := func(r *RunRequest) { r.Targets, r.Measure.DefeatCache = []string{"k8s:longhorn"}, true }
	p := planOrRefusal(t, request(kubeOnly), "")
	before := sizes(p)
	if !p.defeatCache || p.localCache != 0 || !p.plan.Measurement.DropCaches || len(before) == 0 {
		t.Fatalf("kube-only plan: defeat later %v, local %d, drop %v, cache-prone %v", p.defeatCache, p.localCache, p.plan.Measurement.DropCaches, before)
	}
	note, err := p.sizeForCache([]runner.Memory{{Whose: "the largest node's memory", Bytes: 4 << 30}})
	if err != nil {
		t.Fatal(err)
	}
	for name, size := range sizes(p) {
		if size != 5<<30 {
			t.Errorf("%s: %d bytes, want 5 GiB (a quarter beyond the node's 4 GiB)", name, size)
		}
	}
	if !strings.Contains(note, "beyond the largest node's memory (4.0 GiB)") {
		t.Errorf("notice %q", note)
	}

	// Nodes whose memory cannot be read: refused, naming the way out.
	p = planOrRefusal(t, request(kubeOnly), "")
	_, err = p.sizeForCache([]runner.Memory{{Err: errors.New("the nodes' memory is unknown")}})
	wantRefused(t, err, "Labels mem_bytes=BYTES")

	// A local target too: the larger of this host's and the nodes' memory.
	p = planOrRefusal(t, request(func(r *RunRequest) {
		r.Targets, r.Measure.DefeatCache = []string{"/tmp", "k8s:longhorn"}, true
	}), "")
	if p.localCache <= 0 {
		t.Fatalf("this host's memory not read: %d", p.localCache)
	}
	note, err = p.sizeForCache([]runner.Memory{{Whose: "the largest node's memory", Bytes: 1 << 20}})
	if err != nil || !strings.Contains(note, "beyond this host's memory") {
		t.Errorf("notice %q, %v", note, err)
	}

	// A mem_bytes label decides at once, for every target.
	p = planOrRefusal(t, request(func(r *RunRequest) {
		kubeOnly(r)
		r.Labels = map[string]string{string(result.LabelMemBytes): "1073741824"}
	}), "")
	if p.defeatCache {
		t.Error("sizing postponed despite the mem_bytes label")
	}
	for name, size := range sizes(p) {
		if size < 1280<<20 {
			t.Errorf("%s: %d bytes with mem_bytes=1 GiB", name, size)
		}
	}

	// SSH hosts: sized once they are reached, by the largest host's
	// memory (hostMemory reads it; TestHostMemory).
	p = planOrRefusal(t, request(func(r *RunRequest) {
		r.Targets, r.Measure.DefeatCache = []string{"ssh://pi@pi1/srv", "ssh://pi@pi2/srv"}, true
	}), "")
	if !p.defeatCache || p.localCache != 0 {
		t.Fatalf("ssh-only plan: defeat later %v, local %d", p.defeatCache, p.localCache)
	}
	note, err = p.sizeForCache([]runner.Memory{{Whose: "pi1's memory", Bytes: 4 << 30}, {Whose: "pi2's memory", Bytes: 8 << 30}})
	if err != nil || !strings.Contains(note, "beyond pi2's memory (8.0 GiB)") {
		t.Errorf("notice %q, %v", note, err)
	}
	for name, size := range sizes(p) {
		if size != 10<<30 {
			t.Errorf("%s: %d bytes, want 10 GiB (a quarter beyond pi2's 8 GiB)", name, size)
		}
	}
	p = planOrRefusal(t, request(func(r *RunRequest) {
		r.Targets, r.Measure.DefeatCache = []string{"ssh://pi@pi1/srv"}, true
	}), "")
	_, err = p.sizeForCache([]runner.Memory{{Err: errors.New("reading the memory of pi1: exit code 1")}})
	wantRefused(t, err, "reading the memory of pi1: exit code 1: give Labels mem_bytes=BYTES")
}
