package fio

import (
	"bufio"
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
)

// steadyState renders a workload's steady-state request: time-based up to
// the maximum runtime, ended early by fio once the criterion holds.
func steadyState(s spec.SteadyState) []Option {
	o := []Option{
		{"time_based", "1"},
		{"runtime", seconds(s.MaxRuntime)},
		{"ss", s.Criterion()},
		{"ss_dur", seconds(s.Window)},
		{"ss_ramp", seconds(s.Ramp)},
	}
	// fio before 3.34 has no ss_interval and samples once a second; leave it
	// out when that is what is asked, so older fio runs the job.
	if time.Duration(s.Interval) != time.Second {
		o = append(o, Option{"ss_interval", seconds(s.Interval)})
	}
	return o
}

// BandwidthLogPrefix is the write_bw_log prefix of a workload; fio writes
// PREFIX_bw.N.log for job N (1-based) in its working directory.
func BandwidthLogPrefix(workload string) string {
	var b strings.Builder
	b.WriteString("storbench-")
	for _, r := range workload {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// BandwidthLogFile is the log fio writes for job n (1-based) of a workload.
func BandwidthLogFile(workload string, n int) string {
	return fmt.Sprintf("%s_bw.%d.log", BandwidthLogPrefix(workload), n)
}

// SteadyStateJSON mirrors the "steadystate" object fio adds to a job that
// asked for steady-state detection.
type SteadyStateJSON struct {
	Criterion string `json:"ss"`
	// Duration is ss_dur in seconds.
	Duration int64 `json:"duration"`
	Attained int   `json:"attained"`
	// Measured is the last value of the criterion: "-1.24%" or a number.
	Measured string `json:"criterion"`
}

// steadyStateResult converts fio's steady-state object; runtime is how long
// the job ran (it stops at steady state).
func steadyStateResult(s *SteadyStateJSON, runtime time.Duration) *result.SteadyState {
	if s == nil || s.Criterion == "" {
		return nil
	}
	return &result.SteadyState{
		Criterion: tidyCriterion(s.Criterion),
		Window:    time.Duration(s.Duration) * time.Second,
		Reached:   s.Attained != 0,
		After:     runtime,
		Measured:  tidyCriterion(s.Measured),
	}
}

// tidyCriterion turns fio's "iops_slope:2.000000%" into "iops_slope:2%".
func tidyCriterion(c string) string {
	name, val, ok := strings.Cut(c, ":")
	if !ok {
		name, val = "", c
	}
	pct := strings.HasSuffix(val, "%")
	f, err := strconv.ParseFloat(strings.TrimSuffix(val, "%"), 64)
	if err != nil {
		return c
	}
	out := strconv.FormatFloat(f, 'g', 4, 64)
	if pct {
		out += "%"
	}
	if name != "" {
		return name + ":" + out
	}
	return out
}

// BandwidthSample is one averaged entry of fio's bandwidth log.
type BandwidthSample struct {
	// At is the end of the averaging period, from the start of the job.
	At          time.Duration
	BytesPerSec float64
}

// ParseBandwidthLog reads fio's bandwidth log: lines "msec, KiB/s,
// direction, block size[, offset]". Only entries of direction dir (0 read,
// 1 write, 2 trim) are kept. Entries of several jobs are to be merged by
// the caller (MergeBandwidthLogs).
func ParseBandwidthLog(data []byte, dir int) ([]BandwidthSample, error) {
	var out []BandwidthSample
	sc := bufio.NewScanner(bytes.NewReader(data))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		f := strings.Split(line, ",")
		if len(f) < 3 {
			return nil, fmt.Errorf("bandwidth log line %d: %q has fewer than 3 fields", n, line)
		}
		ms, err1 := strconv.ParseInt(strings.TrimSpace(f[0]), 10, 64)
		kib, err2 := strconv.ParseFloat(strings.TrimSpace(f[1]), 64)
		d, err3 := strconv.Atoi(strings.TrimSpace(f[2]))
		if err1 != nil || err2 != nil || err3 != nil {
			return nil, fmt.Errorf("bandwidth log line %d: %q is not \"msec, KiB/s, direction, ...\"", n, line)
		}
		if d != dir {
			continue
		}
		out = append(out, BandwidthSample{At: time.Duration(ms) * time.Millisecond, BytesPerSec: kib * 1024})
	}
	return out, sc.Err()
}

// MergeBandwidthLogs adds up the logs of several jobs of one workload,
// period by period (the i-th entries of each log cover the same period).
func MergeBandwidthLogs(logs [][]BandwidthSample) []BandwidthSample {
	var out []BandwidthSample
	for _, l := range logs {
		for i, s := range l {
			if i < len(out) {
				out[i].BytesPerSec += s.BytesPerSec
			} else {
				out = append(out, s)
			}
		}
	}
	return out
}

// longestRuntime is how long the job's busiest direction ran.
func longestRuntime(r *result.Result) time.Duration {
	var d time.Duration
	for _, x := range []*result.Direction{r.Read, r.Write, r.Trim} {
		if x != nil && x.Runtime > d {
			d = x.Runtime
		}
	}
	return d
}
