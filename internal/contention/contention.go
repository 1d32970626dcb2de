// Package contention reads the results of a contention round (see
// internal/engine/contention.go): it pairs each probe measured alone with
// the same probe under a bulk writer, and says in plain words what the
// slowdown means against known limits. Pure functions; nothing prints.
// Unlike internal/analysis (many results compared at one time) and
// internal/trend (one series over time), it looks at the two halves of one
// round on one target; its answer is analysis.ContentionReport.
package contention

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// The values of result.LabelContention, set by the engine on contention
// results.
const (
	RoleAlone  = "alone"
	RoleLoaded = "loaded"
	RoleNoise  = "noise"
)

// Known limits the verdict measures against.
const (
	// EtcdSyncP99 is the etcd maintainers' guidance for the p99 of
	// wal_fsync_duration_seconds.
	EtcdSyncP99 = 10 * time.Millisecond
	// ProbeTimeout is a typical liveness or readiness probe timeout.
	ProbeTimeout = time.Second
)

type key struct {
	target, probe string
	rep           int
}

// Reports pairs the contention results among rs, in target, probe and
// repetition order. Pairs missing a side (a failed probe) are left out.
func Reports(rs []result.Result) []analysis.ContentionReport {
	type trio struct{ alone, loaded, noise *result.Result }
	groups := map[key]*trio{}
	for i := range rs {
		r := &rs[i]
		if r.Round != result.RoundContention || r.Status == result.StatusFailed && result.LabelContention.Of(r.Labels) != RoleNoise {
			continue
		}
		k := key{r.Target, result.LabelProbe.Of(r.Labels), r.Repetition}
		g := groups[k]
		if g == nil {
			g = &trio{}
			groups[k] = g
		}
		switch result.LabelContention.Of(r.Labels) {
		case RoleAlone:
			g.alone = r
		case RoleLoaded:
			g.loaded = r
		case RoleNoise:
			g.noise = r
		}
	}
	var out []analysis.ContentionReport
	for k, g := range groups {
		if g.alone == nil || g.loaded == nil {
			continue
		}
		out = append(out, report(k, g.alone, g.loaded, g.noise))
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.Target != b.Target {
			return a.Target < b.Target
		}
		if a.Probe != b.Probe {
			return a.Probe < b.Probe
		}
		return a.Repetition < b.Repetition
	})
	return out
}

func report(k key, alone, loaded, noise *result.Result) analysis.ContentionReport {
	name, la := distribution(alone)
	_, ll := distribution(loaded)
	rep := analysis.ContentionReport{Target: k.target, Probe: k.probe, Repetition: k.rep, Latency: name,
		Alone: figures(la), Loaded: figures(ll)}
	if rep.Alone.P99 > 0 {
		rep.Slowdown = float64(rep.Loaded.P99) / float64(rep.Alone.P99)
	}
	if noise != nil && noise.Status != result.StatusFailed {
		rep.NoiseBytesPerSec, _ = noise.Metric(result.MetricBW)
	}
	share, bound, words := ShareOver(ll, ProbeTimeout)
	rep.TimeoutPercent, rep.TimeoutBound = share, bound
	if alone.Bottleneck != nil {
		rep.AloneLimitedBy = alone.Bottleneck.LimitedBy
	}
	if loaded.Bottleneck != nil {
		rep.LoadedLimitedBy = loaded.Bottleneck.LimitedBy
	}

	var b strings.Builder
	if noise != nil && rep.NoiseBytesPerSec > 0 {
		fmt.Fprintf(&b, "under a bulk copy (%s of 1 MiB writes), ", units.MBps(rep.NoiseBytesPerSec))
	} else {
		b.WriteString("under a bulk copy (whose throughput was not measured), ")
	}
	verb := "rises"
	if rep.Loaded.P99 <= rep.Alone.P99 {
		verb = "goes"
	}
	fmt.Fprintf(&b, "%s p99 %s from %s to %s", name, verb, units.Latency(rep.Alone.P99), units.Latency(rep.Loaded.P99))
	if rep.Slowdown > 0 {
		fmt.Fprintf(&b, " (%.1fx)", rep.Slowdown)
	}
	if alone.Sync != nil && loaded.Sync != nil {
		pass := rep.Loaded.P99 <= EtcdSyncP99
		rep.EtcdPass = &pass
		switch {
		case rep.Alone.P99 > EtcdSyncP99:
			fmt.Fprintf(&b, ": etcd misses its %s target even without the copy", units.Latency(EtcdSyncP99))
		case !pass:
			fmt.Fprintf(&b, ": etcd would miss its %s target", units.Latency(EtcdSyncP99))
		default:
			fmt.Fprintf(&b, ": etcd stays within its %s target", units.Latency(EtcdSyncP99))
		}
	}
	fmt.Fprintf(&b, "; a probe with a %s timeout would %s", units.Latency(ProbeTimeout), words)
	if sh, ok := analysis.ContentionSharedOf(alone.Telemetry, loaded.Telemetry); ok {
		rep.Shared = &sh
		b.WriteString("; " + sh.Summary)
	}
	rep.Verdict = b.String()
	return rep
}

// distribution picks the latency that matters for a probe: fdatasync when
// it synced, else the latency its slowest direction waited (total:
// submission and completion, result.Direction.Waited).
func distribution(r *result.Result) (string, result.Latency) {
	if r.Sync != nil && r.Sync.Measured() {
		return "fdatasync", *r.Sync
	}
	var name string
	var worst result.Latency
	var worstP99 time.Duration = -1
	for _, d := range r.Directions() {
		l := d.Waited()
		p99, _ := l.At(99)
		if p99 > worstP99 {
			name, worst, worstP99 = d.Name, l, p99
		}
	}
	return name + " latency", worst
}

func figures(l result.Latency) analysis.ProbeFigures {
	f := analysis.ProbeFigures{Max: l.Max}
	f.P50, _ = l.At(50)
	f.P99, _ = l.At(99)
	f.P999, _ = l.At(99.9)
	return f
}

// ShareOver estimates the percentage of operations slower than limit from
// a latency distribution's percentiles and maximum, interpolating between
// the two percentiles around the limit, and says it in words ("fail about
// 0.4% of the time", "never fail"). bound is "about", "less than" or
// "more than"; the share is exactly 0 when no operation was slower.
func ShareOver(l result.Latency, limit time.Duration) (share float64, bound, words string) {
	ps := append([]result.Percentile(nil), l.Percentiles...)
	result.SortPercentiles(ps)
	if l.Max > 0 && l.Max <= limit {
		return 0, "about", fmt.Sprintf("never fail (slowest operation %s)", units.Latency(l.Max))
	}
	if len(ps) == 0 {
		return 0, "", "fail an unknown share of the time (no percentiles recorded)"
	}
	if ps[0].Value > limit {
		share = 100 - ps[0].P
		return share, "more than", fmt.Sprintf("fail more than %s of the time", pct(share))
	}
	for i := 1; i < len(ps); i++ {
		lo, hi := ps[i-1], ps[i]
		if hi.Value <= limit {
			continue
		}
		p := lo.P
		if hi.Value > lo.Value {
			p += (hi.P - lo.P) * float64(limit-lo.Value) / float64(hi.Value-lo.Value)
		}
		share = 100 - p
		return share, "about", fmt.Sprintf("fail about %s of the time", pct(share))
	}
	// Slower than the limit only beyond the last percentile recorded.
	share = 100 - ps[len(ps)-1].P
	words = fmt.Sprintf("fail less than %s of the time", pct(share))
	if l.Max > 0 {
		words += fmt.Sprintf(" (slowest operation %s)", units.Latency(l.Max))
	}
	return share, "less than", words
}

func pct(v float64) string {
	switch {
	case v >= 10:
		return fmt.Sprintf("%.0f%%", v)
	case v >= 1:
		return fmt.Sprintf("%.1f%%", v)
	}
	return fmt.Sprintf("%.2g%%", v)
}
