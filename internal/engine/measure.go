package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cliff"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/units"
)

// Measurement holds the checks that make figures trustworthy beyond fio's
// settings (docs/measurement.md). Cache-risk marks, steady-state marks and
// write-cliff detection are always on; these fields ask for more.
type Measurement struct {
	// RepeatAuto repeats each workload until its IOPS are known precisely
	// enough, instead of Plan.Repeat times.
	RepeatAuto *RepeatAuto
	// DropCaches syncs and drops this host's page cache before every
	// cache-prone workload (--defeat-cache), where privileged.
	DropCaches bool
	// Precondition writes a device target sequentially twice before its
	// first random-write workload (SNIA PTS).
	Precondition bool
	// Cliff tunes the write-cliff detector.
	Cliff cliff.Options
}

// RepeatAuto is --repeat auto: repeat until the 95% confidence interval of
// the mean IOPS is within ±Precision of the mean, at least Min and at most
// Max times.
type RepeatAuto struct {
	Precision float64
	Min, Max  int
}

// Precision is the relative half-width of the 95% confidence interval of
// values' mean (Student's t); +Inf with fewer than two values.
func Precision(values []float64) float64 {
	s := analysis.Summarize(values)
	if s.CI95 == nil || s.Mean == 0 {
		return math.Inf(1)
	}
	return (s.CI95.High - s.Mean) / math.Abs(s.Mean)
}

// remoteFS are filesystems whose data lives on a server: its cache cannot
// be dropped from the client.
var remoteFS = map[string]bool{"nfs": true, "nfs4": true, "cifs": true, "smb3": true, "smbfs": true, "ceph": true,
	"fuse.ceph": true, "fuse.cephfs": true, "glusterfs": true, "fuse.glusterfs": true, "9p": true, "fuse.sshfs": true, "virtiofs": true}

// measuredStep is one workload of a suite (or the raw job) with what the
// checks need to know about it.
type measuredStep struct {
	step
	w *spec.Workload // nil for a raw job
}

// measurer does the checks for one prepared target.
type measurer struct {
	*readyTarget
	e     *Engine
	plan  Plan
	cache int64 // bytes of memory that can cache the target; 0 unknown
	// cacheSource names that memory for the user.
	cacheSource  string
	remote       bool
	dropFailed   bool
	remoteTold   bool
	precondition *result.Precondition
	preFailed    bool
}

func (e *Engine) newMeasurer(ctx context.Context, plan Plan, rt *readyTarget) *measurer {
	p, labels := rt.prepared, rt.labels
	m := &measurer{readyTarget: rt, e: e, plan: plan, remote: remoteFS[result.LabelFSType.Of(labels)]}
	// A runner (or the user) that knows better names the memory in front
	// of the storage: a node's, a remote host's, a NAS server's.
	if v := result.LabelMemBytes.Of(labels); v != "" {
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && n > 0 {
			m.cache, m.cacheSource = n, "memory (label mem_bytes)"
			if p.MemoryOf != "" {
				m.cacheSource = "memory of " + p.MemoryOf
			}
			return m
		}
		e.Observer.Notice(p.Name, fmt.Sprintf("label %s=%q is not a number of bytes: reading /proc/meminfo instead", result.LabelMemBytes, v))
	}
	out, err := execx.Output(p.Cmder.Command(ctx, "cat", "/proc/meminfo"))
	if err == nil {
		if m.cache = MemTotal(out); m.cache == 0 {
			err = errors.New("no MemTotal in /proc/meminfo")
		}
	}
	if err != nil {
		e.Observer.Notice(p.Name, fmt.Sprintf("memory size unknown (%v): results are not checked for a cache; label %s to give it", err, result.LabelMemBytes))
		return m
	}
	m.cacheSource = "host RAM"
	if h := result.LabelHostname.Of(labels); h != "" {
		m.cacheSource = "RAM of " + h
	}
	return m
}

// MemTotal reads MemTotal from /proc/meminfo, in bytes; 0 if absent
// (runner.MemTotal).
func MemTotal(meminfo []byte) int64 { return runner.MemTotal(meminfo) }

// span is the bytes a workload touches on this target.
func (m *measurer) span(w *spec.Workload) int64 {
	s := int64(w.FileSize)
	if m.prepared.File.Size > 0 && m.prepared.File.Size < s {
		s = m.prepared.File.Size
	}
	return s
}

// before runs what must precede a workload: preconditioning and dropping
// the page cache. Problems become notices; the workload still runs.
func (m *measurer) before(ctx context.Context, w *spec.Workload) (dropped bool) {
	if w == nil {
		return false
	}
	if m.plan.Measurement.Precondition && w.RandomWrite() && m.precondition == nil && !m.preFailed {
		m.preconditionDevice(ctx)
	}
	return m.dropCache(ctx, w)
}

// dropCache drops the page cache before a workload that could be served
// from it, when asked (--defeat-cache); problems become notices.
func (m *measurer) dropCache(ctx context.Context, w *spec.Workload) (dropped bool) {
	if w == nil || !m.plan.Measurement.DropCaches || !w.CacheProne() {
		return false
	}
	if m.remote && !m.remoteTold {
		m.remoteTold = true
		m.e.Observer.Notice(m.prepared.Name, "network storage: the server's cache cannot be dropped from here, so reads may still be answered from its memory")
	}
	if m.dropFailed {
		return false
	}
	cmd := m.prepared.Cmder.Command(ctx, "sh", "-c", "sync && echo 1 > /proc/sys/vm/drop_caches")
	if _, err := execx.Output(cmd); err != nil {
		m.dropFailed = true
		m.e.Observer.Notice(m.prepared.Name, "cannot drop the page cache here (needs root): "+err.Error())
		return false
	}
	return true
}

func (m *measurer) preconditionDevice(ctx context.Context) {
	if !m.prepared.Device {
		m.preFailed = true
		m.e.Observer.Notice(m.prepared.Name, "--precondition applies to block devices: skipped for this "+m.prepared.Kind)
		return
	}
	size := m.prepared.File.Size
	m.e.Observer.Notice(m.prepared.Name, fmt.Sprintf("preconditioning: writing the device sequentially twice (%s each)", units.Bytes(size)))
	ioengine := m.ioEngine
	if ioengine == "" {
		ioengine = "libaio"
	}
	job := fio.Job{
		Global: []fio.Option{{Key: "filename", Value: m.prepared.File.Name}, {Key: "randrepeat", Value: "0"}, {Key: "refill_buffers", Value: "1"}},
		Sections: []fio.Section{{Name: "precondition", Options: []fio.Option{
			{Key: "rw", Value: "write"}, {Key: "bs", Value: "1048576"}, {Key: "iodepth", Value: "16"},
			{Key: "ioengine", Value: ioengine}, {Key: "direct", Value: "1"},
			{Key: "size", Value: strconv.FormatInt(size, 10)}, {Key: "loops", Value: "2"},
		}}},
	}
	start := time.Now()
	if _, err := m.fr.Run(ctx, job, nil); err != nil {
		m.preFailed = true
		m.e.Observer.Notice(m.prepared.Name, "preconditioning failed, results are from a device in its current state: "+err.Error())
		return
	}
	m.precondition = &result.Precondition{Passes: 2, Bytes: size, Duration: time.Since(start)}
}

// annotate adds the checks' findings to a result before it is stored.
func (m *measurer) annotate(ctx context.Context, w *spec.Workload, dropped bool, logDir string, r *result.Result) {
	r.Labels = maps.Clone(r.Labels)
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if ss := r.SteadyState; ss != nil {
		result.LabelSteadyState.Set(r.Labels, "not_reached")
		if ss.Reached {
			result.LabelSteadyState.Set(r.Labels, "reached")
		}
		result.LabelSteadyStateAfter.Set(r.Labels, ss.After.Round(time.Millisecond).String())
	}
	if busy, ok := r.Telemetry.Stat(result.SeriesCPUBusy); ok {
		result.LabelCPUIdle.Set(r.Labels, strconv.FormatFloat(math.Max(0, 100-busy.Mean), 'f', 0, 64))
	}
	if m.precondition != nil {
		r.Precondition = m.precondition
		result.LabelPrecondition.Set(r.Labels, fmt.Sprintf("2x sequential, %s each", units.Bytes(m.precondition.Bytes)))
	}
	if w == nil {
		return
	}
	if w.CacheProne() && m.cache > 0 && m.span(w) <= m.cache {
		r.CacheRisk = &result.CacheRisk{SpanBytes: m.span(w), CacheBytes: m.cache, CacheSource: m.cacheSource, Dropped: dropped, Remote: m.remote}
		result.LabelCacheRisk.Set(r.Labels, CacheRiskText(r.CacheRisk))
	}
	if s := SubmissionBoundText(r, intOr(w.IODepth, 1), intOr(w.NumJobs, 1)); s != "" {
		result.LabelSubmissionBound.Set(r.Labels, s)
		m.e.Observer.Notice(m.prepared.Name, fmt.Sprintf("workload %s: %s", w.Name, s))
	}
	if w.BandwidthLog > 0 && w.Writes() {
		if err := m.findCliff(ctx, w, logDir, r); err != nil {
			m.e.Observer.Notice(m.prepared.Name, fmt.Sprintf("workload %s: write cliff not analysed: %v", w.Name, err))
		}
	}
}

// CacheRiskText says why a result may measure a cache, with the sizes.
func CacheRiskText(c *result.CacheRisk) string {
	s := fmt.Sprintf("may measure cache: span %s fits in %s %s", units.Bytes(c.SpanBytes), units.Bytes(c.CacheBytes), c.CacheSource)
	if c.Remote {
		s += "; the server's cache cannot be dropped from here"
	}
	return s
}

// findCliff reads fio's bandwidth logs of the workload from dir, looks for a
// write cliff and removes the logs.
func (m *measurer) findCliff(ctx context.Context, w *spec.Workload, dir string, r *result.Result) error {
	var logs [][]fio.BandwidthSample
	var errs []error
	for n := 1; n <= *w.NumJobs; n++ {
		path := fio.BandwidthLogFile(w.Name, n)
		if dir != "" {
			path = strings.TrimSuffix(dir, "/") + "/" + path
		}
		out, err := execx.Output(m.prepared.Cmder.Command(ctx, "cat", path))
		if err != nil {
			errs = append(errs, fmt.Errorf("reading %s: %w", path, err))
			continue
		}
		s, err := fio.ParseBandwidthLog(out, 1)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", path, err))
			continue
		}
		logs = append(logs, s)
		if _, err := execx.Output(m.prepared.Cmder.Command(ctx, "rm", "-f", path)); err != nil {
			errs = append(errs, err)
		}
	}
	if len(logs) == 0 {
		return errors.Join(errs...)
	}
	a := cliff.Find(cliff.FromLog(fio.MergeBandwidthLogs(logs)), m.plan.Measurement.Cliff)
	if a.Cliff != nil {
		r.WriteCliff = a.Cliff
		result.LabelCliffAtBytes.Set(r.Labels, strconv.FormatInt(a.Cliff.AtBytes, 10))
		result.LabelCliffBeforeBPS.Set(r.Labels, strconv.FormatFloat(a.Cliff.BeforeBytesPerSec, 'f', 0, 64))
		result.LabelCliffAfterBPS.Set(r.Labels, strconv.FormatFloat(a.Cliff.AfterBytesPerSec, 'f', 0, 64))
	} else if a.MeanBytesPerSec > 0 {
		result.LabelSustainedBPS.Set(r.Labels, strconv.FormatFloat(a.MeanBytesPerSec, 'f', 0, 64))
	}
	return errors.Join(errs...)
}

// logDir gives a device target's fio a working directory for its logs
// (a directory target's fio already works in storbench's own directory).
func (m *measurer) logDir(ctx context.Context, w *spec.Workload) (dir string, cleanup func(), err error) {
	// The runner's directory: the target's own, or the work directory
	// where the judged job files wait (rawjob.go).
	if w == nil || w.BandwidthLog == 0 || m.fr.Dir != "" {
		return m.fr.Dir, func() {}, nil
	}
	out, err := execx.Output(m.prepared.Cmder.Command(ctx, "mktemp", "-d", "/tmp/storbench-log.XXXXXX"))
	if err != nil {
		return "", nil, fmt.Errorf("creating a directory for fio's bandwidth log: %w", err)
	}
	dir = strings.TrimSpace(string(out))
	return dir, func() {
		if _, err := execx.Output(m.prepared.Cmder.Command(context.WithoutCancel(ctx), "rm", "-rf", dir)); err != nil {
			m.e.Observer.Notice(m.prepared.Name, "removing "+dir+": "+err.Error())
		}
	}, nil
}

// measuredSteps lists the plan's steps (the raw job, or the suite's
// workloads) with their workloads.
func measuredSteps(plan Plan, p *runner.Prepared) []measuredStep {
	if plan.RawJob != nil {
		return []measuredStep{{step: step{name: rawName(plan.RawJob), job: func(string) fio.Job { return fio.Job{Path: JobFileName} }}}}
	}
	out := make([]measuredStep, len(plan.Suite.Workloads))
	for i := range plan.Suite.Workloads {
		w := &plan.Suite.Workloads[i]
		out[i].w = w
		if w.Job != "" {
			out[i].step = step{name: w.Name, job: func(string) fio.Job { return fio.Job{Path: jobWorkloadFile(i)} }}
		} else {
			out[i].step = step{name: w.Name, expected: time.Duration(w.Ramp) + time.Duration(w.Runtime),
				job: func(ioEngine string) fio.Job { return fio.FromWorkload(*w, p.File, ioEngine) }}
		}
		if w.SteadyState != nil { // at most: fio may stop it sooner
			out[i].expected = time.Duration(w.Ramp) + time.Duration(w.SteadyState.MaxRuntime)
		}
	}
	return out
}

// runSteps runs every workload Plan.Repeat times, suite by suite, or under
// RepeatAuto until each is precise enough; repetitions stay interleaved so
// slow drifts (heat, background work) spread over every workload alike.
func (e *Engine) runSteps(ctx context.Context, run *result.Run, plan Plan, rt *readyTarget) (failures []error) {
	m := e.newMeasurer(ctx, plan, rt)
	p, steps := rt.prepared, rt.steps
	auto := plan.Measurement.RepeatAuto
	reps := plan.Repeat
	if auto != nil {
		reps = auto.Max
	}
	done := make([]bool, len(steps))
	iops := make([][]float64, len(steps))
	for rep := 1; rep <= reps; rep++ {
		for i, st := range steps {
			if done[i] {
				continue
			}
			dir, cleanup, err := m.logDir(ctx, st.w)
			if err != nil {
				failures = append(failures, err)
				if plan.FailFast {
					return failures
				}
				continue
			}
			dropped := m.before(ctx, st.w)
			step := rt.stepAt(run.ID, i, rep, reps)
			step.annotate = func(r *result.Result) {
				m.annotate(ctx, st.w, dropped, dir, r)
				if auto == nil {
					return
				}
				if v, ok := r.Metric(result.MetricIOPS); ok {
					iops[i] = append(iops[i], v)
				}
				if pr := Precision(iops[i]); !math.IsInf(pr, 1) {
					result.LabelRepeatPrecision.Set(r.Labels, strconv.FormatFloat(pr*100, 'f', 1, 64))
				}
			}
			inv := rt.invoke(step, st.job(rt.ioEngine))
			inv.fr.Dir = dir
			_, err = e.runStep(ctx, run, plan, inv)
			cleanup()
			if ctx.Err() != nil {
				return failures
			}
			if err != nil {
				failures = append(failures, err)
				if plan.FailFast {
					return failures
				}
			}
			if auto != nil && len(iops[i]) >= auto.Min {
				if pr := Precision(iops[i]); pr <= auto.Precision {
					done[i] = true
					e.Observer.Notice(p.Name, fmt.Sprintf("%s: IOPS known to ±%.1f%% (95%% confidence) after %d runs", st.name, pr*100, len(iops[i])))
				}
			}
		}
		if !containsFalse(done) {
			break
		}
	}
	if auto != nil {
		for i, st := range steps {
			if !done[i] {
				e.Observer.Notice(p.Name, fmt.Sprintf("%s: IOPS known only to ±%.1f%% after %d runs (asked ±%.1f%%; raise --repeat-max for more)",
					st.name, Precision(iops[i])*100, len(iops[i]), auto.Precision*100))
			}
		}
	}
	return failures
}

func containsFalse(b []bool) bool {
	for _, x := range b {
		if !x {
			return true
		}
	}
	return false
}
