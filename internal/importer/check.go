package importer

import (
	"fmt"
	"math"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Bounds of plausible figures. They are far beyond any device storbench
// can meet (a PCIe 5 x16 array does about 60 GB/s and 20 M IOPS), so only
// garbage is refused: a misread number, an overflow, a unit error of 10^6.
const (
	MaxIOPS        = 1e9  // I/O operations per second
	MaxBytesPerSec = 1e13 // 10 TB/s
	MaxLatency     = 7 * 24 * time.Hour
)

// Bounds on the text of the generic CSV and JSON imports (a file as a
// whole is bounded by storbench.ImportRequest.MaxSize, labels by
// result.CheckUserLabel).
const (
	// MaxCSVLine is the longest line of a CSV, in bytes.
	MaxCSVLine = 1 << 20
	// MaxName is the longest target, workload or round name of a CSV
	// field or JSON string, in bytes.
	MaxName = 256
)

// plausible returns why a result's figures cannot be real, or "".
func plausible(r *result.Result) string {
	for _, d := range []struct {
		name string
		d    *result.Direction
	}{{"read", r.Read}, {"write", r.Write}, {"trim", r.Trim}} {
		if d.d == nil {
			continue
		}
		if why := plausibleDirection(d.name, d.d); why != "" {
			return why
		}
	}
	if r.Sync != nil {
		if why := plausibleLatency("sync", *r.Sync); why != "" {
			return why
		}
	}
	return ""
}

func plausibleDirection(name string, d *result.Direction) string {
	switch {
	case bad(d.IOPS) || d.IOPS > MaxIOPS:
		return fmt.Sprintf("%s IOPS %g is outside 0 to %g", name, d.IOPS, float64(MaxIOPS))
	case bad(d.BytesPerSec) || d.BytesPerSec > MaxBytesPerSec:
		return fmt.Sprintf("%s bandwidth %g B/s is outside 0 to %g B/s", name, d.BytesPerSec, float64(MaxBytesPerSec))
	case d.TotalIOs < 0 || d.Bytes < 0 || d.Runtime < 0 || d.Errors < 0:
		return fmt.Sprintf("%s has a negative count (I/Os %d, bytes %d, runtime %v, errors %d)", name, d.TotalIOs, d.Bytes, d.Runtime, d.Errors)
	}
	for _, l := range []struct {
		kind string
		l    result.Latency
	}{{"completion", d.Completion}, {"total", d.Total}, {"submission", d.Submission}} {
		if why := plausibleLatency(name+" "+l.kind, l.l); why != "" {
			return why
		}
	}
	return ""
}

func plausibleLatency(name string, l result.Latency) string {
	check := func(what string, v time.Duration) string {
		if v < 0 || v > MaxLatency {
			return fmt.Sprintf("%s latency %s %v is outside 0 to %v", name, what, v, MaxLatency)
		}
		return ""
	}
	for _, x := range []struct {
		what string
		v    time.Duration
	}{{"mean", l.Mean}, {"min", l.Min}, {"max", l.Max}, {"stddev", l.StdDev}} {
		if why := check(x.what, x.v); why != "" {
			return why
		}
	}
	for _, p := range l.Percentiles {
		if why := check(fmt.Sprintf("p%g", p.P), p.Value); why != "" {
			return why
		}
	}
	if l.Samples < 0 {
		return fmt.Sprintf("%s latency has %d samples", name, l.Samples)
	}
	return ""
}

func bad(v float64) bool { return math.IsNaN(v) || math.IsInf(v, 0) || v < 0 }

// consistencyTolerance is how far two ways of computing one figure may
// disagree before a result is flagged. fio rounds its text output to three
// significant digits (0.5%) and its KiB/s fields to whole KiB, and
// group_reporting runtimes are the longest job's, so a few percent is
// rounding; more is a misread unit or a hand-edited file.
const consistencyTolerance = 0.05

// consistency checks a fio result's figures against each other: bandwidth
// against IOPS times the block size, and the I/O count against IOPS times
// the runtime. blockSize is 0 when unknown (then bytes/I/Os stands in).
func consistency(r *result.Result, blockSize int64) []string {
	var out []string
	for _, d := range r.Directions() {
		bs := float64(blockSize)
		if bs <= 0 && d.TotalIOs > 0 && d.Bytes > 0 {
			bs = float64(d.Bytes) / float64(d.TotalIOs)
		}
		if d.IOPS > 0 && d.BytesPerSec > 0 && bs > 0 {
			want := d.IOPS * bs
			if off(d.BytesPerSec, want) > consistencyTolerance {
				out = append(out, fmt.Sprintf("%s bandwidth %.0f B/s but IOPS %.6g x block size %.0f B = %.0f B/s (%.1f%% apart)",
					d.Name, d.BytesPerSec, d.IOPS, bs, want, 100*off(d.BytesPerSec, want)))
			}
		}
		if d.IOPS > 0 && d.TotalIOs > 0 && d.Runtime > 0 {
			want := d.IOPS * d.Runtime.Seconds()
			// Below 100 I/Os one I/O more or less is already 1%.
			if math.Abs(float64(d.TotalIOs)-want) > 2 && off(float64(d.TotalIOs), want) > consistencyTolerance {
				out = append(out, fmt.Sprintf("%s I/O count %d but IOPS %.6g x runtime %v = %.0f (%.1f%% apart)",
					d.Name, d.TotalIOs, d.IOPS, d.Runtime, want, 100*off(float64(d.TotalIOs), want)))
			}
		}
	}
	return out
}

func off(got, want float64) float64 {
	if want == 0 {
		return math.Abs(got)
	}
	return math.Abs(got-want) / math.Abs(want)
}
