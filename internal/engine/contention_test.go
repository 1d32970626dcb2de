package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
)

// diskDir is an empty directory on a real disk: the test temp dir unless
// that is a tmpfs (no direct I/O), else one in the working tree.
func diskDir(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err == nil && st.Type != unix.TMPFS_MAGIC {
		return dir
	}
	dir, err := os.MkdirTemp(".", "contention-test-")
	if err != nil {
		t.Fatal(err)
	}
	abs, _ := filepath.Abs(dir)
	t.Cleanup(func() { os.RemoveAll(abs) })
	return abs
}

// tinyProbe is etcd's check shrunk to 2 MiB: 2300-byte writes, each
// followed by fdatasync.
func tinyProbe(t *testing.T) spec.Workload {
	s, err := spec.Parse([]byte("name: p\nworkloads:\n  - {name: etcd-fdatasync, rw: write, bs: 2300, ioengine: sync, direct: false, fdatasync: 1, size: 2MiB}\n"), "probe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return s.Workloads[0]
}

func needFio(t *testing.T) {
	t.Helper()
	testenv.Fio(t)
}

func emptyDir(t *testing.T, dir string) {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		t.Errorf("left behind in %s: %s", dir, e.Name())
	}
}

// TestContentionRoundRealFio runs a real contention round on a temporary
// directory: the probe alone, then beside the bulk writer (two fio
// processes at once), all three stored with round=contention.
func TestContentionRoundRealFio(t *testing.T) {
	testenv.Measures(t)
	needFio(t)
	dir := diskDir(t)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := Plan{
		Targets:    []runner.Target{local.NewTarget(dir, local.Options{})},
		Contention: &Contention{Probe: tinyProbe(t), NoiseSize: 64 << 20, Warmup: time.Second, ProbeLimit: 3 * time.Second},
		Telemetry:  true,
	}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	emptyDir(t, dir)
	if run.Status != result.StatusComplete || strings.Join(run.Workloads, ",") != "etcd-fdatasync,etcd-fdatasync+bulk-write,bulk-write-1m-qd16" {
		t.Errorf("run %s, workloads %v", run.Status, run.Workloads)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	byRole := map[string]result.Result{}
	for _, r := range rs {
		if r.Round != result.RoundContention || result.LabelProbe.Of(r.Labels) != "etcd-fdatasync" {
			t.Errorf("%s: round %s labels %v", r.Workload, r.Round, r.Labels)
		}
		byRole[result.LabelContention.Of(r.Labels)] = r
	}
	alone, loaded, noise := byRole[contention.RoleAlone], byRole[contention.RoleLoaded], byRole[contention.RoleNoise]
	if len(rs) != 3 || alone.Workload != "etcd-fdatasync" || loaded.Workload != "etcd-fdatasync+bulk-write" || noise.Workload != NoiseName {
		t.Fatalf("results: %+v", rs)
	}
	aloneP99, ok1 := alone.Metric(result.MetricSyncP99)
	loadedP99, ok2 := loaded.Metric(result.MetricSyncP99)
	if !ok1 || !ok2 || aloneP99 <= 0 || loadedP99 <= 0 {
		t.Errorf("fdatasync p99 alone %v (%v), loaded %v (%v)", aloneP99, ok1, loadedP99, ok2)
	}
	bw, ok := noise.Metric(result.MetricBW)
	if noise.Status != result.StatusComplete || !ok || bw <= 0 || noise.Write == nil || noise.Write.Bytes < 1<<20 {
		t.Errorf("noise writer: %s %s, %v B/s", noise.Status, noise.Error, bw)
	}
	// The writer ran the whole time the loaded probe did.
	if !noise.Started.Before(loaded.Started) || noise.Finished.Before(loaded.Finished) {
		t.Errorf("noise %s..%s does not span the loaded probe %s..%s", noise.Started, noise.Finished, loaded.Started, loaded.Finished)
	}
	// The probe is checked as any workload is: the CPU idle share says
	// whether its latency measured the CPU. The writer is not a figure.
	for _, r := range []result.Result{alone, loaded} {
		if idle, err := strconv.ParseFloat(result.LabelCPUIdle.Of(r.Labels), 64); err != nil || idle < 0 || idle > 100 {
			t.Errorf("%s: cpu idle label %q", r.Workload, result.LabelCPUIdle.Of(r.Labels))
		}
	}
	if _, set := result.LabelCPUIdle.In(noise.Labels); set {
		t.Errorf("the bulk writer carries the probe's checks: %v", noise.Labels)
	}
	if loaded.Telemetry == nil || loaded.Bottleneck == nil {
		t.Errorf("loaded probe without telemetry or attribution")
	} else if s, ok := loaded.Telemetry.Stat(result.SeriesDiskWriteBPS); !ok || s.Mean <= 0 {
		t.Errorf("no disk writes sampled under load: %+v", s)
	}
	reps := contention.Reports(rs)
	if len(reps) != 1 {
		t.Fatalf("reports: %+v", reps)
	}
	r := reps[0]
	t.Logf("verdict: %s", r.Verdict)
	if r.Latency != "fdatasync" || r.Slowdown <= 0 || r.NoiseBytesPerSec != bw || r.EtcdPass == nil ||
		!strings.Contains(r.Verdict, "etcd") || !strings.Contains(r.Verdict, "1 s timeout") {
		t.Errorf("report %+v", r)
	}
}

// cancelOnLoaded interrupts the run once the loaded probe has run a while,
// as Ctrl-C would.
type cancelOnLoaded struct {
	notes
	cancel    context.CancelFunc
	after     time.Duration
	cancelled chan time.Time
}

func (c *cancelOnLoaded) WorkloadStarted(s Step) {
	if strings.HasSuffix(s.Workload, LoadedSuffix) {
		time.AfterFunc(c.after, func() {
			c.cancel()
			c.cancelled <- time.Now()
		})
	}
}

// TestContentionInterruptedCleansUp interrupts the round while the probe
// and the bulk writer (on a separate --noise-target) both run: both
// directories end empty and no fio is left running there.
func TestContentionInterruptedCleansUp(t *testing.T) {
	needFio(t)
	dir, noiseDir := diskDir(t), diskDir(t)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	probe := tinyProbe(t)
	probe.FileSize = spec.Size(64 << 20) // long enough to be interrupted
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	obs := &cancelOnLoaded{cancel: cancel, after: 700 * time.Millisecond, cancelled: make(chan time.Time, 1)}
	plan := Plan{
		Targets: []runner.Target{local.NewTarget(dir, local.Options{})},
		Contention: &Contention{Probe: probe, NoiseTarget: local.NewTarget(noiseDir, local.Options{}),
			NoiseSize: 64 << 20, Warmup: 500 * time.Millisecond, ProbeLimit: 2 * time.Second},
	}
	run, err := (&Engine{Store: st, Observer: obs}).Run(ctx, plan)
	if !errors.Is(err, ErrInterrupted) {
		t.Fatalf("error %v", err)
	}
	select {
	case at := <-obs.cancelled:
		if took := time.Since(at); took > 10*time.Second {
			t.Errorf("the run ended %s after the interrupt", took)
		}
	default:
		t.Fatal("the loaded probe never started")
	}
	emptyDir(t, dir)
	emptyDir(t, noiseDir)
	for _, d := range []string{dir, noiseDir} {
		if pids := fioIn(d); len(pids) > 0 {
			t.Errorf("fio still running in %s: %v", d, pids)
		}
	}
	got, err := st.Run(context.Background(), run.ID)
	if err != nil || got.Status != result.StatusInterrupted {
		t.Errorf("stored run %+v %v", got, err)
	}
	rs, _ := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if len(rs) != 1 || result.LabelContention.Of(rs[0].Labels) != contention.RoleAlone || result.LabelNoiseTarget.Of(rs[0].Labels) != noiseDir {
		t.Errorf("results after interrupt: %+v", rs)
	}
}

// fioIn lists processes whose working directory is under dir.
func fioIn(dir string) []string {
	var pids []string
	procs, _ := filepath.Glob("/proc/[0-9]*/cwd")
	for _, p := range procs {
		if cwd, err := os.Readlink(p); err == nil && strings.HasPrefix(cwd, dir) {
			pids = append(pids, filepath.Base(filepath.Dir(p)))
		}
	}
	return pids
}

// TestContentionOnDevice runs the round on a raw loop device: the writer
// must use the span after the probe's, and the device's own diskstats are
// sampled.
func TestContentionOnDevice(t *testing.T) {
	testenv.Measures(t)
	needFio(t)
	testenv.Loop(t)
	img := filepath.Join(diskDir(t), "dev.img")
	if err := os.WriteFile(img, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(img, 96<<20); err != nil {
		t.Fatal(err)
	}
	dev := testenv.AttachLoop(t, img)
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	plan := Plan{
		Targets:    []runner.Target{local.NewTarget(dev, local.Options{Destructive: []string{dev}})},
		Contention: &Contention{Probe: tinyProbe(t), NoiseSize: 64 << 20, Warmup: 500 * time.Millisecond, ProbeLimit: 2 * time.Second},
		Telemetry:  true,
	}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(rs) != 3 {
		t.Fatalf("%d results, %v", len(rs), err)
	}
	for _, r := range rs {
		switch result.LabelContention.Of(r.Labels) {
		case contention.RoleNoise:
			raw, err := st.RawFioJSON(context.Background(), r.ID)
			if err != nil {
				t.Fatal(err)
			}
			// The probe spans 2 MiB from offset 0; the writer starts after it.
			if !strings.Contains(string(raw), `"offset" : "2097152"`) {
				t.Errorf("the writer's job has no offset past the probe:\n%s", raw)
			}
			if bw, _ := r.Metric(result.MetricBW); bw <= 0 {
				t.Errorf("writer throughput %v", bw)
			}
		case contention.RoleLoaded:
			if r.Telemetry == nil || r.Telemetry.Device != filepath.Base(dev) || r.Telemetry.Totals.DiskWriteBytes <= 0 {
				t.Errorf("loaded probe telemetry %+v", r.Telemetry)
			}
		}
	}
}
