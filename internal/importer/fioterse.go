package importer

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Terse version 3 layout (fio HOWTO, "Terse output"): 5 header fields, then
// 41 fields per direction for read and write, then CPU, I/O depth and
// latency distributions and disk utilisation. Latencies are in
// microseconds, sizes in KiB.
const (
	terseDirFields = 41
	terseReadAt    = 5 // 0-based index of read_kb
	terseWriteAt   = terseReadAt + terseDirFields
	terseCPUAt     = terseWriteAt + terseDirFields
	terseMinFields = terseCPUAt + 2
)

// parseFioTerse reads fio's terse (--minimal) output, version 3: one line
// per job, semicolon-separated.
//
// Consecutive lines of one job name and group are jobs that ran in
// parallel (numjobs without group_reporting): they are merged into one
// result, as in the other fio formats.
func parseFioTerse(data []byte) (*parsed, error) {
	p := &parsed{tool: "fio"}
	lastKey, lastIdx, jobs := "", -1, 0
	for i, line := range lines(data) {
		n := i + 1
		line = strings.TrimSpace(line)
		if line == "" || !reFioTerse.MatchString(line) {
			continue // fio's warnings, shell prompts
		}
		f := strings.Split(line, ";")
		if f[0] != "3" {
			return nil, errAt(n, 1, "expected terse version 3 (fio --minimal, --terse-version=3), found version %s", f[0])
		}
		if len(f) < terseMinFields {
			return nil, errAt(n, 0, "expected at least %d semicolon-separated fields in a terse version 3 line, found %d", terseMinFields, len(f))
		}
		p.version = f[1]
		var r result.Result
		for k, at := range []int{terseReadAt, terseWriteAt} {
			d, err := terseDirection(n, f, at)
			if err != nil {
				return nil, err
			}
			if k == 0 {
				r.Read = d
			} else {
				r.Write = d
			}
		}
		if r.Read == nil && r.Write == nil {
			return nil, errAt(n, 0, "expected read or write figures in the terse line of job %q, found none", f[2])
		}
		var err error
		if r.CPU.UserPercent, err = tersePercent(f[terseCPUAt]); err != nil {
			return nil, errAt(n, col(f, terseCPUAt), "expected the user CPU percentage (field %d), found %q", terseCPUAt+1, f[terseCPUAt])
		}
		if r.CPU.SystemPercent, err = tersePercent(f[terseCPUAt+1]); err != nil {
			return nil, errAt(n, col(f, terseCPUAt+1), "expected the system CPU percentage (field %d), found %q", terseCPUAt+2, f[terseCPUAt+1])
		}
		r.Status = result.StatusComplete
		if e := atoi(f[4]); e != 0 {
			r.Status, r.Error = result.StatusFailed, fmt.Sprintf("fio job %s: error %d", f[2], e)
		}
		meth := Method{RW: terseRW(r)}
		for _, d := range r.Directions() {
			if d.IOPS > 0 {
				meth.BlockSize = roundBlock(d.BytesPerSec / d.IOPS)
				break
			}
		}
		r.Workload = sanitize(f[2])
		if r.Workload == "" {
			r.Workload = "fio-job"
		}
		r.Method = fmt.Sprintf("%s terse v3, job %q: %s, block size about %s (derived from bandwidth/IOPS); random or sequential, queue depth and direct I/O are not in terse output",
			f[1], f[2], meth.RW, sizeName(meth.BlockSize))
		r.DisplayUnits = map[string]string{result.MetricBW: "KiB/s", result.MetricLatMean: "us", result.MetricLatP99: "us"}
		// With the I/O count derived from IOPS and runtime, this compares
		// the bandwidth with the bytes moved over the runtime.
		for _, why := range consistency(&r, 0) {
			p.problems = append(p.problems, result.ImportProblem{Line: n, Kind: result.ProblemInconsistent, Msg: fmt.Sprintf("fio job %q: %s", f[2], why)})
		}
		r.Labels = map[string]string{string(result.LabelJob): f[2]}
		if strings.HasPrefix(f[1], "fio-") {
			result.LabelFioVersion.Set(r.Labels, f[1])
		}
		p.rows++
		key := f[2] + "\x00" + f[3]
		if key == lastKey && lastIdx >= 0 {
			jobs++
			prev := &p.results[lastIdx]
			mergeParallel(prev, r)
			prev.Method = strings.SplitN(prev.Method, "; merged", 2)[0] + fmt.Sprintf("; merged %d parallel jobs (one terse line each)", jobs)
			continue
		}
		lastKey, lastIdx, jobs = key, len(p.results), 1
		p.add(r, n)
	}
	// Terse output does not say how many jobs ran in parallel: the last
	// group may be incomplete when the file is cut.
	p.tailParallel = true
	if p.rows == 0 {
		return nil, errAt(1, 0, "expected terse lines starting with \"3;fio-\", found none")
	}
	return p, nil
}

func terseRW(r result.Result) string {
	switch {
	case r.Read != nil && r.Write != nil:
		return "read+write"
	case r.Write != nil:
		return "write"
	}
	return "read"
}

// roundBlock rounds a derived block size to the nearest 512 bytes.
func roundBlock(b float64) int64 {
	if b <= 0 {
		return 0
	}
	n := int64(b/512+0.5) * 512
	if n == 0 {
		return int64(b + 0.5)
	}
	return n
}

func terseDirection(n int, f []string, at int) (*result.Direction, error) {
	num := func(i int, what string) (float64, error) {
		s := f[at+i]
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || v < 0 {
			return 0, errAt(n, col(f, at+i), "expected a number for %s (field %d), found %q", what, at+i+1, s)
		}
		return v, nil
	}
	kb, err := num(0, "kilobytes")
	if err != nil {
		return nil, err
	}
	bw, err := num(1, "bandwidth in KiB/s")
	if err != nil {
		return nil, err
	}
	iops, err := num(2, "IOPS")
	if err != nil {
		return nil, err
	}
	ms, err := num(3, "runtime in ms")
	if err != nil {
		return nil, err
	}
	if kb == 0 && iops == 0 {
		return nil, nil
	}
	d := &result.Direction{IOPS: iops, BytesPerSec: bw * 1024, Bytes: int64(kb * 1024), Runtime: time.Duration(ms * float64(time.Millisecond))}
	d.TotalIOs = int64(iops*ms/1000 + 0.5)
	for k, l := range []*result.Latency{&d.Submission, &d.Completion} {
		if err := terseLat(n, f, at+4+4*k, l); err != nil {
			return nil, err
		}
	}
	if err := terseLat(n, f, at+32, &d.Total); err != nil {
		return nil, err
	}
	for i := at + 12; i < at+32; i++ {
		pct, val, ok := strings.Cut(f[i], "=")
		pv, err1 := strconv.ParseFloat(strings.TrimSuffix(pct, "%"), 64)
		v, err2 := strconv.ParseFloat(val, 64)
		if !ok || err1 != nil || err2 != nil {
			return nil, errAt(n, col(f, i), "expected a percentile such as \"99.000000%%=1234\" (field %d), found %q", i+1, f[i])
		}
		if pv == 0 {
			continue // unused slots print "0%=0"
		}
		d.Completion.Percentiles = append(d.Completion.Percentiles, result.Percentile{P: pv, Value: time.Duration(v * float64(time.Microsecond))})
	}
	if len(d.Completion.Percentiles) > 0 && d.Completion.Samples == 0 {
		d.Completion.Samples = d.TotalIOs
	}
	return d, nil
}

func terseLat(n int, f []string, at int, l *result.Latency) error {
	var v [4]float64
	for i := range v {
		x, err := strconv.ParseFloat(f[at+i], 64)
		if err != nil || x < 0 {
			return errAt(n, col(f, at+i), "expected a latency in µs (field %d), found %q", at+i+1, f[at+i])
		}
		v[i] = x * float64(time.Microsecond)
	}
	l.Min, l.Max, l.Mean, l.StdDev = time.Duration(v[0]), time.Duration(v[1]), time.Duration(v[2]), time.Duration(v[3])
	return nil
}

func tersePercent(s string) (float64, error) {
	return strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
}

// col is the 1-based column where field i starts.
func col(f []string, i int) int {
	c := 1
	for k := 0; k < i && k < len(f); k++ {
		c += len(f[k]) + 1
	}
	return c
}
