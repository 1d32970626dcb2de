package engine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/cliff/throttle"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

func suiteOf(t *testing.T, yaml string) *spec.Suite {
	t.Helper()
	s, err := spec.Parse([]byte(yaml), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// runPlan runs plan on a fresh store and returns the stored results and
// the notices.
func runPlan(t *testing.T, plan Plan) ([]result.Result, []string) {
	t.Helper()
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	n := &notes{}
	run, err := (&Engine{Store: st, Observer: n}).Run(context.Background(), plan)
	if err != nil {
		t.Fatalf("run: %v (notices %v)", err, n.messages)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	return rs, n.messages
}

// Steady state reached and recorded, on a directory and on a loop device.
func TestUntilStableRealFio(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	for _, kind := range []string{"directory", "loop device"} {
		t.Run(kind, func(t *testing.T) {
			path := diskDir(t)
			if kind == "loop device" {
				path = testenv.LoopDevice(t, 32<<20)
			}
			untilStable(t, path)
		})
	}
}

func untilStable(t *testing.T, path string) {
	s := suiteOf(t, "name: t\nworkloads:\n  - {name: rr, rw: randread, bs: 4KiB, size: 16MiB, ioengine: psync, runtime: 10s}\n")
	s.UntilStable(spec.SteadyState{Slope: 50, Window: spec.Duration(2 * time.Second), Ramp: spec.Duration(time.Second), MaxRuntime: spec.Duration(20 * time.Second)})
	rs, _ := runPlan(t, Plan{Suite: s, Targets: []runner.Target{local.NewTarget(path, local.Options{})}})
	if len(rs) != 1 {
		t.Fatalf("%d results", len(rs))
	}
	r := rs[0]
	if r.SteadyState == nil || !r.SteadyState.Reached || result.LabelSteadyState.Of(r.Labels) != "reached" {
		t.Fatalf("steady state %+v, labels %v", r.SteadyState, r.Labels)
	}
	after, err := time.ParseDuration(result.LabelSteadyStateAfter.Of(r.Labels))
	if err != nil || after < 3*time.Second || after > 15*time.Second || after != r.SteadyState.After.Round(time.Millisecond) {
		t.Errorf("after %q (%v), recorded %s", result.LabelSteadyStateAfter.Of(r.Labels), err, r.SteadyState.After)
	}
}

// --repeat auto stops at the first repetition whose confidence interval is
// within the precision asked, and says what it achieved.
func TestRepeatAutoStopsAtPrecision(t *testing.T) {
	testenv.Fio(t)
	s := suiteOf(t, "name: t\nworkloads:\n  - {name: rr, rw: randread, bs: 4KiB, size: 16MiB, runtime: 1s}\n")
	const target = 0.10
	rs, notices := runPlan(t, Plan{Suite: s, Targets: []runner.Target{local.NewTarget(diskDir(t), local.Options{})},
		Measurement: Measurement{RepeatAuto: &RepeatAuto{Precision: target, Min: 3, Max: 8}}})
	n := len(rs)
	if n < 3 || n > 8 {
		t.Fatalf("%d repetitions, want 3 to 8", n)
	}
	var iops []float64
	for i, r := range rs {
		v, _ := r.Metric(result.MetricIOPS)
		iops = append(iops, v)
		if r.Repetition != i+1 {
			t.Errorf("result %d is repetition %d", i, r.Repetition)
		}
	}
	final := Precision(iops)
	if got := result.LabelRepeatPrecision.Of(rs[n-1].Labels); got != strconv.FormatFloat(final*100, 'f', 1, 64) {
		t.Errorf("last result says precision %q, the stored figures give %.1f%%", got, final*100)
	}
	if n < 8 && final > target {
		t.Errorf("stopped after %d runs at ±%.1f%%, above the ±%.0f%% asked", n, final*100, target*100)
	}
	if n > 3 && Precision(iops[:n-1]) <= target {
		t.Errorf("ran %d times though %d already gave ±%.1f%%", n, n-1, Precision(iops[:n-1])*100)
	}
	if !strings.Contains(strings.Join(notices, "\n"), "rr: IOPS known") {
		t.Errorf("no precision notice in %v", notices)
	}
}

func TestPrecision(t *testing.T) {
	if p := Precision([]float64{100}); !math.IsInf(p, 1) {
		t.Errorf("one value: %v", p)
	}
	// mean 100, sample sd sqrt(400/3) = 11.547, n 4: t(3) 3.182 * 11.547 / 2 = 18.37%
	if p := Precision([]float64{90, 110, 90, 110}); math.Abs(p-0.18371) > 1e-4 {
		t.Errorf("precision %v", p)
	}
}

// A read workload over a file smaller than the cache is flagged, with the
// sizes; sized beyond it (--defeat-cache), it is not.
func TestCacheFlagAndDefeat(t *testing.T) {
	testenv.Fio(t)
	// The flag is judged from the sizes, not the figures: 300ms of I/O will do.
	yaml := "name: t\nworkloads:\n  - {name: rr, rw: randread, bs: 4KiB, size: 16MiB, runtime: 300ms}\n  - {name: rw, rw: randwrite, bs: 4KiB, size: 16MiB, runtime: 300ms}\n"
	labels := map[string]string{string(result.LabelMemBytes): strconv.Itoa(64 << 20)}
	rs, _ := runPlan(t, Plan{Suite: suiteOf(t, yaml), Labels: labels, Targets: []runner.Target{local.NewTarget(diskDir(t), local.Options{})}})
	for _, r := range rs {
		switch r.Workload {
		case "rr":
			c := r.CacheRisk
			if c == nil || c.SpanBytes != 16<<20 || c.CacheBytes != 64<<20 || c.CacheSource != "memory (label mem_bytes)" {
				t.Fatalf("cache risk %+v", c)
			}
			if want := "may measure cache: span 16.0 MiB fits in 64.0 MiB memory (label mem_bytes)"; result.LabelCacheRisk.Of(r.Labels) != want {
				t.Errorf("label %q, want %q", result.LabelCacheRisk.Of(r.Labels), want)
			}
		case "rw":
			if r.CacheRisk != nil {
				t.Errorf("direct random write flagged: %+v", r.CacheRisk)
			}
		}
	}
	// Without the label, the host's RAM (MemTotal) is the cache.
	rs, _ = runPlan(t, Plan{Suite: suiteOf(t, yaml), Targets: []runner.Target{local.NewTarget(diskDir(t), local.Options{})}})
	meminfo, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		if r.Workload == "rr" && (r.CacheRisk == nil || r.CacheRisk.CacheBytes != MemTotal(meminfo) || !strings.HasPrefix(r.CacheRisk.CacheSource, "RAM of ")) {
			t.Errorf("against host RAM: %+v (MemTotal %d)", r.CacheRisk, MemTotal(meminfo))
		}
	}
	s := suiteOf(t, yaml)
	if got := s.DefeatCache(80 << 20); len(got) != 1 {
		t.Fatalf("resized %v", got)
	}
	rs, notices := runPlan(t, Plan{Suite: s, Labels: labels, Targets: []runner.Target{local.NewTarget(diskDir(t), local.Options{})},
		Measurement: Measurement{DropCaches: true}})
	for _, r := range rs {
		if r.CacheRisk != nil || result.LabelCacheRisk.Of(r.Labels) != "" {
			t.Errorf("%s flagged after --defeat-cache: %+v", r.Workload, r.CacheRisk)
		}
	}
	for _, n := range notices {
		if strings.Contains(n, "cannot drop") {
			t.Errorf("as root the page cache drops: %s", n)
		}
	}
}

// cgroupCmder runs fio inside a control group, so its writes can be
// throttled; other commands run as they are.
type cgroupCmder struct {
	execx.Cmder
	procs string
}

func (c cgroupCmder) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	if name != "fio" {
		return c.Cmder.Command(ctx, name, args...)
	}
	return c.Cmder.Command(ctx, "sh", append([]string{"-c", `echo $$ > "$0" && exec "$@"`, c.procs, name}, args...)...)
}

type throttledTarget struct {
	runner.Target
	procs string
}

func (t throttledTarget) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	p, err := t.Target.Prepare(ctx, need)
	if err == nil {
		p.Cmder = cgroupCmder{Cmder: p.Cmder, procs: t.procs}
	}
	return p, err
}

// The sustained suite through the engine on a loop device whose write
// limit drops part-way: the stored cliff is within 10% of where it was made.
func TestSustainedCliffThroughEngine(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	dev := testenv.LoopDevice(t, 512<<20)
	g, major, minor := newThrottle(t, dev)
	const before, after = 40 << 20, 8 << 20
	if err := g.Limit(before); err != nil {
		t.Fatal(err)
	}
	s, err := spec.Builtin("sustained")
	if err != nil {
		t.Fatal(err)
	}
	s.Workloads[0].Runtime = spec.Duration(12 * time.Second)
	s.Workloads[0].BandwidthLog = spec.Duration(500 * time.Millisecond)
	name := filepath.Base(dev)
	start, err := throttle.SectorsWritten(name)
	if err != nil {
		t.Fatal(err)
	}
	made := make(chan int64, 1)
	go func() {
		for {
			if s, _ := throttle.SectorsWritten(name); s > start {
				break
			}
			time.Sleep(5 * time.Millisecond)
		}
		time.Sleep(4 * time.Second)
		s, _ := throttle.SectorsWritten(name)
		if err := g.Limit(after); err != nil {
			t.Error(err)
		}
		made <- (s - start) * 512
	}()
	target := throttledTarget{Target: local.NewTarget(dev, local.Options{Destructive: []string{dev}}), procs: g.Procs()}
	rs, _ := runPlan(t, Plan{Suite: s, Targets: []runner.Target{target}, Policy: safety.Policy{Destructive: []string{dev}}})
	at := <-made
	t.Logf("device %d:%d, cliff made at %d bytes", major, minor, at)
	if len(rs) != 1 || rs[0].WriteCliff == nil {
		t.Fatalf("no cliff stored: %d results, labels %v", len(rs), rs[0].Labels)
	}
	c := rs[0].WriteCliff
	if rel := math.Abs(float64(c.AtBytes-at)) / float64(at); rel > 0.10 {
		t.Errorf("cliff stored at %d bytes, made at %d: %.1f%% off", c.AtBytes, at, rel*100)
	}
	if result.LabelCliffAtBytes.Of(rs[0].Labels) != strconv.FormatInt(c.AtBytes, 10) {
		t.Errorf("labels %v", rs[0].Labels)
	}
	if math.Abs(c.AfterBytesPerSec-after)/after > 0.15 || math.Abs(c.BeforeBytesPerSec-before)/before > 0.15 {
		t.Errorf("levels %.0f then %.0f B/s, limits %d then %d", c.BeforeBytesPerSec, c.AfterBytesPerSec, before, after)
	}
}

func newThrottle(t *testing.T, dev string) (*throttle.Group, uint32, uint32) {
	t.Helper()
	major, minor, err := throttle.DeviceNumber(dev)
	if err != nil {
		t.Fatal(err)
	}
	g, err := throttle.New("storbench-engine-test", major, minor)
	if err != nil {
		testenv.Missing(t, "cgroup-io", "%v", err)
	}
	t.Cleanup(func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	})
	return g, major, minor
}

// --precondition writes a device twice before its random writes, and the
// results say so.
func TestPreconditionOnDevice(t *testing.T) {
	testenv.Fio(t)
	dev := testenv.LoopDevice(t, 64<<20)
	s := suiteOf(t, "name: t\nworkloads:\n  - {name: sr, rw: read, bs: 1MiB, size: 64MiB, runtime: 1s}\n  - {name: rw, rw: randwrite, bs: 4KiB, size: 64MiB, runtime: 1s}\n")
	name := filepath.Base(dev)
	start, err := throttle.SectorsWritten(name)
	if err != nil {
		t.Fatal(err)
	}
	rs, notices := runPlan(t, Plan{Suite: s, Targets: []runner.Target{local.NewTarget(dev, local.Options{Destructive: []string{dev}})}, Policy: safety.Policy{Destructive: []string{dev}},
		Measurement: Measurement{Precondition: true}})
	end, _ := throttle.SectorsWritten(name)
	if written := (end - start) * 512; written < 128<<20 {
		t.Errorf("device received %d bytes, want at least two passes of 64 MiB", written)
	}
	for _, r := range rs {
		switch r.Workload {
		case "sr":
			if r.Precondition != nil {
				t.Errorf("read before preconditioning marked preconditioned")
			}
		case "rw":
			if p := r.Precondition; p == nil || p.Passes != 2 || p.Bytes != 64<<20 || result.LabelPrecondition.Of(r.Labels) != "2x sequential, 64.0 MiB each" {
				t.Errorf("precondition %+v, labels %v", p, r.Labels)
			}
		}
	}
	if !strings.Contains(strings.Join(notices, "\n"), "preconditioning: writing the device sequentially twice (64.0 MiB each)") {
		t.Errorf("notices %v", notices)
	}
	// A directory cannot be preconditioned: a notice, no record.
	rs, notices = runPlan(t, Plan{Suite: suiteOf(t, "name: t\nworkloads:\n  - {name: rw, rw: randwrite, bs: 4KiB, size: 16MiB, runtime: 1s}\n"),
		Targets: []runner.Target{local.NewTarget(diskDir(t), local.Options{})}, Measurement: Measurement{Precondition: true}})
	if rs[0].Precondition != nil || !strings.Contains(strings.Join(notices, "\n"), "--precondition applies to block devices") {
		t.Errorf("directory: %+v, notices %v", rs[0].Precondition, notices)
	}
}
