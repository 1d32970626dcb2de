package fio

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// This file is storbench's one model of fio's JSON output, for the fio
// storbench runs and for the files the importer reads. fio's JSON changed
// over its versions; each figure is read from the field the version wrote,
// in that field's unit:
//
//	          io_bytes  bw / bw_bytes        latency objects             runtime
//	fio 2.x   KiB       bw KiB/s             slat/clat/lat, µs, with N   runt (ms)
//	3.0-3.1   bytes     bw KiB/s             slat_ns/clat_ns/lat_ns, no N runtime
//	3.2+      bytes     bw_bytes B/s, bw KiB/s  *_ns, N from 3.20         runtime
//
// json+ adds "bins" (latency in ns -> I/O count) to the latency objects.
// A figure missing from the output is left unset ("not reported"), never 0,
// and never the reason to drop the others.

// Output is one JSON document fio printed.
type Output struct {
	Version     string `json:"fio version"`
	TimestampMS int64  `json:"timestamp_ms"`
	// Timestamp is in seconds; fio 2.x wrote no timestamp_ms.
	Timestamp int64       `json:"timestamp"`
	Jobs      []JobResult `json:"jobs"`
	// GlobalOptions are the [global] options of a job file, as fio reports
	// them.
	GlobalOptions Options `json:"global options"`
	// ClientStats holds the jobs when fio ran in client/server mode.
	ClientStats []JobResult `json:"client_stats"`
}

// Legacy reports whether the document is fio 2.x's (or older), whose
// figures are in KiB and microseconds.
func (o *Output) Legacy() bool {
	return strings.HasPrefix(o.Version, "fio-2.") || strings.HasPrefix(o.Version, "fio-1.")
}

// JobResult is one job's figures in fio's JSON output.
type JobResult struct {
	Name     string     `json:"jobname"`
	GroupID  int        `json:"groupid"`
	Error    int        `json:"error"`
	Elapsed  int64      `json:"elapsed"` // seconds
	ETA      int64      `json:"eta"`     // seconds
	Options  Options    `json:"job options"`
	Read     *Direction `json:"read"`
	Write    *Direction `json:"write"`
	Trim     *Direction `json:"trim"`
	Sync     *Sync      `json:"sync"`
	UsrCPU   *float64   `json:"usr_cpu"`
	SysCPU   *float64   `json:"sys_cpu"`
	Hostname string     `json:"hostname"`
	// Port is the fio server's, in client/server output.
	Port int `json:"port"`
	// SteadyState is present when the job asked for steady-state detection.
	SteadyState *SteadyStateJSON `json:"steadystate"`
}

// Direction mirrors fio's read/write/trim objects, in every version's
// fields (see the table above); nil is a figure fio did not write.
type Direction struct {
	IOBytes  *float64 `json:"io_bytes"`  // bytes; KiB in fio 2.x
	IOKBytes *float64 `json:"io_kbytes"` // KiB
	BW       *float64 `json:"bw"`        // KiB/s
	BWBytes  *float64 `json:"bw_bytes"`  // bytes/s
	IOPS     *float64 `json:"iops"`
	Runtime  *float64 `json:"runtime"` // ms
	Runt     *float64 `json:"runt"`    // ms, fio 2.x
	TotalIOs *float64 `json:"total_ios"`
	ShortIOs *float64 `json:"short_ios"`
	DropIOs  *float64 `json:"drop_ios"`
	SlatNS   *Latency `json:"slat_ns"`
	ClatNS   *Latency `json:"clat_ns"`
	LatNS    *Latency `json:"lat_ns"`
	SlatUS   *Latency `json:"slat"` // fio 2.x
	ClatUS   *Latency `json:"clat"` // fio 2.x
	LatUS    *Latency `json:"lat"`  // fio 2.x
}

// Sync mirrors fio's sync object (fsync/fdatasync latency).
type Sync struct {
	TotalIOs *float64 `json:"total_ios"`
	LatNS    *Latency `json:"lat_ns"`
	LatUS    *Latency `json:"lat"`
}

// Latency mirrors fio's latency objects, in nanoseconds (the *_ns ones) or
// microseconds (fio 2.x's).
type Latency struct {
	Min        *float64           `json:"min"`
	Max        *float64           `json:"max"`
	Mean       *float64           `json:"mean"`
	StdDev     *float64           `json:"stddev"`
	N          *float64           `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	// Bins are json+'s: latency -> I/O count.
	Bins map[string]float64 `json:"bins"`
}

// Options are fio's options as it reports them ("job options", "global
// options"); a value written as a number or null is kept as its text.
type Options map[string]string

// UnmarshalJSON reads an object of option values of any JSON type.
func (o *Options) UnmarshalJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return err
	}
	*o = OptionsOf(m)
	return nil
}

// OptionsOf turns decoded JSON option values into their text.
func OptionsOf(m map[string]any) Options {
	out := make(Options, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

// ToResult converts one job's figures (fio 3's units) into a result;
// identity fields (run, target, workload) are left for the caller.
func ToResult(j JobResult) result.Result { return convert(j, false) }

// ResultOf converts one job of o in the units of o's fio version.
func (o *Output) ResultOf(j JobResult) result.Result { return convert(j, o.Legacy()) }

func convert(j JobResult, legacy bool) result.Result {
	r := result.Result{Read: direction(j.Read, legacy), Write: direction(j.Write, legacy), Trim: direction(j.Trim, legacy)}
	if j.UsrCPU != nil {
		r.CPU.UserPercent = *j.UsrCPU
	}
	if j.SysCPU != nil {
		r.CPU.SystemPercent = *j.SysCPU
	}
	r.Sync = syncLatency(j.Sync)
	r.SteadyState = steadyStateResult(j.SteadyState, longestRuntime(&r))
	if j.Error != 0 {
		r.Status = result.StatusFailed
		r.Error = fmt.Sprintf("fio job %s: error %d (%s)", j.Name, j.Error, errnoText(j.Error))
	} else {
		r.Status = result.StatusComplete
	}
	return r
}

func syncLatency(s *Sync) *result.Latency {
	if s == nil {
		return nil
	}
	l := pickLatency(s.LatNS, s.LatUS)
	if l.Samples == 0 && s.TotalIOs != nil {
		l.Samples = int64(*s.TotalIOs)
	}
	if l.Measured() && (l.Mean > 0 || l.Max > 0 || len(l.Percentiles) > 0) {
		return &l
	}
	return nil
}

// value is a figure fio wrote, 0 when it wrote none or not a number. A
// negative figure is kept so that plausibility checks refuse the result.
func value(p *float64) float64 {
	if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
		return 0
	}
	return *p
}

func direction(x *Direction, legacy bool) *result.Direction {
	if x == nil {
		return nil
	}
	out := &result.Direction{IOPS: value(x.IOPS), TotalIOs: int64(value(x.TotalIOs))}
	switch {
	case x.BWBytes != nil:
		out.BytesPerSec = value(x.BWBytes)
	case x.BW != nil:
		out.BytesPerSec = value(x.BW) * 1024 // KiB/s in every version
	}
	out.Bytes = x.bytes(legacy)
	switch {
	case x.Runtime != nil:
		out.Runtime = time.Duration(value(x.Runtime) * float64(time.Millisecond))
	case x.Runt != nil:
		out.Runtime = time.Duration(value(x.Runt) * float64(time.Millisecond))
	}
	out.Errors = int64(value(x.ShortIOs) + value(x.DropIOs))
	out.Submission = pickLatency(x.SlatNS, x.SlatUS)
	out.Completion = pickLatency(x.ClatNS, x.ClatUS)
	out.Total = pickLatency(x.LatNS, x.LatUS)
	if out.TotalIOs == 0 && out.Bytes == 0 && out.IOPS == 0 && out.BytesPerSec == 0 {
		return nil // the direction saw no I/O
	}
	return out
}

// bytes is how much the direction moved, in bytes, from whichever field
// the version wrote.
func (x *Direction) bytes(legacy bool) int64 {
	switch {
	case x.IOKBytes != nil && x.IOBytes == nil:
		return int64(value(x.IOKBytes) * 1024)
	case x.IOBytes != nil && legacy && x.IOKBytes == nil:
		return int64(value(x.IOBytes) * 1024) // fio 2.x: KiB
	case x.IOBytes != nil:
		return int64(value(x.IOBytes))
	}
	return 0
}

// pickLatency reads the nanosecond object (fio 3) or else the microsecond
// one (fio 2).
func pickLatency(ns, us *Latency) result.Latency {
	if ns != nil {
		return latency(ns, 1)
	}
	if us != nil {
		return latency(us, 1000)
	}
	return result.Latency{}
}

// latency converts a latency object whose values are in units of scale
// nanoseconds. A missing N (fio 3.0 to 3.19) does not drop the figures;
// json+ bins give percentiles when the object has none.
func latency(l *Latency, scale float64) result.Latency {
	ns := func(p *float64) time.Duration {
		switch {
		case p == nil || math.IsNaN(*p):
			return 0
		case *p*scale > float64(math.MaxInt64):
			return math.MaxInt64 // refused as implausible
		case *p*scale < math.MinInt64:
			return math.MinInt64
		}
		return time.Duration(*p * scale)
	}
	out := result.Latency{Mean: ns(l.Mean), StdDev: ns(l.StdDev), Min: ns(l.Min), Max: ns(l.Max)}
	if l.N != nil && *l.N > 0 {
		out.Samples = int64(*l.N)
	}
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p <= 0 || p > 100 || math.IsNaN(v) {
			continue // fio pads the list with "0.00" : 0
		}
		out.Percentiles = append(out.Percentiles, result.Percentile{P: p, Value: ns(&v)})
	}
	if len(l.Bins) > 0 {
		ps, n := binPercentiles(l.Bins, scale)
		if len(out.Percentiles) == 0 {
			out.Percentiles = ps
		}
		if out.Samples == 0 {
			out.Samples = n
		}
	}
	result.SortPercentiles(out.Percentiles)
	if out.Mean == 0 && out.Max == 0 && out.Min == 0 && len(out.Percentiles) == 0 {
		return result.Latency{}
	}
	return out
}

// binPoints are fio's usual percentiles, computed from json+ bins.
var binPoints = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

// binPercentiles gives, for each of binPoints, the value of the bin where
// the cumulative count reaches p percent, and the count of I/Os.
func binPercentiles(bins map[string]float64, scale float64) ([]result.Percentile, int64) {
	type bin struct{ v, n float64 }
	var bs []bin
	var total float64
	bad := func(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }
	for k, n := range bins {
		v, err := strconv.ParseFloat(k, 64)
		if err != nil || bad(v) || bad(n) || n == 0 {
			continue
		}
		bs = append(bs, bin{v, n})
		total += n
	}
	if total == 0 {
		return nil, 0
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].v < bs[j].v })
	var out []result.Percentile
	var cum float64
	i := 0
	for _, p := range binPoints {
		need := p / 100 * total
		for i < len(bs) && cum+bs[i].n < need {
			cum += bs[i].n
			i++
		}
		k := min(i, len(bs)-1)
		out = append(out, result.Percentile{P: p, Value: time.Duration(bs[k].v * scale)})
	}
	return out, int64(total)
}
