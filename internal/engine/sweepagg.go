package engine

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
)

// logSample is one averaged entry of a client's IOPS or bandwidth log: the
// end of its period in Unix time, its rate (I/Os or bytes per second) and
// its direction (0 read, 1 write, 2 trim).
type logSample struct {
	at    time.Time
	value float64
	dir   int
}

// clientLog is one client's two logs.
type clientLog struct{ iops, bw []logSample }

// parseClientLog reads a client's IOPS and bandwidth logs, written with
// log_unix_epoch (fio's bandwidth-log reader reads both: the same lines,
// its KiB/s to bytes scaling undone for the IOPS).
func parseClientLog(iops, bw []byte) (clientLog, error) {
	var out clientLog
	var errs []string
	for _, l := range []struct {
		data  []byte
		into  *[]logSample
		scale float64
	}{{iops, &out.iops, 1.0 / 1024}, {bw, &out.bw, 1}} {
		for dir := 0; dir <= 2; dir++ {
			ss, err := fio.ParseBandwidthLog(l.data, dir)
			if err != nil {
				errs = append(errs, err.Error())
				break
			}
			for _, s := range ss {
				*l.into = append(*l.into, logSample{at: time.UnixMilli(s.At.Milliseconds()), value: s.BytesPerSec * l.scale, dir: dir})
			}
		}
	}
	if len(errs) > 0 {
		return out, fmt.Errorf("%s", strings.Join(errs, "; "))
	}
	return out, nil
}

// sweepReading is what one step left: fio's output (one job per client,
// in order) and each client's logs (1-based), averaged over interval; the
// planned runtime judges late starts.
type sweepReading struct {
	output   *fio.Output
	logs     map[int]clientLog
	interval time.Duration
	planned  time.Duration
}

// sweepFigures are a step's aggregate and the facts about its clients.
type sweepFigures struct {
	clients int
	dirs    [3]*result.Direction
	cpu     result.CPU
	// spread is how far apart the clients started; window how long all ran
	// at once (0: not known from the logs).
	spread, window time.Duration
	// from and to are that window (zero: not known): telemetry is read
	// over it too (telemetry.Within).
	from, to time.Time
	// lastDoneIOPS is every I/O over the first start to the last end.
	lastDoneIOPS         float64
	clientMin, clientMax float64
	late, failed         []string
}

// clientSpan is when one client ran, read from its logs: the first entry
// closes its first period, and fio's runtime runs from its start.
type clientSpan struct {
	start, end time.Time
	known      bool
}

// aggregateSweep computes a step's figures. Each direction's rate is the
// sum over clients of each client's mean logged rate over the window when
// every client ran (from the last to start until the first done): the
// figure elbencho calls "first done". Counts (I/Os, bytes) are fio's for
// each client's whole run; the latency is every completion of every
// client, from the merged json+ bins. A client whose logs are missing
// counts with fio's own rate for its run.
func aggregateSweep(in sweepReading) sweepFigures {
	jobs := in.output.Jobs
	f := sweepFigures{clients: len(jobs)}
	spans := make([]clientSpan, len(jobs))
	results := make([]result.Result, len(jobs))
	for i, j := range jobs {
		results[i] = in.output.ResultOf(j)
		if j.Error != 0 {
			f.failed = append(f.failed, fmt.Sprintf("client %d: %s", i+1, results[i].Error))
		}
		spans[i] = spanOf(in.logs[i+1], in.interval, runtimeOf(&results[i]))
	}
	winStart, winEnd, first, last := window(spans)
	if !winStart.IsZero() {
		f.spread = spreadOf(spans, first)
		if winEnd.After(winStart) {
			f.window = winEnd.Sub(winStart)
			f.from, f.to = winStart, winEnd
		}
		for i, s := range spans {
			if s.known && s.start.Sub(first) > in.planned/4 {
				f.late = append(f.late, fmt.Sprintf("client %d (+%s)", i+1, s.start.Sub(first).Round(time.Millisecond)))
			}
		}
	}
	perClient := make([]float64, len(jobs))
	var totalIOs int64
	for d := range 3 {
		f.dirs[d] = mergeDirection(jobs, results, d, func(i int, src *result.Direction) (float64, float64) {
			iops, bw := src.IOPS, src.BytesPerSec
			if f.window > 0 {
				if v, ok := meanIn(in.logs[i+1].iops, d, winStart, winEnd, in.interval); ok {
					iops = v
				}
				if v, ok := meanIn(in.logs[i+1].bw, d, winStart, winEnd, in.interval); ok {
					bw = v
				}
			}
			perClient[i] += iops
			return iops, bw
		})
		if f.dirs[d] != nil {
			totalIOs += f.dirs[d].TotalIOs
			if f.window > 0 {
				f.dirs[d].Runtime = f.window
			}
		}
	}
	for i := range results {
		f.cpu.UserPercent += results[i].CPU.UserPercent
		f.cpu.SystemPercent += results[i].CPU.SystemPercent
		if i == 0 || perClient[i] < f.clientMin {
			f.clientMin = perClient[i]
		}
		f.clientMax = max(f.clientMax, perClient[i])
	}
	if span := last.Sub(first); !first.IsZero() && span > 0 {
		f.lastDoneIOPS = float64(totalIOs) / span.Seconds()
	}
	return f
}

// spanOf is a client's run read from its IOPS log.
func spanOf(l clientLog, interval, runtime time.Duration) clientSpan {
	if len(l.iops) == 0 {
		return clientSpan{}
	}
	start := l.iops[0].at
	for _, s := range l.iops {
		if s.at.Before(start) {
			start = s.at
		}
	}
	start = start.Add(-interval)
	return clientSpan{start: start, end: start.Add(runtime), known: true}
}

// window is when every known client ran at once, and the first start and
// last end; zero times when no client's span is known.
func window(spans []clientSpan) (winStart, winEnd, first, last time.Time) {
	for _, s := range spans {
		if !s.known {
			continue
		}
		if winStart.IsZero() || s.start.After(winStart) {
			winStart = s.start
		}
		if winEnd.IsZero() || s.end.Before(winEnd) {
			winEnd = s.end
		}
		if first.IsZero() || s.start.Before(first) {
			first = s.start
		}
		if s.end.After(last) {
			last = s.end
		}
	}
	return winStart, winEnd, first, last
}

func spreadOf(spans []clientSpan, first time.Time) time.Duration {
	var d time.Duration
	for _, s := range spans {
		if s.known {
			d = max(d, s.start.Sub(first))
		}
	}
	return d
}

// meanIn is the mean of direction dir's entries whose period lies within
// [from, to], allowing a quarter period at each end: the clients' periods
// are not aligned with one another.
func meanIn(ss []logSample, dir int, from, to time.Time, interval time.Duration) (float64, bool) {
	slack := interval / 4
	var sum float64
	n := 0
	for _, s := range ss {
		if s.dir != dir || s.at.Add(-interval).Before(from.Add(-slack)) || s.at.After(to.Add(slack)) {
			continue
		}
		sum += s.value
		n++
	}
	if n == 0 {
		return 0, false
	}
	return sum / float64(n), true
}

// mergeDirection adds up direction d of every client: rate gives client
// i's IOPS and bytes per second over the window; counts are summed and
// latencies merged from the bins. Nil when no client did I/O that way.
func mergeDirection(jobs []fio.JobResult, results []result.Result, d int, rate func(i int, src *result.Direction) (iops, bw float64)) *result.Direction {
	var out *result.Direction
	var slat, clat, lat []*fio.Latency
	for i, j := range jobs {
		src := [3]*result.Direction{results[i].Read, results[i].Write, results[i].Trim}[d]
		raw := [3]*fio.Direction{j.Read, j.Write, j.Trim}[d]
		if src == nil || raw == nil {
			continue
		}
		if out == nil {
			out = &result.Direction{}
		}
		iops, bw := rate(i, src)
		out.IOPS += iops
		out.BytesPerSec += bw
		out.TotalIOs += src.TotalIOs
		out.Bytes += src.Bytes
		out.Errors += src.Errors
		out.Runtime = max(out.Runtime, src.Runtime)
		slat, clat, lat = append(slat, raw.SlatNS), append(clat, raw.ClatNS), append(lat, raw.LatNS)
	}
	if out == nil {
		return nil
	}
	out.Submission, out.Completion, out.Total = fio.MergeLatencies(slat), fio.MergeLatencies(clat), fio.MergeLatencies(lat)
	return out
}

// apply writes the figures into a step's result.
func (f sweepFigures) apply(r *result.Result) {
	r.Read, r.Write, r.Trim = f.dirs[0], f.dirs[1], f.dirs[2]
	r.CPU = f.cpu
	r.Status = result.StatusComplete
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	ms := func(d time.Duration) string { return strconv.FormatFloat(float64(d)/1e6, 'f', 1, 64) }
	num := func(v float64) string { return strconv.FormatFloat(v, 'f', 0, 64) }
	result.LabelSweepStartSpread.Set(r.Labels, ms(f.spread))
	result.LabelSweepWindow.Set(r.Labels, ms(f.window))
	result.LabelSweepLastDoneIOPS.Set(r.Labels, num(f.lastDoneIOPS))
	result.LabelSweepClientMinIOPS.Set(r.Labels, num(f.clientMin))
	result.LabelSweepClientMaxIOPS.Set(r.Labels, num(f.clientMax))
	if len(f.late) > 0 {
		result.LabelSweepLate.Set(r.Labels, strings.Join(f.late, ", "))
	}
	if len(f.failed) > 0 {
		result.LabelSweepFailed.Set(r.Labels, strings.Join(f.failed, "; "))
	}
}

// runtimeOf is how long a client's busiest direction ran.
func runtimeOf(r *result.Result) time.Duration {
	var d time.Duration
	for _, x := range []*result.Direction{r.Read, r.Write, r.Trim} {
		if x != nil {
			d = max(d, x.Runtime)
		}
	}
	return d
}
