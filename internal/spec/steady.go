package spec

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// SteadyState asks fio to end a workload once its IOPS or bandwidth has
// settled (fio's ss, ss_dur, ss_ramp and, from fio 3.34, ss_interval), or
// at MaxRuntime if it never does. Unset fields take DefaultSteadyState's.
type SteadyState struct {
	// Metric is "iops" or "bw".
	Metric string `yaml:"metric,omitempty" json:"metric,omitempty"`
	// Slope is the largest slope of the least-squares line through the
	// window's samples, in percent of their mean per Interval (fio's
	// iops_slope:N% / bw_slope:N%). Deviation, when set instead, is the
	// largest distance of any sample from the mean, in percent (fio's
	// iops:N% / bw:N%).
	Slope     Percent `yaml:"slope,omitempty" json:"slope,omitempty"`
	Deviation Percent `yaml:"deviation,omitempty" json:"deviation,omitempty"`
	// Window is how long the criterion must hold (ss_dur).
	Window Duration `yaml:"window,omitempty" json:"window,omitempty"`
	// Ramp is ignored time at the start before samples count (ss_ramp).
	Ramp Duration `yaml:"ramp,omitempty" json:"ramp,omitempty"`
	// Interval is the sampling period (ss_interval, fio 3.34 or later):
	// longer on slow devices, so each sample holds enough I/Os.
	Interval Duration `yaml:"interval,omitempty" json:"interval,omitempty"`
	// MaxRuntime bounds the workload when steady state never comes.
	MaxRuntime Duration `yaml:"max_runtime,omitempty" json:"max_runtime,omitempty"`
}

// DefaultSteadyState is what --until-stable asks for: IOPS whose fitted line
// drifts by at most 10% of the mean across a window of ten samples (1% a
// sample; the slope-excursion rule of SNIA's PTS), 10 seconds at the default
// 1-second interval, once 2 seconds of ramp are over, for at most 5 minutes.
//
// The window is short on purpose. Run-to-run spread on real disks comes
// mostly from where a run lands (the file's placement, the host's caches,
// the controller's state), not from how long it runs: a settled 10-second
// window estimates a workload's IOPS as well as a 60-second run does, in a
// fraction of the time, and precision comes from --repeat auto, not from
// length. BENCHMARKS.md (issue 13) has the measurement.
var DefaultSteadyState = SteadyState{
	Metric:     "iops",
	Slope:      defaultDrift / defaultSamples,
	Window:     Duration(defaultSamples * time.Second),
	Ramp:       Duration(2 * time.Second),
	Interval:   Duration(time.Second),
	MaxRuntime: Duration(5 * time.Minute),
}

const (
	// defaultSamples is how many samples the default window holds.
	defaultSamples = 10
	// defaultDrift is the most, in percent of the mean, the default slope
	// lets the fitted line move across the window.
	defaultDrift = 10
)

// WithDefaults fills unset fields from DefaultSteadyState. A window left
// unset holds at least ten samples of the interval; a limit left unset is
// a slope that lets the fitted line drift 10% of the mean across the
// window, whatever its length.
func (s SteadyState) WithDefaults() SteadyState {
	d := DefaultSteadyState
	if s.Metric == "" {
		s.Metric = d.Metric
	}
	if s.Interval == 0 {
		s.Interval = d.Interval
	}
	if s.Window == 0 {
		s.Window = max(d.Window, Duration(defaultSamples)*s.Interval)
	}
	if s.Slope == 0 && s.Deviation == 0 {
		s.Slope = d.Slope
		if s.Interval > 0 && s.Window >= s.Interval {
			s.Slope = Percent(math.Round(defaultDrift/float64(s.Window/s.Interval)*1000) / 1000)
		}
	}
	if s.Ramp == 0 {
		s.Ramp = d.Ramp
	}
	if s.MaxRuntime == 0 {
		s.MaxRuntime = d.MaxRuntime
	}
	return s
}

// Criterion is fio's ss value: iops_slope:0.5%, bw:10%.
func (s SteadyState) Criterion() string {
	if s.Deviation > 0 {
		return fmt.Sprintf("%s:%s%%", s.Metric, trimFloat(float64(s.Deviation)))
	}
	return fmt.Sprintf("%s_slope:%s%%", s.Metric, trimFloat(float64(s.Slope)))
}

func (s SteadyState) check() (field, msg string) {
	switch {
	case s.Metric != "iops" && s.Metric != "bw":
		return "metric", fmt.Sprintf("%q is not a steady-state measure (iops or bw)", s.Metric)
	case s.Slope > 0 && s.Deviation > 0:
		return "slope", "set slope or deviation, not both"
	case s.Slope < 0 || s.Deviation < 0 || s.Slope > 100 || s.Deviation > 100:
		return "slope", "limits are percentages between 0 and 100"
	case s.Window <= 0 || s.Ramp < 0 || s.Interval <= 0 || s.MaxRuntime <= 0:
		return "window", "durations must be positive"
	case time.Duration(s.Window)%time.Second != 0 || time.Duration(s.Ramp)%time.Second != 0:
		return "window", "fio counts window and ramp in whole seconds"
	case time.Duration(s.Window)%time.Duration(s.Interval) != 0:
		return "interval", fmt.Sprintf("the window %s must be a whole number of intervals of %s", s.Window, s.Interval)
	case s.MaxRuntime < s.Window+s.Ramp:
		return "max_runtime", fmt.Sprintf("%s leaves no time for a %s ramp and a %s window", s.MaxRuntime, s.Ramp, s.Window)
	}
	return "", ""
}

// Percent is a percentage written as 2%, 0.5% or a bare number.
type Percent float64

// UnmarshalYAML accepts "2%", "0.5%" or 2.
func (p *Percent) UnmarshalYAML(n *yaml.Node) error {
	v, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(n.Value), "%")), 64)
	if err != nil {
		return fmt.Errorf("line %d: %q is not a percentage (examples: 2%%, 0.5%%)", n.Line, n.Value)
	}
	*p = Percent(v)
	return nil
}

// MarshalYAML writes the percentage with its sign.
func (p Percent) MarshalYAML() (any, error) { return trimFloat(float64(p)) + "%", nil }

func trimFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// checkMeasurement validates the options of steady state, time_based and
// the bandwidth log; fail locates the problem.
func (w Workload) checkMeasurement(fail func(field, msg string) error) error {
	if w.SteadyState != nil {
		if field, msg := w.SteadyState.check(); field != "" {
			return fail("steady_state."+field, msg)
		}
		if w.TimeBased != nil && !*w.TimeBased {
			return fail("time_based", "steady_state needs a time-based workload: drop time_based: false")
		}
	}
	if w.TimeBased != nil && !*w.TimeBased && w.Runtime == 0 {
		return fail("time_based", "time_based: false makes runtime a limit: set runtime as well")
	}
	if w.BandwidthLog < 0 || (w.BandwidthLog > 0 && time.Duration(w.BandwidthLog) < 100*time.Millisecond) {
		return fail("bw_log", fmt.Sprintf("%s is too short an averaging period (at least 100ms)", w.BandwidthLog))
	}
	return nil
}

// CacheProne reports whether memory can answer the workload instead of the
// storage: it reads, or it writes through the page cache without syncing.
// Whether it does depends on its span (see runner memory in package engine).
func (w Workload) CacheProne() bool {
	if !w.Writes() || strings.Contains(w.RW, "rw") || w.RW == "readwrite" {
		return true
	}
	synced := (w.Fsync != nil && *w.Fsync > 0) || (w.Fdatasync != nil && *w.Fdatasync > 0) ||
		(w.Sync != nil && *w.Sync) || (w.EndFsync != nil && *w.EndFsync)
	return w.Direct != nil && !*w.Direct && !synced
}

// RandomWrite reports whether the workload writes at random offsets, the
// pattern SNIA's preconditioning is for.
func (w Workload) RandomWrite() bool {
	return w.RW == "randwrite" || w.RW == "randrw"
}

// UntilStable gives every time-based workload without its own
// steady_state this one, up to ss.MaxRuntime. Workloads with time_based:
// false measure a span (the sustained write and its cliff), not a settled
// rate, and keep their own end.
func (s *Suite) UntilStable(ss SteadyState) {
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.SteadyState == nil && (w.TimeBased == nil || *w.TimeBased) {
			w.SteadyState = ptr(ss.WithDefaults())
		}
	}
}

// DefeatCache sizes every cache-prone, time-based workload to span at least
// bytes (the runner then bounds the file by free space). Size-based
// workloads keep their size: growing them would change what they measure.
// It returns the names of the workloads it resized.
func (s *Suite) DefeatCache(bytes int64) []string {
	var names []string
	for i := range s.Workloads {
		w := &s.Workloads[i]
		if w.CacheProne() && w.Runtime > 0 && int64(w.FileSize) < bytes {
			w.FileSize = Size(bytes)
			names = append(names, w.Name)
		}
	}
	return names
}
