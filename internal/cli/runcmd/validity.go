package runcmd

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"time"

	"github.com/spf13/pflag"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
)

// measureFlags are the flags of the measurement checks (docs/measurement.md).
type measureFlags struct {
	untilStable    bool
	stableMax      time.Duration
	stableInterval time.Duration
	repeatAuto     bool
	precision      float64 // percent
	repeatMin      int
	repeatMax      int
	defeatCache    bool
	precondition   bool
}

func addMeasureFlags(fl *pflag.FlagSet, f *flags) {
	m := &f.measure
	f.repeat = 1
	fl.Var(&repeatValue{n: &f.repeat, auto: &m.repeatAuto}, "repeat", "run the suite this many times on each target, or auto: repeat each workload until its IOPS are known to --precision")
	fl.BoolVar(&m.untilStable, "until-stable", false, "run each workload until fio sees its IOPS settle (steady state), up to --stable-max")
	fl.DurationVar(&m.stableMax, "stable-max", time.Duration(spec.DefaultSteadyState.MaxRuntime), "--until-stable: the longest a workload may run without settling")
	fl.DurationVar(&m.stableInterval, "stable-interval", time.Second, "--until-stable: how often fio samples (longer for slow devices; other than 1s needs fio 3.34 or later)")
	fl.Float64Var(&m.precision, "precision", 5, "--repeat auto: the 95% confidence interval of the mean IOPS to reach, in ± percent")
	fl.IntVar(&m.repeatMin, "repeat-min", 3, "--repeat auto: the fewest runs of each workload")
	fl.IntVar(&m.repeatMax, "repeat-max", 10, "--repeat auto: the most runs of each workload")
	fl.BoolVar(&m.defeatCache, "defeat-cache", false, "size read and buffered workloads beyond the memory that can cache them (bounded by free space) and drop the page cache before each (as root)")
	fl.BoolVar(&m.precondition, "precondition", false, "write a --destructive device sequentially twice before its random-write workloads (SNIA PTS)")
}

// repeatValue is --repeat: a count or "auto".
type repeatValue struct {
	n    *int
	auto *bool
}

func (r *repeatValue) String() string {
	if r.auto != nil && *r.auto {
		return "auto"
	}
	if r.n == nil {
		return "1"
	}
	return strconv.Itoa(*r.n)
}

func (r *repeatValue) Set(s string) error {
	if s == "auto" {
		*r.auto, *r.n = true, 1
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		return fmt.Errorf("%q is neither a count nor auto", s)
	}
	*r.n, *r.auto = n, false
	return nil
}

func (r *repeatValue) Type() string { return "N|auto" }

// applyMeasurement turns the measurement flags into the plan.
func applyMeasurement(plan *engine.Plan, f *flags) error {
	m := f.measure
	changed := func(name string) bool { return f.changed != nil && f.changed(name) }
	if m.repeatAuto || m.defeatCache || m.precondition {
		if f.round == result.RoundContention || slices.Contains(f.kube.rounds, result.RoundParallel) {
			return cli.Usagef("--repeat auto, --defeat-cache and --precondition apply to isolated rounds: run the contention or parallel round separately")
		}
	}
	if m.repeatAuto {
		if m.precision <= 0 || m.precision >= 100 {
			return cli.Usagef("--precision %g: give a percentage between 0 and 100", m.precision)
		}
		if m.repeatMin < 2 || m.repeatMax < m.repeatMin {
			return cli.Usagef("--repeat-min %d, --repeat-max %d: a confidence interval needs at least 2 runs, and the most must not be below the fewest", m.repeatMin, m.repeatMax)
		}
		plan.Measurement.RepeatAuto = &engine.RepeatAuto{Precision: m.precision / 100, Min: m.repeatMin, Max: m.repeatMax}
	} else {
		for _, n := range []string{"precision", "repeat-min", "repeat-max"} {
			if changed(n) {
				return cli.Usagef("--%s belongs to --repeat auto", n)
			}
		}
	}
	if !m.untilStable && (changed("stable-max") || changed("stable-interval")) {
		return cli.Usagef("--stable-max and --stable-interval belong to --until-stable")
	}
	if plan.Suite == nil && (m.untilStable || m.defeatCache) {
		return cli.Usagef("--until-stable and --defeat-cache shape suite workloads; a --fio-job runs as written")
	}
	if m.untilStable {
		ss := spec.DefaultSteadyState
		ss.MaxRuntime, ss.Interval = spec.Duration(m.stableMax), spec.Duration(m.stableInterval)
		if m.stableInterval <= 0 || time.Duration(ss.Window)%m.stableInterval != 0 {
			return cli.Usagef("--stable-interval %s: the %s window must be a whole number of intervals", m.stableInterval, ss.Window)
		}
		if m.stableMax < time.Duration(ss.Window+ss.Ramp) {
			return cli.Usagef("--stable-max %s: leaves no time for the %s ramp and %s window", m.stableMax, ss.Ramp, ss.Window)
		}
		plan.Suite.UntilStable(ss)
	}
	if m.defeatCache {
		bytes, err := cacheBytes(plan.Labels)
		if err != nil {
			return err
		}
		// A quarter beyond the memory, in whole MiB: a span the cache can
		// no longer hold whole.
		span := (bytes + bytes/4 + 1<<20 - 1) &^ (1<<20 - 1)
		plan.Suite.DefeatCache(span)
		plan.Measurement.DropCaches = true
	}
	if m.precondition {
		if len(f.destructive) == 0 {
			return cli.Usagef("--precondition writes whole devices: it needs --destructive naming them")
		}
		plan.Measurement.Precondition = true
	}
	return nil
}

// cacheBytes is the memory that can cache the targets: the user's label
// mem_bytes, else this host's RAM.
func cacheBytes(labels map[string]string) (int64, error) {
	if v := result.LabelMemBytes.Of(labels); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n <= 0 {
			return 0, cli.Usagef("--label %s=%s: give the memory in bytes", result.LabelMemBytes, v)
		}
		return n, nil
	}
	data, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("--defeat-cache: reading this host's memory size: %w", err)
	}
	if n := engine.MemTotal(data); n > 0 {
		return n, nil
	}
	return 0, fmt.Errorf("--defeat-cache: /proc/meminfo has no MemTotal")
}
