package fio

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Output is one JSON document fio printed.
type Output struct {
	Version     string      `json:"fio version"`
	TimestampMS int64       `json:"timestamp_ms"`
	Jobs        []JobResult `json:"jobs"`
	// GlobalOptions are the [global] options of a job file, as fio reports
	// them.
	GlobalOptions map[string]string `json:"global options"`
	// ClientStats holds the jobs when fio ran in client/server mode.
	ClientStats []JobResult `json:"client_stats"`
}

// JobResult is one job's figures in fio's JSON output.
type JobResult struct {
	Name     string            `json:"jobname"`
	GroupID  int               `json:"groupid"`
	Error    int               `json:"error"`
	Elapsed  int64             `json:"elapsed"` // seconds
	ETA      int64             `json:"eta"`     // seconds
	Options  map[string]string `json:"job options"`
	Read     *DirectionJSON    `json:"read"`
	Write    *DirectionJSON    `json:"write"`
	Trim     *DirectionJSON    `json:"trim"`
	Sync     *SyncJSON         `json:"sync"`
	UsrCPU   float64           `json:"usr_cpu"`
	SysCPU   float64           `json:"sys_cpu"`
	Hostname string            `json:"hostname"`
	// SteadyState is present when the job asked for steady-state detection.
	SteadyState *SteadyStateJSON `json:"steadystate"`
}

// DirectionJSON mirrors fio's read/write/trim objects.
type DirectionJSON struct {
	IOBytes   int64    `json:"io_bytes"`
	BWBytes   float64  `json:"bw_bytes"`
	IOPS      float64  `json:"iops"`
	RuntimeMS int64    `json:"runtime"`
	TotalIOs  int64    `json:"total_ios"`
	ShortIOs  int64    `json:"short_ios"`
	DropIOs   int64    `json:"drop_ios"`
	Slat      *LatJSON `json:"slat_ns"`
	Clat      *LatJSON `json:"clat_ns"`
	Lat       *LatJSON `json:"lat_ns"`
}

// SyncJSON mirrors fio's sync object (fsync/fdatasync latency).
type SyncJSON struct {
	TotalIOs int64    `json:"total_ios"`
	Lat      *LatJSON `json:"lat_ns"`
}

// LatJSON mirrors fio's latency objects, in nanoseconds.
type LatJSON struct {
	Min        float64            `json:"min"`
	Max        float64            `json:"max"`
	Mean       float64            `json:"mean"`
	StdDev     float64            `json:"stddev"`
	N          int64              `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
}

// AllJobs returns the jobs of a local run or of client/server output.
func (o *Output) AllJobs() []JobResult {
	if len(o.Jobs) > 0 {
		return o.Jobs
	}
	var out []JobResult
	for _, j := range o.ClientStats {
		// fio adds an "All clients" summary after the per-client jobs.
		if j.Name != "All clients" {
			out = append(out, j)
		}
	}
	return out
}

// ParseOutputs reads every JSON document in fio's stdout, in order. fio may
// print text around them (warnings such as "cache invalidation ...
// Permission denied" on raw devices): such lines are returned as noise.
func ParseOutputs(r io.Reader) (docs []Output, raws [][]byte, noise []string, err error) {
	err = scanDocuments(r, func(raw []byte) error {
		o, err := decode(raw)
		if err != nil {
			return err
		}
		docs = append(docs, o)
		raws = append(raws, raw)
		return nil
	}, func(line string) { noise = append(noise, line) })
	return docs, raws, noise, err
}

// scanDocuments splits fio's output into top-level JSON documents. fio
// pretty-prints each document starting with a line "{" and ending with a
// line "}"; everything else is passed to noise.
func scanDocuments(r io.Reader, doc func([]byte) error, noise func(string)) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 256*1024), 64*1024*1024)
	var buf bytes.Buffer
	in := false
	for sc.Scan() {
		line := sc.Text()
		switch {
		case !in && strings.TrimRight(line, " \r") == "{":
			in = true
			buf.Reset()
			buf.WriteString(line)
			buf.WriteByte('\n')
		case in:
			buf.WriteString(line)
			buf.WriteByte('\n')
			if strings.TrimRight(line, " \r") == "}" {
				in = false
				raw := append([]byte(nil), buf.Bytes()...)
				if err := doc(raw); err != nil {
					return err
				}
			}
		default:
			if s := strings.TrimSpace(line); s != "" {
				noise(s)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if in {
		return fmt.Errorf("fio's JSON output ends in the middle of a document (%d bytes read)", buf.Len())
	}
	return nil
}

// ToResult converts one job's figures into a result; identity fields (run,
// target, workload) are left for the caller.
func ToResult(j JobResult) result.Result {
	r := result.Result{
		Read:  direction(j.Read),
		Write: direction(j.Write),
		Trim:  direction(j.Trim),
		CPU:   result.CPU{UserPercent: j.UsrCPU, SystemPercent: j.SysCPU},
	}
	if j.Sync != nil && j.Sync.Lat != nil && j.Sync.Lat.N > 0 {
		l := latency(j.Sync.Lat)
		r.Sync = &l
	}
	r.SteadyState = steadyStateResult(j.SteadyState, longestRuntime(&r))
	if j.Error != 0 {
		r.Status = result.StatusFailed
		r.Error = fmt.Sprintf("fio job %s: error %d (%s)", j.Name, j.Error, errnoText(j.Error))
	} else {
		r.Status = result.StatusComplete
	}
	return r
}

func direction(d *DirectionJSON) *result.Direction {
	if d == nil || (d.TotalIOs == 0 && d.IOBytes == 0) {
		return nil
	}
	return &result.Direction{
		IOPS:        d.IOPS,
		BytesPerSec: d.BWBytes,
		TotalIOs:    d.TotalIOs,
		Bytes:       d.IOBytes,
		Runtime:     time.Duration(d.RuntimeMS) * time.Millisecond,
		Completion:  latency(d.Clat),
		Total:       latency(d.Lat),
		Submission:  latency(d.Slat),
		Errors:      d.ShortIOs + d.DropIOs,
	}
}

func latency(l *LatJSON) result.Latency {
	if l == nil || l.N == 0 {
		return result.Latency{}
	}
	out := result.Latency{
		Samples: l.N,
		Mean:    time.Duration(l.Mean),
		StdDev:  time.Duration(l.StdDev),
		Min:     time.Duration(l.Min),
		Max:     time.Duration(l.Max),
	}
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil {
			continue
		}
		out.Percentiles = append(out.Percentiles, result.Percentile{P: p, Value: time.Duration(v)})
	}
	result.SortPercentiles(out.Percentiles)
	return out
}
