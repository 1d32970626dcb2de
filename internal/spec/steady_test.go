package spec

import (
	"strings"
	"testing"
	"time"
)

func TestSteadyStateDefaultsAndInheritance(t *testing.T) {
	s, err := Parse([]byte(`name: t
defaults:
  steady_state: {metric: bw, slope: 1%}
workloads:
  - name: a
    rw: read
    bs: 1MiB
  - name: b
    rw: read
    bs: 1MiB
    steady_state: {deviation: 10%, window: 60s, interval: 5s}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	a, b := s.Workloads[0].SteadyState, s.Workloads[1].SteadyState
	if a.Criterion() != "bw_slope:1%" || time.Duration(a.Window) != 10*time.Second || time.Duration(a.MaxRuntime) != 5*time.Minute {
		t.Errorf("a: %+v %s", a, a.Criterion())
	}
	if b.Criterion() != "iops:10%" || time.Duration(b.Interval) != 5*time.Second {
		t.Errorf("b: %+v %s", b, b.Criterion())
	}
}

func TestMeasurementOptionErrors(t *testing.T) {
	cases := map[string]string{
		"steady_state: {metric: lat}":               "t.yaml:7: workloads[0].steady_state.metric: \"lat\" is not a steady-state measure",
		"steady_state: {slope: 1%, deviation: 2%}":  "steady_state.slope: set slope or deviation, not both",
		"steady_state: {slope: 200%}":               "limits are percentages",
		"steady_state: {window: 1500ms}":            "whole seconds",
		"steady_state: {window: 20s, interval: 3s}": "whole number of intervals",
		"steady_state: {max_runtime: 10s}":          "leaves no time for a 2s ramp and a 10s window",
		"steady_state: {slope: lots}":               "\"lots\" is not a percentage",
		"steady_state: {}\n    time_based: false":   "steady_state needs a time-based workload",
		"time_based: false":                         "set runtime as well",
		"bw_log: 10ms":                              "too short an averaging period",
	}
	for opt, want := range cases {
		_, err := Parse([]byte("name: t\nworkloads:\n  - name: a\n    rw: write\n    bs: 1MiB\n    size: 1GiB\n    "+opt+"\n"), "t.yaml")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want %q", opt, err, want)
		}
	}
}

func TestSustainedSuite(t *testing.T) {
	s, err := Builtin("sustained")
	if err != nil {
		t.Fatal(err)
	}
	s.UntilStable(SteadyState{})
	if s.Workloads[0].SteadyState != nil {
		t.Error("--until-stable would end the sustained write once it settles, before its cliff")
	}
	w := s.Workloads[0]
	if w.RW != "write" || *w.TimeBased || time.Duration(w.BandwidthLog) != time.Second || w.FileSize != 64<<30 || time.Duration(w.Runtime) != 10*time.Minute {
		t.Errorf("sustained: %+v", w)
	}
}

func TestCacheProneAndResizing(t *testing.T) {
	s, err := Parse([]byte(`name: t
defaults: {size: 1GiB}
workloads:
  - {name: rr, rw: randread, bs: 4KiB, runtime: 10s}
  - {name: mix, rw: randrw, bs: 4KiB, runtime: 10s}
  - {name: dw, rw: write, bs: 1MiB, runtime: 10s}
  - {name: bw, rw: write, bs: 1MiB, direct: false, runtime: 10s}
  - {name: bws, rw: write, bs: 4KiB, direct: false, fdatasync: 1, runtime: 10s}
  - {name: sized, rw: read, bs: 1MiB, direct: false}
`), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"rr": true, "mix": true, "dw": false, "bw": true, "bws": false, "sized": true}
	for _, w := range s.Workloads {
		if w.CacheProne() != want[w.Name] {
			t.Errorf("%s: cache-prone %v", w.Name, w.CacheProne())
		}
	}
	got := s.DefeatCache(8 << 30)
	if strings.Join(got, ",") != "rr,mix,bw" {
		t.Errorf("resized %v", got)
	}
	if w, _ := s.Workload("rr"); w.FileSize != 8<<30 {
		t.Errorf("rr size %s", w.FileSize)
	}
	if w, _ := s.Workload("sized"); w.FileSize != 1<<30 {
		t.Errorf("size-based workload resized to %s", w.FileSize)
	}
	s.UntilStable(SteadyState{Window: Duration(30 * time.Second)})
	if w, _ := s.Workload("dw"); w.SteadyState == nil || time.Duration(w.SteadyState.Window) != 30*time.Second || w.SteadyState.Metric != "iops" {
		t.Errorf("until stable: %+v", w.SteadyState)
	}
}

// An unset window holds ten samples at least, and an unset limit lets the
// fitted line drift 10% of the mean across whatever window is set.
func TestSteadyStateDerivedDefaults(t *testing.T) {
	cases := []struct {
		in        SteadyState
		window    time.Duration
		criterion string
	}{
		{SteadyState{}, 10 * time.Second, "iops_slope:1%"},
		{SteadyState{Window: Duration(20 * time.Second)}, 20 * time.Second, "iops_slope:0.5%"},
		{SteadyState{Interval: Duration(5 * time.Second)}, 50 * time.Second, "iops_slope:1%"},
		{SteadyState{Interval: Duration(5 * time.Second), Window: Duration(60 * time.Second)}, 60 * time.Second, "iops_slope:0.833%"},
		{SteadyState{Window: Duration(20 * time.Second), Slope: 2}, 20 * time.Second, "iops_slope:2%"},
		{SteadyState{Metric: "bw", Deviation: 5}, 10 * time.Second, "bw:5%"},
	}
	for _, c := range cases {
		got := c.in.WithDefaults()
		if time.Duration(got.Window) != c.window || got.Criterion() != c.criterion {
			t.Errorf("%+v: window %s criterion %s, want %s %s", c.in, got.Window, got.Criterion(), c.window, c.criterion)
		}
	}
}
