// Package osdtelemetry records the Ceph OSDs behind a pool while a
// workload runs, beside a target's own telemetry: each OSD's bench, taken
// once when the sampler is made, and during every workload its commit
// latencies (`ceph osd perf`), its device waits (`perf dump`), the round
// trip and greeting of its address and whether it went down
// (result.Telemetry's OSDs). The rbd kind and the Kubernetes class kind
// both use it; analysis turns the figures into verdicts.
package osdtelemetry

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// OSDBench is the `ceph tell osd.N bench` each of the pool's OSDs runs
// once, before the run's first workload, when telemetry is asked for:
// 32 MiB in 4 MiB blocks, well inside Ceph's guard rails (BenchRequest)
// and about 1.5 s on a disk at 20 MB/s.
var OSDBench = ceph.BenchRequest{TotalBytes: 32 << 20, BlockBytes: 4 << 20}

// PerfInterval is how often `ceph osd perf` is read while a workload
// runs; Ceph refreshes its figures about every 5 s.
const PerfInterval = time.Second

// Options say which pool's OSDs to record and beside what.
type Options struct {
	// Ceph reaches the cluster (its Cmder runs the ceph CLI).
	Ceph ceph.Client
	// Pool is the pool whose OSDs are recorded: those acting for its PGs,
	// and its down OSDs while it runs short of copies.
	Pool string
	// Host is the target's own sampler (this host's, or the nodes' of a
	// Kubernetes class), whose telemetry carries the OSDs' figures.
	Host runner.Sampler
	// Source, when set, is said in the telemetry's Sources["osds"]: which
	// pool and why, and where the ceph CLI ran.
	Source string
}

// SourceKey is the key of result.Telemetry's Sources the OSD figures'
// origin is said under.
const SourceKey = "osds"

// New makes the sampler: o.Host's telemetry plus the pool's OSDs, each
// one's bench taken now (Bench, then Pool.Sampler).
func New(ctx context.Context, o Options) (runner.Sampler, error) {
	p, err := Bench(ctx, o.Ceph, o.Pool)
	if err != nil {
		return nil, err
	}
	return p.Sampler(o.Host, o.Source), nil
}

// Pool is a pool's OSDs as read and benched once: what every sampler of
// the pool starts from. It is not changed after Bench, so targets that
// run at once may share it.
type Pool struct {
	ceph ceph.Client
	osds []result.OSDFigures
	// addrs are the OSDs' public addresses (HOST:PORT).
	addrs map[int]string
}

// Bench reads the OSDs of pool and benches each one that is up, now. An
// OSD the bench cannot reach keeps its error; a pool whose OSDs cannot be
// read is an error naming the pool.
func Bench(ctx context.Context, cl ceph.Client, pool string) (*Pool, error) {
	pl, err := cl.PoolPlacement(ctx, pool)
	if err != nil {
		return nil, fmt.Errorf("the OSDs of pool %s: %w", pool, err)
	}
	all, err := cl.OSDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("the OSDs of pool %s: %w", pool, err)
	}
	inPool := map[int]bool{}
	for _, id := range pl.OSDs {
		inPool[id] = true
	}
	if pl.Undersized > 0 {
		// The pool runs short of copies: the down OSDs that should
		// hold them act for no PG, so the placement does not list
		// them; they are the pool's (and named down).
		for _, o := range all {
			if !o.Up {
				inPool[o.ID] = true
			}
		}
	}
	p := &Pool{ceph: cl, addrs: map[int]string{}}
	for _, o := range all {
		if !inPool[o.ID] {
			continue
		}
		if o.Addr != "" && o.Port > 0 {
			p.addrs[o.ID] = net.JoinHostPort(o.Addr, strconv.Itoa(o.Port))
		}
		f := result.OSDFigures{ID: o.ID, Host: o.Host, Device: strings.Join(o.Devices, ","), Up: o.Up}
		if o.Up {
			f.BenchBytesPerSec, f.BenchError = bench(ctx, cl, o.ID)
		}
		p.osds = append(p.osds, f)
	}
	rebenchSlow(ctx, cl, p.osds)
	return p, nil
}

// OSDs are the pool's OSDs as Bench found them (a copy).
func (p *Pool) OSDs() []result.OSDFigures { return append([]result.OSDFigures(nil), p.osds...) }

// Sampler records host's telemetry (nil: none) plus the pool's OSDs
// during each workload; source, when set, is said in Sources[SourceKey].
func (p *Pool) Sampler(host runner.Sampler, source string) runner.Sampler {
	return &osdSampler{host: host, source: source, ceph: p.ceph, osds: p.osds, addrs: p.addrs}
}

// bench runs OSDBench on one OSD: its throughput, or why it has none.
func bench(ctx context.Context, cl ceph.Client, id int) (float64, string) {
	req := OSDBench
	req.OSD = id
	b, err := cl.Bench(ctx, req)
	if err != nil {
		return 0, err.Error()
	}
	return b.BytesPerSec, ""
}

// RebenchRatio: an OSD whose bench came out under a third of the fastest
// other's is benched once more and keeps the better figure. A short bench
// on a busy host varies that much with nothing wrong (157 against 770-2757
// MB/s was seen, the same OSD at 940 MB/s a minute before); a slow disk
// stays slow.
const RebenchRatio = 3.0

func rebenchSlow(ctx context.Context, cl ceph.Client, figs []result.OSDFigures) {
	for i, f := range figs {
		hi := 0.0
		for j, x := range figs {
			if j != i {
				hi = max(hi, x.BenchBytesPerSec)
			}
		}
		if f.BenchBytesPerSec <= 0 || f.BenchBytesPerSec*RebenchRatio >= hi {
			continue
		}
		if again, _ := bench(ctx, cl, f.ID); again > f.BenchBytesPerSec {
			figs[i].BenchBytesPerSec = again
		}
	}
}

// osdSampler records the target's own telemetry and the pool's OSDs.
type osdSampler struct {
	host   runner.Sampler
	source string
	ceph   ceph.Client
	osds   []result.OSDFigures
	// addrs are the OSDs' public addresses (HOST:PORT), whose round trips
	// are measured during each workload.
	addrs map[int]string
}

// RTTInterval and RTTTimeout pace the round trips to the OSDs measured
// while a workload runs, each with the wait for the OSD's banner (a
// Ceph daemon speaks first on every connection).
const (
	RTTInterval = 250 * time.Millisecond
	RTTTimeout  = 2 * time.Second
)

// Start implements runner.Sampler.
func (s *osdSampler) Start() runner.Recording {
	ctx, cancel := context.WithCancel(context.Background())
	// What `ceph osd perf` says before the workload: the figures of the
	// one before (Ceph refreshes them about every 5 s), which the
	// workload's first samples repeat until the refresh.
	// It is read beside the OSDs' counters: each ceph CLI call costs
	// about a second on a busy host, before every workload.
	var before []ceph.Latency
	perfRead := make(chan struct{})
	go func() {
		defer close(perfRead)
		before, _ = s.ceph.Perf(ctx)
	}()
	var addrs []string
	for _, a := range s.addrs {
		addrs = append(addrs, a)
	}
	var host runner.Recording
	if s.host != nil {
		host = s.host.Start()
	}
	counters := s.dumps(ctx)
	<-perfRead
	r := &osdRecording{host: host, sampler: s, cancel: cancel, done: make(chan struct{}), before: before,
		counters: counters, rtt: netfs.WatchGreeting(addrs, RTTInterval, RTTTimeout)}
	go func() {
		defer close(r.done)
		r.samples, r.err = s.ceph.SamplePerf(ctx, PerfInterval)
	}()
	return r
}

// osdRecording is one workload's recording.
type osdRecording struct {
	host    runner.Recording
	sampler *osdSampler
	cancel  context.CancelFunc
	done    chan struct{}
	before  []ceph.Latency
	// counters are the OSDs' latency counters as the workload began.
	counters map[int]ceph.OSDCounters
	rtt      *netfs.RTTWatch
	samples  []ceph.PerfSample
	err      error
	once     sync.Once
	out      *result.Telemetry
}

// Stop implements runner.Recording: the host's telemetry with the OSDs'
// figures for this workload.
func (r *osdRecording) Stop() *result.Telemetry {
	r.once.Do(func() {
		r.cancel()
		<-r.done
		rtts := r.rtt.Stop()
		greetings := r.rtt.Greetings()
		if r.host != nil {
			r.out = r.host.Stop()
		}
		if r.out == nil {
			r.out = &result.Telemetry{}
		}
		r.out.OSDs = osdFigures(r.sampler.osds, r.before, r.samples)
		// An OSD that went down since the sampler was made (or during the
		// workload) ran the workload down: Ceph's map as it ends says so.
		// (Read beside the counters after it, as at Start.)
		ctx, cancel := context.WithTimeout(context.Background(), RTTTimeout+5*time.Second)
		var now []ceph.OSD
		var nowErr error
		mapRead := make(chan struct{})
		go func() {
			defer close(mapRead)
			now, nowErr = r.sampler.ceph.OSDs(ctx)
		}()
		after := r.sampler.dumps(ctx)
		<-mapRead
		cancel()
		if nowErr == nil {
			markDown(r.out.OSDs, now)
		}
		for i := range r.out.OSDs {
			o := &r.out.OSDs[i]
			if a, ok := after[o.ID]; ok {
				b := r.counters[o.ID]
				o.DeviceWait, _ = a.DeviceWait.Since(b.DeviceWait)
				o.CommitMean, _ = a.Commit.Since(b.Commit)
			}
		}
		for i := range r.out.OSDs {
			addr := r.sampler.addrs[r.out.OSDs[i].ID]
			r.out.OSDs[i].RTT, r.out.OSDs[i].Greeting = rtts[addr], greetings[addr]
		}
		if r.sampler.source != "" {
			if r.out.Sources == nil {
				r.out.Sources = map[string]string{}
			}
			r.out.Sources[SourceKey] = r.sampler.source
		}
		if r.err != nil {
			r.out.Missing = append(r.out.Missing, "ceph osd perf: "+r.err.Error())
		}
	})
	return r.out
}

// PerfDumpTimeout bounds each OSD's `ceph tell osd.N perf dump` (a frozen
// OSD never answers).
const PerfDumpTimeout = 5 * time.Second

// dumps reads the latency counters of the pool's up OSDs, at once; an
// OSD that does not answer has none.
func (s *osdSampler) dumps(ctx context.Context) map[int]ceph.OSDCounters {
	ctx, cancel := context.WithTimeout(ctx, PerfDumpTimeout)
	defer cancel()
	out := map[int]ceph.OSDCounters{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for _, o := range s.osds {
		if !o.Up {
			continue
		}
		wg.Go(func() {
			c, err := s.ceph.PerfDump(ctx, o.ID)
			if err != nil {
				return
			}
			mu.Lock()
			out[o.ID] = c
			mu.Unlock()
		})
	}
	wg.Wait()
	return out
}

// markDown marks the figures of the OSDs now lists as down.
func markDown(figs []result.OSDFigures, now []ceph.OSD) {
	for _, o := range now {
		for i := range figs {
			if figs[i].ID == o.ID && !o.Up {
				figs[i].Up = false
			}
		}
	}
}

// osdFigures are the OSDs with the commit latencies samples hold for
// them. Leading samples that repeat an OSD's figure from before the
// workload are left out: Ceph had not refreshed it yet, so it is the
// previous workload's (kept when no sample ever differs: a steady OSD).
func osdFigures(osds []result.OSDFigures, before []ceph.Latency, samples []ceph.PerfSample) []result.OSDFigures {
	prev := map[int]time.Duration{}
	for _, l := range before {
		prev[l.OSD] = l.Commit
	}
	out := make([]result.OSDFigures, len(osds))
	for i, o := range osds {
		var all []time.Duration
		for _, s := range samples {
			for _, l := range s.Latencies {
				if l.OSD == o.ID {
					all = append(all, l.Commit)
				}
			}
		}
		p, known := prev[o.ID]
		first := 0
		for known && first < len(all) && all[first] == p {
			first++
		}
		if first == len(all) {
			first = 0
		}
		o.Commit = all[first:]
		if len(o.Commit) == 0 {
			o.Commit = nil
		}
		out[i] = o
	}
	return out
}
