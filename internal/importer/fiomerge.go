package importer

import (
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// fioMethod reads a workload's method from fio options.
func fioMethod(o map[string]string) Method {
	m := Method{RW: firstOf(o, "rw", "readwrite")}
	if i := strings.IndexByte(m.RW, ':'); i >= 0 { // rw=randread:8
		m.RW = m.RW[:i]
	}
	// "4k,8k" gives reads first; "4k:8k" is the same in older fio.
	bs, _, _ := strings.Cut(firstOf(o, "bs", "blocksize"), ",")
	bs, _, _ = strings.Cut(bs, ":")
	kbBase, _ := strconv.ParseInt(o["kb_base"], 10, 64)
	if n, err := units.ParseFioSize(bs, kbBase); err == nil && n > 0 {
		m.BlockSize = n
	}
	m.IODepth = atoi(o["iodepth"])
	m.NumJobs = atoi(o["numjobs"])
	if v, ok := o["rwmixread"]; ok {
		m.RWMixRead = atoi(v)
	} else if v, ok := o["rwmixwrite"]; ok {
		m.RWMixRead = 100 - atoi(v)
	}
	direct := false
	if _, ok := o["direct"]; ok {
		direct = flag(o, "direct")
	} else if _, ok := o["buffered"]; ok {
		direct = !flag(o, "buffered")
	}
	m.Direct = &direct
	m.Sync = flag(o, "sync") || o["sync"] == "sync" || o["sync"] == "dsync"
	m.Fdatasync = atoi(o["fdatasync"])
	m.Fsync = atoi(o["fsync"])
	m.EndFsync = flag(o, "end_fsync")
	switch o["ioengine"] {
	case "sync", "psync", "vsync", "pvsync", "pvsync2":
		m.IODepth = 1 // synchronous engines cannot queue
	}
	return m
}

// mergeParallel adds the figures of a job that ran beside r (numjobs
// without group_reporting). IOPS, bandwidth and I/O counts add up; latency
// means are weighted by I/O count; percentiles keep the worst job's, an
// upper bound, since percentiles of separate jobs cannot be merged.
func mergeParallel(r *result.Result, o result.Result) {
	r.Read = mergeDir(r.Read, o.Read)
	r.Write = mergeDir(r.Write, o.Write)
	r.Trim = mergeDir(r.Trim, o.Trim)
	if o.Sync != nil {
		if r.Sync == nil {
			r.Sync = o.Sync
		} else {
			l := mergeLat(*r.Sync, *o.Sync)
			r.Sync = &l
		}
	}
	r.CPU.UserPercent += o.CPU.UserPercent
	r.CPU.SystemPercent += o.CPU.SystemPercent
	if o.Status == result.StatusFailed {
		r.Status, r.Error = o.Status, strings.TrimPrefix(r.Error+"; "+o.Error, "; ")
	}
}

func mergeDir(a, b *result.Direction) *result.Direction {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := *a
	out.IOPS += b.IOPS
	out.BytesPerSec += b.BytesPerSec
	out.TotalIOs += b.TotalIOs
	out.Bytes += b.Bytes
	out.Errors += b.Errors
	out.Runtime = max(a.Runtime, b.Runtime)
	out.Completion = mergeLat(counted(a.Completion, a.TotalIOs), counted(b.Completion, b.TotalIOs))
	out.Total = mergeLat(counted(a.Total, a.TotalIOs), counted(b.Total, b.TotalIOs))
	out.Submission = mergeLat(counted(a.Submission, a.TotalIOs), counted(b.Submission, b.TotalIOs))
	return &out
}

// counted gives a latency without its sample count (fio 3.0 to 3.19 JSON,
// fio text) the direction's I/O count, so that means of parallel jobs are
// weighted by the I/Os each job did, not averaged job by job.
func counted(l result.Latency, ios int64) result.Latency {
	if l.Measured() && l.Samples == 0 && ios > 0 {
		l.Samples = ios
	}
	return l
}

func mergeLat(a, b result.Latency) result.Latency {
	if !b.Measured() {
		return a
	}
	if !a.Measured() {
		return b
	}
	out := a
	na, nb := float64(max(a.Samples, 1)), float64(max(b.Samples, 1))
	out.Samples = a.Samples + b.Samples
	out.Mean = time.Duration((float64(a.Mean)*na + float64(b.Mean)*nb) / (na + nb))
	out.StdDev = max(a.StdDev, b.StdDev)
	if b.Min > 0 && (a.Min == 0 || b.Min < a.Min) {
		out.Min = b.Min
	}
	out.Max = max(a.Max, b.Max)
	out.Percentiles = nil
	for _, p := range a.Percentiles {
		v := p.Value
		if q, ok := b.At(p.P); ok && q > v {
			v = q
		}
		out.Percentiles = append(out.Percentiles, result.Percentile{P: p.P, Value: v})
	}
	return out
}

func firstOf(o map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

// truthy reads fio's booleans: an option given without a value is set.
func truthy(v string) bool {
	v = strings.TrimSpace(strings.ToLower(v))
	return v == "1" || v == "true" || v == "yes" || v == "on"
}

// flag reads a boolean fio option; given without a value, it is set.
func flag(o map[string]string, key string) bool {
	v, ok := o[key]
	return ok && (strings.TrimSpace(v) == "" || truthy(v))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
