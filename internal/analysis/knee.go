package analysis

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// The knee of a saturation sweep (docs/sweep.md) is the step after which
// more clients stop buying throughput, read between each usable step and
// the next:
//
//   - KneeMinGain: the aggregate grew by less than 10% per doubling of the
//     clients. Run to run, the same step on a quiet system varies by a few
//     percent (BENCHMARKS.md's repeat figures, 2 to 5%); 10% is twice that,
//     so a gain below it cannot be told from noise, and a storage that
//     still scales gains tens of percent per doubling (a disk's queue
//     filling, a second node's link joining). The knee is the first step
//     whose next one is flat: the first step on the plateau.
//   - KneeP99Factor: where no step is flat, p99 latency growing by more
//     than 2x per doubling names the step before it. Once throughput is
//     flat, Little's law makes the mean latency double with the clients; a
//     p99 rising faster than that means the clients mostly queue, so the
//     step bought what throughput it did with the slowest I/Os. Crossing a
//     hard limit (a throttle, a link) makes p99 jump on the very step that
//     reaches the limit, so the flat sign is read first: it names the
//     limit's step, the latency sign only a sweep that never levelled off.
const (
	KneeMinGain   = 0.10
	KneeP99Factor = 2.0
)

// SweepStep is one step of a sweep as views and the knee read it.
type SweepStep struct {
	Clients     int           `json:"clients"`
	IOPS        float64       `json:"iops"`
	BytesPerSec float64       `json:"bytes_per_sec"`
	P99         time.Duration `json:"p99_ns"`
	// ClientMinIOPS and ClientMaxIOPS are the slowest and fastest client.
	ClientMinIOPS float64       `json:"client_min_iops,omitempty"`
	ClientMaxIOPS float64       `json:"client_max_iops,omitempty"`
	StartSpread   time.Duration `json:"start_spread_ns"`
	// Unusable says why the step is shown but not used for the knee (a
	// failed or late client); empty for a usable step.
	Unusable string `json:"unusable,omitempty"`
	// LimitedBy and Evidence are the step's attribution (telemetry), if any.
	LimitedBy string `json:"limited_by,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
	// Device, DiskUtil and DiskQueue are the target's device as telemetry
	// saw it during the step: its mean utilisation (%) and queue depth;
	// zero when not sampled.
	Device    string  `json:"device,omitempty"`
	DiskUtil  float64 `json:"disk_util_pct,omitempty"`
	DiskQueue float64 `json:"disk_queue_depth,omitempty"`
}

// Knee's device sign, where no step's attribution is clear: past the knee
// the device's queue grew by KneeQueueGrowth or more for no more
// throughput while it was at least KneeDeviceBusy% utilised. A device
// serving requests in parallel (virtio, NVMe) reads 80% utilised at its
// limit, under telemetry's 90%; a queue that grows while the throughput
// does not is the device's limit whatever its utilisation says.
const (
	KneeQueueGrowth = 1.5
	KneeDeviceBusy  = 60.0
)

// rate is the step's throughput as the knee compares it: IOPS, or bytes
// per second where a step has no IOPS.
func (s SweepStep) rate() float64 {
	if s.IOPS > 0 {
		return s.IOPS
	}
	return s.BytesPerSec
}

// Knee is where a sweep stopped scaling, or why none was found.
type Knee struct {
	Found bool `json:"found"`
	// Clients is the knee step's client count; IOPS and BytesPerSec its
	// aggregate.
	Clients     int     `json:"clients,omitempty"`
	IOPS        float64 `json:"iops,omitempty"`
	BytesPerSec float64 `json:"bytes_per_sec,omitempty"`
	// Next is the step that showed it, Gain its throughput gain per
	// doubling over the knee (0.04 is 4%), P99Factor its p99 over the
	// knee's, per doubling.
	Next      int     `json:"next,omitempty"`
	Gain      float64 `json:"gain"`
	P99Factor float64 `json:"p99_factor,omitempty"`
	// Reason is "flat" (the gain below KneeMinGain) or "latency" (p99 past
	// KneeP99Factor), "" when not found.
	Reason string `json:"reason,omitempty"`
	// LimitedBy and Evidence are what bound the step past the knee, where
	// telemetry could tell.
	LimitedBy string `json:"limited_by,omitempty"`
	Evidence  string `json:"evidence,omitempty"`
	// Summary says it in one line.
	Summary string `json:"summary"`
}

// FindKnee names the knee of steps (any order): the first usable step
// whose next usable step gains less than KneeMinGain per doubling, else
// the first whose next one's p99 grows past KneeP99Factor per doubling.
// Unusable steps are skipped.
func FindKnee(steps []SweepStep) Knee {
	use := usableSteps(steps)
	for _, reason := range []string{"flat", "latency"} {
		for i := 0; i+1 < len(use); i++ {
			a, b := use[i], use[i+1]
			gain, p99f, ok := between(a, b)
			if !ok || (reason == "flat" && gain >= KneeMinGain) || (reason == "latency" && p99f <= KneeP99Factor) {
				continue
			}
			k := Knee{Found: true, Clients: a.Clients, IOPS: a.IOPS, BytesPerSec: a.BytesPerSec, Next: b.Clients,
				Gain: gain, P99Factor: p99f, Reason: reason, LimitedBy: b.LimitedBy, Evidence: b.Evidence}
			if unclearLimit(b.LimitedBy) {
				// Every step from the knee on meets the same wall; one
				// step's telemetry may fall short of its threshold
				// (a device 80% busy while the steps beside it read 90%).
				for _, s := range append(slices.Clone(use[i+2:]), a) {
					if !unclearLimit(s.LimitedBy) {
						k.LimitedBy, k.Evidence = s.LimitedBy, fmt.Sprintf("at %d clients: %s", s.Clients, s.Evidence)
						break
					}
				}
			}
			if unclearLimit(k.LimitedBy) && reason == "flat" && a.DiskQueue > 0 && b.DiskQueue >= KneeQueueGrowth*a.DiskQueue && b.DiskUtil >= KneeDeviceBusy {
				k.LimitedBy = "device"
				k.Evidence = fmt.Sprintf("device %s %.0f%% utilised, its queue %.1f -> %.1f requests from %d to %d clients for %+.0f%% throughput: requests wait for the device",
					b.Device, b.DiskUtil, a.DiskQueue, b.DiskQueue, a.Clients, b.Clients, gain*100)
			}
			k.Summary = kneeSummary(k, a, use[len(use)-1])
			return k
		}
	}
	k := Knee{}
	if len(use) < 2 {
		k.Summary = fmt.Sprintf("no knee: %d usable step(s), two are needed", len(use))
		return k
	}
	k.Gain, _, _ = between(use[len(use)-2], use[len(use)-1])
	k.Summary = fmt.Sprintf("no knee up to %d clients: still %+.0f%% per doubling", use[len(use)-1].Clients, k.Gain*100)
	return k
}

// between is the throughput gain and the p99 factor from step a to step b,
// both per doubling of the clients (p99f 0 when either p99 is unknown); ok
// is false when a has no throughput.
func between(a, b SweepStep) (gain, p99f float64, ok bool) {
	doublings := math.Log2(float64(b.Clients) / float64(a.Clients))
	if a.rate() <= 0 || doublings <= 0 {
		return 0, 0, false
	}
	gain = math.Pow(b.rate()/a.rate(), 1/doublings) - 1
	if a.P99 > 0 && b.P99 > 0 {
		p99f = math.Pow(float64(b.P99)/float64(a.P99), 1/doublings)
	}
	return gain, p99f, true
}

// usableSteps are the steps the knee reads, by client count.
func usableSteps(steps []SweepStep) []SweepStep {
	var out []SweepStep
	for _, s := range steps {
		if s.Unusable == "" && s.Clients > 0 {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Clients < out[j].Clients })
	return out
}

// kneeSummary reads "21.3k IOPS at 4 clients, then flat (+3% at 8); p99
// x3.1 at 8; limited by device".
func kneeSummary(k Knee, knee, last SweepStep) string {
	var b strings.Builder
	if knee.IOPS > 0 {
		fmt.Fprintf(&b, "%s IOPS", units.IOPS(knee.IOPS))
	} else {
		b.WriteString(units.MBps(knee.BytesPerSec))
	}
	fmt.Fprintf(&b, " at %d client%s", k.Clients, plural(k.Clients))
	if k.Reason == "flat" {
		fmt.Fprintf(&b, ", then flat (%+.0f%% per doubling at %d)", k.Gain*100, k.Next)
	} else {
		fmt.Fprintf(&b, ", then p99 x%.1f per doubling at %d (throughput %+.0f%%)", k.P99Factor, k.Next, k.Gain*100)
	}
	if knee.P99 > 0 && last.P99 > 0 && last.Clients > k.Clients {
		fmt.Fprintf(&b, "; p99 x%.1f at %d", float64(last.P99)/float64(knee.P99), last.Clients)
	}
	if k.LimitedBy != "" && k.LimitedBy != "unclear" {
		fmt.Fprintf(&b, "; limited by %s", k.LimitedBy)
	}
	return b.String()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// SweepView is one sweep: a workload on a target in one run, its steps by
// client count, and its knee.
type SweepView struct {
	RunID    string      `json:"run_id"`
	Target   string      `json:"target"`
	Workload string      `json:"workload"`
	Steps    []SweepStep `json:"steps"`
	Knee     Knee        `json:"knee"`
}

// Sweeps gathers the sweep results (rounds result.SweepRound) into one
// view per run, target and workload, in the order first seen.
func Sweeps(results []result.Result) []SweepView {
	figs := make([]result.Figures, len(results))
	for i := range results {
		figs[i] = results[i].Figures()
	}
	return sweepsOf(figs, func(i int, s *SweepStep) {
		if tm := results[i].Telemetry; tm != nil {
			s.Device = tm.Device
			if u, ok := tm.Stat(result.SeriesDiskUtil); ok {
				s.DiskUtil = u.Mean
			}
			if q, ok := tm.Stat(result.SeriesDiskQueue); ok {
				s.DiskQueue = q.Mean
			}
		}
	})
}

// SweepsOf is Sweeps over stored figures, which keep no telemetry: the
// knee's device sign (its queue) needs whole results (Sweeps).
func SweepsOf(figs []result.Figures) []SweepView { return sweepsOf(figs, nil) }

// sweepsOf lays out figs' sweeps; with fill, each step also gets what
// its whole result adds (fill gets the figure's index).
func sweepsOf(figs []result.Figures, fill func(i int, s *SweepStep)) []SweepView {
	var out []SweepView
	index := map[[3]string]int{}
	for i := range figs {
		f := &figs[i]
		n, ok := result.SweepClients(f.Round)
		if !ok {
			continue
		}
		key := [3]string{f.RunID, f.Target, f.Workload}
		at, seen := index[key]
		if !seen {
			at = len(out)
			index[key] = at
			out = append(out, SweepView{RunID: f.RunID, Target: f.Target, Workload: f.Workload})
		}
		step := StepOf(f, n)
		if fill != nil {
			fill(i, &step)
		}
		out[at].Steps = append(out[at].Steps, step)
	}
	for i := range out {
		sort.Slice(out[i].Steps, func(a, b int) bool { return out[i].Steps[a].Clients < out[i].Steps[b].Clients })
		out[i].Knee = FindKnee(out[i].Steps)
	}
	return out
}

// StepOf reads one stored sweep step with n clients.
func StepOf(r *result.Figures, n int) SweepStep {
	s := SweepStep{Clients: n}
	s.IOPS, _ = r.Metric(result.MetricIOPS)
	s.BytesPerSec, _ = r.Metric(result.MetricBW)
	if v, ok := r.Metric(result.MetricLatP99); ok {
		s.P99 = time.Duration(v)
	}
	labelFloat := func(k result.LabelKey) float64 {
		v, _ := strconv.ParseFloat(k.Of(r.Labels), 64)
		return v
	}
	s.ClientMinIOPS = labelFloat(result.LabelSweepClientMinIOPS)
	s.ClientMaxIOPS = labelFloat(result.LabelSweepClientMaxIOPS)
	s.StartSpread = time.Duration(labelFloat(result.LabelSweepStartSpread) * float64(time.Millisecond))
	switch {
	case r.Status != result.StatusComplete:
		s.Unusable = "failed"
		if f := result.LabelSweepFailed.Of(r.Labels); f != "" {
			s.Unusable = "failed: " + f
		}
	case result.LabelSweepLate.Of(r.Labels) != "":
		s.Unusable = "late: " + result.LabelSweepLate.Of(r.Labels)
	}
	if r.Bottleneck != nil {
		s.LimitedBy, s.Evidence = r.Bottleneck.LimitedBy, r.Bottleneck.Evidence
	}

	return s
}

// BoundBy names, on each sweep's knee, what the breakdown (breakdown.go)
// found bound the step past it: the node's disk, a link, replication, the
// storage engine. Where it found a ceiling it replaces the telemetry's
// attribution, being measured against the path's own ceilings.
func BoundBy(views []SweepView, bs []Breakdown) {
	for i := range views {
		k := &views[i].Knee
		if !k.Found {
			continue
		}
		for _, b := range bs {
			if b.Target != views[i].Target || b.Workload != views[i].Workload || b.Round != result.SweepRound(k.Next) || b.LimitedBy == "" {
				continue
			}
			k.LimitedBy = b.LimitedBy
			if b.Node != "" && b.LimitedBy != BoundEngine {
				k.LimitedBy = b.Node + "'s " + b.LimitedBy
			}
			k.Evidence = fmt.Sprintf("%.0f%% of the %s ceiling", b.Percent, units.MBps(b.CeilingBPS))
			var steps []SweepStep
			for _, s := range views[i].Steps {
				if s.Clients == k.Clients {
					steps = append(steps, s)
				}
			}
			if use := usableSteps(views[i].Steps); len(steps) == 1 && len(use) > 0 {
				k.Summary = kneeSummary(*k, steps[0], use[len(use)-1])
			}
		}
	}
}

// unclearLimit is an attribution that names no limit.
func unclearLimit(l string) bool { return l == "" || l == "unclear" }
