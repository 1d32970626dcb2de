package storbench

import (
	"context"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

func TestSweepRequest(t *testing.T) {
	tests := []struct {
		name     string
		edit     func(r *RunRequest)
		workload string // want, or "" for an error
		clients  []int
		size     int64
		err      string
	}{
		{name: "default workload", edit: func(r *RunRequest) { r.Sweep.Clients = "1,2,4,8" }, workload: DefaultSweepWorkload, clients: []int{1, 2, 4, 8}},
		{name: "auto, chosen workload, max size", edit: func(r *RunRequest) {
			r.Sweep = SweepRequest{Clients: "auto", MaxSize: "64MiB"}
			r.Workloads = []string{"rand-write-4k-qd1"}
		}, workload: "rand-write-4k-qd1", size: 64 << 20},
		{name: "suite of many", edit: func(r *RunRequest) { r.Sweep.Clients, r.Suite = "auto", "quick" }, err: "choose one with Workloads"},
		{name: "not counts", edit: func(r *RunRequest) { r.Sweep.Clients = "1,two" }, err: "Sweep.Clients 1,two: give client counts"},
		{name: "shrinking", edit: func(r *RunRequest) { r.Sweep.Clients = "4,2" }, err: "steps must grow"},
		{name: "max size without a sweep", edit: func(r *RunRequest) { r.Sweep.MaxSize = "1GiB" }, err: "Sweep.MaxSize belongs to the sweep: add Sweep.Clients 1,2,4,8"},
		{name: "bad size", edit: func(r *RunRequest) { r.Sweep = SweepRequest{Clients: "auto", MaxSize: "lots"} }, err: "Sweep.MaxSize lots"},
		{name: "with the contention round", edit: func(r *RunRequest) { r.Sweep.Clients, r.Round = "auto", "contention" }, err: "an experiment of its own"},
		{name: "after the network round", edit: func(r *RunRequest) {
			r.Sweep.Clients, r.Rounds, r.Targets = "1,2", []string{"network"}, []string{"k8s:netfs"}
		}, workload: DefaultSweepWorkload, clients: []int{1, 2}},
		{name: "with the parallel round", edit: func(r *RunRequest) { r.Sweep.Clients, r.Rounds = "auto", []string{"isolated", "parallel"} },
			err: "an experiment of its own"},
		{name: "with repeats", edit: func(r *RunRequest) { r.Sweep.Clients, r.Repeat = "auto", 3 }, err: "runs each step once"},
		{name: "on Kubernetes", edit: func(r *RunRequest) { r.Sweep.Clients, r.Targets = "1,2,4", []string{"k8s:longhorn"} },
			workload: DefaultSweepWorkload, clients: []int{1, 2, 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := planOrRefusal(t, request(tt.edit), tt.err)
			if p == nil {
				return
			}
			s := p.plan.Sweep
			if s == nil || p.plan.Suite != nil || p.plan.Round != engine.RoundSweep || s.Workload.Name != tt.workload ||
				!slices.Equal(s.Clients, tt.clients) || s.ClientSize != tt.size {
				t.Errorf("plan %+v, sweep %+v", p.plan, s)
			}
		})
	}
}

// TestRunSweep sweeps 1 and 2 clients through Run with real fio: the
// outcome holds both steps and their knee's reading.
func TestRunSweep(t *testing.T) {
	if testing.Short() {
		t.Skip("runs fio")
	}
	testenv.Fio(t)
	target := t.TempDir()
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	req := DefaultRunRequest()
	req.Suite, req.Workloads, req.Targets, req.Telemetry = "testdata/run-tiny.yaml", []string{"rr"}, []string{target}, false
	req.Sweep.Clients = "1,2"
	r, err := Run(context.Background(), st, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left := entries(t, target); len(left) > 0 {
		t.Errorf("the sweep left %v in the target", left)
	}
	o, err := LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Results) != 2 || o.Results[1].Round != result.SweepRound(2) || len(o.Sweeps) != 1 {
		t.Fatalf("outcome %+v", o)
	}
	v := o.Sweeps[0]
	if v.Workload != "rr" || len(v.Steps) != 2 || v.Steps[1].Clients != 2 || v.Steps[1].IOPS <= 0 || v.Knee.Summary == "" {
		t.Errorf("sweep %+v", v)
	}
}

// TestRunSweepSSH sweeps a directory on a host over SSH (a real sshd on
// 127.0.0.1): the clients run there, their logs are read back through the
// connection, and nothing is left behind.
func TestRunSweepSSH(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("runs sshd and fio")
	}
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	req := DefaultRunRequest()
	req.Suite, req.Workloads, req.Targets = "testdata/run-tiny.yaml", []string{"rr"}, []string{sshURL(t, servers[0], dir)}
	req.Sweep.Clients = "1,2,4"
	r, err := Run(context.Background(), st, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("the sweep left %v on the host", left)
	}
	o, err := LoadRunOutcome(context.Background(), st, r)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.Sweeps) != 1 || len(o.Sweeps[0].Steps) != 3 {
		t.Fatalf("sweeps %+v", o.Sweeps)
	}
	for i, s := range o.Sweeps[0].Steps {
		window, _ := strconv.ParseFloat(result.LabelSweepWindow.Of(o.Results[i].Labels), 64)
		if s.Unusable != "" || s.IOPS <= 0 || s.P99 <= 0 || window <= 0 {
			t.Errorf("step %+v, window %v ms", s, window)
		}
	}
}
