// Package fio builds fio jobs from workloads, runs fio through an
// execx.Cmder and reads its JSON output into storbench's result model.
package fio

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/spec"
)

// Option is one fio option; an empty Value is a flag (e.g. stonewall).
type Option struct {
	Key   string
	Value string
}

// Section is one [name] block of a job file.
type Section struct {
	Name    string
	Options []Option
}

// Job is a fio job file: global options and job sections, in order.
type Job struct {
	Global   []Option
	Sections []Section
	// Path, when set, is a job file where fio runs (relative to the
	// runner's Dir): Runner.Run runs that file, as fio runs a job file, and
	// Global and Sections are ignored.
	Path string
}

// PercentileList is the latency percentiles storbench asks fio to keep.
const PercentileList = "1:5:10:25:50:75:90:95:99:99.5:99.9:99.95:99.99"

// File is where a workload does its I/O.
type File struct {
	// Name is the file or device fio opens, relative to the working directory
	// for files storbench creates. With an Engine, it is the file inside
	// the engine's own namespace (a file in a Gluster volume), or empty
	// where the engine's options name the target whole (an RBD image).
	Name string
	// Size caps the span fio uses; 0 keeps the workload's own size.
	Size int64
	// Engine, when set, is a target fio reaches through an I/O engine of
	// its own (ioengine=rbd, gfapi) rather than a file or device here:
	// every workload runs on that engine, with its options in place of
	// the filename.
	Engine *EngineTarget
}

// EngineTarget is a target only one fio I/O engine can reach: a Ceph RBD
// image (ioengine=rbd: clientname, pool, rbdname) or a GlusterFS volume
// (ioengine=gfapi or gfapi_async: volume, brick, and a directory inside
// the volume).
type EngineTarget struct {
	// IOEngine is fio's engine name.
	IOEngine string
	// Options are the engine's own target options, in order, written into
	// [global] after ioengine (fio knows them only once the engine is
	// named) where a file's job names its filename.
	Options []Option
	// Env is the environment fio needs for the engine, as KEY=VALUE
	// (CEPH_CONF=/path/ceph.conf); Runner.Env carries it to fio.
	Env []string
}

// Keys are the option names the target sets: a job that sets any of them
// names its own target.
func (e *EngineTarget) Keys() []string {
	keys := make([]string, 0, len(e.Options))
	for _, o := range e.Options {
		keys = append(keys, o.Key)
	}
	return keys
}

// FromSuite builds the job file for a whole suite: one section per workload,
// each behind a stonewall so they run in sequence.
func FromSuite(s *spec.Suite, f File, engine string) Job {
	j := Job{Global: globalOptions(f)}
	for _, w := range s.Workloads {
		if w.Job != "" {
			continue // a job file of its own, run as it is
		}
		j.Sections = append(j.Sections, section(w, f, engine))
	}
	return j
}

// FromWorkload builds the job that measures one workload on its own.
func FromWorkload(w spec.Workload, f File, engine string) Job {
	return Job{Global: globalOptions(f), Sections: []Section{section(w, f, engine)}}
}

func globalOptions(f File) []Option {
	var target []Option
	if f.Engine != nil {
		// fio knows an engine's options only once the engine is named.
		target = append(target, Option{"ioengine", f.Engine.IOEngine})
		target = append(target, f.Engine.Options...)
	}
	if f.Name != "" || f.Engine == nil {
		target = append(target, Option{"filename", f.Name})
	}
	return append(target, []Option{
		// Fresh random offsets every run, and write buffers refilled with random
		// data on every submit, so neither caches nor compressing or
		// deduplicating devices flatter the figures.
		{"randrepeat", "0"},
		{"refill_buffers", "1"},
		{"group_reporting", "1"},
		{"clat_percentiles", "1"},
		{"lat_percentiles", "1"},
		{"percentile_list", PercentileList},
	}...)
}

func section(w spec.Workload, f File, engine string) Section {
	switch {
	case f.Engine != nil:
		// Only the target's own engine reaches it.
		engine = f.Engine.IOEngine
	case engine == "" || w.IOEngine != "libaio":
		engine = w.IOEngine
	}
	size := int64(w.FileSize)
	if f.Size > 0 && f.Size < size {
		size = f.Size
	}
	o := []Option{
		{"rw", w.RW},
		{"bs", strconv.FormatInt(int64(w.BlockSize), 10)},
		{"size", strconv.FormatInt(size, 10)},
		{"ioengine", engine},
		{"direct", boolOpt(*w.Direct)},
		{"iodepth", strconv.Itoa(*w.IODepth)},
		{"numjobs", strconv.Itoa(*w.NumJobs)},
	}
	if w.RWMixRead != nil {
		o = append(o, Option{"rwmixread", strconv.Itoa(*w.RWMixRead)})
	}
	switch {
	case w.SteadyState != nil:
		o = append(o, steadyState(*w.SteadyState)...)
	case w.Runtime > 0 && w.TimeBased != nil && !*w.TimeBased:
		o = append(o, Option{"runtime", seconds(w.Runtime)})
	case w.Runtime > 0:
		o = append(o, Option{"time_based", "1"}, Option{"runtime", seconds(w.Runtime)})
	}
	if w.BandwidthLog > 0 {
		o = append(o, Option{"write_bw_log", BandwidthLogPrefix(w.Name)}, Option{"log_avg_msec", strconv.FormatInt(int64(w.BandwidthLog)/1e6, 10)})
	}
	if w.Ramp > 0 {
		o = append(o, Option{"ramp_time", seconds(w.Ramp)})
	}
	if w.Fdatasync != nil {
		o = append(o, Option{"fdatasync", strconv.Itoa(*w.Fdatasync)})
	}
	if w.Fsync != nil {
		o = append(o, Option{"fsync", strconv.Itoa(*w.Fsync)})
	}
	if w.Sync != nil && *w.Sync {
		o = append(o, Option{"sync", "1"})
	}
	if w.EndFsync != nil && *w.EndFsync {
		o = append(o, Option{"end_fsync", "1"})
	}
	for _, k := range sortedKeys(w.Extra) {
		o = append(o, Option{k, w.Extra[k]})
	}
	o = append(o, Option{Key: "stonewall"})
	return Section{Name: w.Name, Options: o}
}

// seconds renders a duration for fio, which reads a bare number as seconds
// and accepts an "ms" suffix.
func seconds(d spec.Duration) string {
	ms := int64(d) / 1e6
	if ms%1000 == 0 {
		return strconv.FormatInt(ms/1000, 10)
	}
	return strconv.FormatInt(ms, 10) + "ms"
}

func boolOpt(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// String renders the job as a fio job file.
func (j Job) String() string {
	var b strings.Builder
	if len(j.Global) > 0 {
		b.WriteString("[global]\n")
		writeOptions(&b, j.Global)
	}
	for _, s := range j.Sections {
		if b.Len() > 0 {
			b.WriteString("\n")
		}
		fmt.Fprintf(&b, "[%s]\n", s.Name)
		writeOptions(&b, s.Options)
	}
	return b.String()
}

func writeOptions(b *strings.Builder, opts []Option) {
	for _, o := range opts {
		if o.Value == "" {
			fmt.Fprintf(b, "%s\n", o.Key)
		} else {
			fmt.Fprintf(b, "%s=%s\n", o.Key, o.Value)
		}
	}
}

// Args renders the job as fio command-line arguments. Options before the
// first --name are global, exactly as a [global] section. Passing the job on
// the command line needs no file or stdin where fio runs.
func (j Job) Args() []string {
	var a []string
	add := func(opts []Option) {
		for _, o := range opts {
			if o.Value == "" {
				a = append(a, "--"+o.Key)
			} else {
				a = append(a, "--"+o.Key+"="+o.Value)
			}
		}
	}
	add(j.Global)
	for _, s := range j.Sections {
		a = append(a, "--name="+s.Name)
		add(s.Options)
	}
	return a
}

func sortedKeys(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
