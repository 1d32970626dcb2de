// Package spec defines what storbench runs: suites of workloads, written in
// YAML. The built-in suites use the same schema users write, and are embedded
// in the binary.
package spec

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Suite is a named, ordered list of workloads run one after the other.
type Suite struct {
	Name        string     `yaml:"name" json:"name"`
	Description string     `yaml:"description,omitempty" json:"description,omitempty"`
	Defaults    Options    `yaml:"defaults,omitempty" json:"defaults"`
	Workloads   []Workload `yaml:"workloads" json:"workloads"`
	// Source is where the suite came from: "built-in" or a file path.
	Source string `yaml:"-" json:"source"`
}

// Workload is one fio job: one access pattern measured on its own.
type Workload struct {
	Name        string `yaml:"name" json:"name"`
	Description string `yaml:"description,omitempty" json:"description,omitempty"`
	// Job is a fio job file run as it is, for what a suite cannot express:
	// relative to the suite file, read as fio reads it (includes, ${VAR}),
	// judged like any job file. A job workload sets no other option.
	Job     string `yaml:"job,omitempty" json:"job,omitempty"`
	Options `yaml:",inline" json:",inline"`
}

// Options are the fio settings a workload (or a suite's defaults) may set.
// Pointers distinguish "not set" from a zero value so defaults can apply.
type Options struct {
	// RW is fio's rw: read, write, randread, randwrite, rw, randrw, trim, randtrim.
	RW        string `yaml:"rw,omitempty" json:"rw,omitempty"`
	RWMixRead *int   `yaml:"rwmixread,omitempty" json:"rwmixread,omitempty"`
	// BlockSize, in bytes; YAML accepts 4KiB, 1MiB, 2300.
	BlockSize Size `yaml:"bs,omitempty" json:"bs,omitempty"`
	// FileSize is the size of the test file (or the span of a device) in bytes.
	FileSize Size `yaml:"size,omitempty" json:"size,omitempty"`
	IODepth  *int `yaml:"iodepth,omitempty" json:"iodepth,omitempty"`
	NumJobs  *int `yaml:"numjobs,omitempty" json:"numjobs,omitempty"`
	// Runtime makes the workload time-based; without it fio stops after size bytes.
	Runtime  Duration `yaml:"runtime,omitempty" json:"runtime,omitempty"`
	Ramp     Duration `yaml:"ramp,omitempty" json:"ramp,omitempty"`
	IOEngine string   `yaml:"ioengine,omitempty" json:"ioengine,omitempty"`
	// Direct defaults to true: storbench measures the device, not the page cache.
	Direct    *bool `yaml:"direct,omitempty" json:"direct,omitempty"`
	Fdatasync *int  `yaml:"fdatasync,omitempty" json:"fdatasync,omitempty"`
	Fsync     *int  `yaml:"fsync,omitempty" json:"fsync,omitempty"`
	Sync      *bool `yaml:"sync,omitempty" json:"sync,omitempty"`
	EndFsync  *bool `yaml:"end_fsync,omitempty" json:"end_fsync,omitempty"`
	// SteadyState ends the workload once fio sees it settle (steady.go).
	SteadyState *SteadyState `yaml:"steady_state,omitempty" json:"steady_state,omitempty"`
	// TimeBased defaults to true when a runtime is set: fio loops over the
	// span until the runtime ends. false makes the runtime a limit: fio
	// stops after the span or the runtime, whichever comes first.
	TimeBased *bool `yaml:"time_based,omitempty" json:"time_based,omitempty"`
	// BandwidthLog asks fio for its bandwidth log averaged over this period
	// (write_bw_log, log_avg_msec); storbench reads it to find a write cliff.
	BandwidthLog Duration `yaml:"bw_log,omitempty" json:"bw_log,omitempty"`
	// Extra passes further fio options through unchanged (key: value).
	Extra map[string]string `yaml:"extra,omitempty" json:"extra,omitempty"`
}

// Writes reports whether the workload writes (and so may destroy data).
func (w Workload) Writes() bool {
	if w.Job != "" {
		// Counted as writing until fio's reading of the file is judged on
		// the prepared target.
		return true
	}
	switch w.RW {
	case "read", "randread":
		return false
	}
	return true
}

// Writes reports whether any workload of the suite writes.
func (s *Suite) Writes() []string {
	var names []string
	for _, w := range s.Workloads {
		if w.Writes() {
			names = append(names, w.Name)
		}
	}
	return names
}

// MaxFileSize is the largest test file any workload asks for.
func (s *Suite) MaxFileSize() int64 {
	var m int64
	for _, w := range s.Workloads {
		if int64(w.FileSize) > m {
			m = int64(w.FileSize)
		}
	}
	return m
}

// Duration estimates how long the suite runs: ramp plus runtime of every
// time-based workload; size-based ones are counted at zero.
func (s *Suite) Duration() time.Duration {
	var d time.Duration
	for _, w := range s.Workloads {
		d += time.Duration(w.Ramp) + time.Duration(w.Runtime)
	}
	return d
}

// Select keeps only the named workloads, in suite order.
func (s *Suite) Select(names []string) error {
	if len(names) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, n := range names {
		want[n] = true
	}
	var kept []Workload
	for _, w := range s.Workloads {
		if want[w.Name] {
			kept = append(kept, w)
			delete(want, w.Name)
		}
	}
	if len(want) > 0 {
		var missing []string
		for n := range want {
			missing = append(missing, n)
		}
		sort.Strings(missing)
		return fmt.Errorf("suite %s has no workload %s (it has %s)", s.Name, strings.Join(missing, ", "), strings.Join(s.names(), ", "))
	}
	s.Workloads = kept
	return nil
}

func (s *Suite) names() []string {
	var n []string
	for _, w := range s.Workloads {
		n = append(n, w.Name)
	}
	return n
}

// Workload returns the workload with the given name.
func (s *Suite) Workload(name string) (Workload, bool) {
	for _, w := range s.Workloads {
		if w.Name == name {
			return w, true
		}
	}
	return Workload{}, false
}

// applyDefaults fills every unset workload option from the suite's defaults
// and then from storbench's own defaults.
func (s *Suite) applyDefaults() {
	for i := range s.Workloads {
		w := &s.Workloads[i]
		w.Options = merge(w.Options, s.Defaults)
		w.Options = merge(w.Options, builtinDefaults)
	}
}

var builtinDefaults = Options{
	IOEngine: "libaio",
	Direct:   ptr(true),
	IODepth:  ptr(1),
	NumJobs:  ptr(1),
	FileSize: Size(1 << 30),
}

func ptr[T any](v T) *T { return &v }

// clone copies what p points to: a default shared by pointer between
// workloads (and the built-in defaults) would change for all of them when
// one is changed (a test setting one workload's Direct made every suite
// parsed after it buffered).
func clone[T any](p *T) *T {
	if p == nil {
		return nil
	}
	return ptr(*p)
}

func merge(o, d Options) Options {
	if o.RW == "" {
		o.RW = d.RW
	}
	if o.RWMixRead == nil {
		o.RWMixRead = clone(d.RWMixRead)
	}
	if o.BlockSize == 0 {
		o.BlockSize = d.BlockSize
	}
	if o.FileSize == 0 {
		o.FileSize = d.FileSize
	}
	if o.IODepth == nil {
		o.IODepth = clone(d.IODepth)
	}
	if o.NumJobs == nil {
		o.NumJobs = clone(d.NumJobs)
	}
	if o.Runtime == 0 {
		o.Runtime = d.Runtime
	}
	if o.Ramp == 0 {
		o.Ramp = d.Ramp
	}
	if o.IOEngine == "" {
		o.IOEngine = d.IOEngine
	}
	if o.Direct == nil {
		o.Direct = clone(d.Direct)
	}
	if o.Fdatasync == nil {
		o.Fdatasync = clone(d.Fdatasync)
	}
	if o.Fsync == nil {
		o.Fsync = clone(d.Fsync)
	}
	if o.Sync == nil {
		o.Sync = clone(d.Sync)
	}
	if o.EndFsync == nil {
		o.EndFsync = clone(d.EndFsync)
	}
	if o.SteadyState == nil && d.SteadyState != nil {
		o.SteadyState = ptr(*d.SteadyState)
	}
	if o.SteadyState != nil {
		o.SteadyState = ptr(o.SteadyState.WithDefaults())
	}
	if o.TimeBased == nil {
		o.TimeBased = clone(d.TimeBased)
	}
	if o.BandwidthLog == 0 {
		o.BandwidthLog = d.BandwidthLog
	}
	if len(d.Extra) > 0 {
		m := map[string]string{}
		for k, v := range d.Extra {
			m[k] = v
		}
		for k, v := range o.Extra {
			m[k] = v
		}
		o.Extra = m
	}
	return o
}
