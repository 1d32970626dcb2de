package local

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
	"github.com/storbench/storbench/internal/testenv"
)

// prepareDisk prepares a local directory target on a real disk: the test
// temp dir, or one in the working tree where $TMPDIR is a tmpfs (no
// direct I/O, no block device).
func prepareDisk(t *testing.T, need runner.Need) *runner.Prepared {
	t.Helper()
	ctx := context.Background()
	p, err := NewTarget(t.TempDir(), Options{}).Prepare(ctx, need)
	if err != nil || result.LabelDevice.Of(p.Labels) == "" {
		if p != nil {
			if err := p.Cleanup(ctx); err != nil {
				t.Fatal(err)
			}
		}
		dir, derr := os.MkdirTemp(".", "fio-test-")
		if derr != nil {
			t.Fatal(derr)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if p, err = NewTarget(dir, Options{}).Prepare(ctx, need); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		if err := p.Cleanup(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return p
}

// TestTelemetryDuringRealFio has the local runner's sampler read this
// host's /proc while fio writes to a real disk, and checks the figures
// against fio's own CPU and I/O counts.
func TestTelemetryDuringRealFio(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	p := prepareDisk(t, runner.Need{RunID: "telemetry", FileSize: 64 << 20, Writers: []string{"w"}, Direct: true})
	if p.Telemetry == nil {
		t.Fatal("a local target offers no telemetry")
	}
	s, err := p.Telemetry()
	if err != nil || s == nil {
		t.Fatalf("a local target has no sampler: %v", err)
	}
	job := fio.Job{Global: []fio.Option{{Key: "filename", Value: p.File.Name}}, Sections: []fio.Section{{Name: "w", Options: []fio.Option{
		{Key: "rw", Value: "randwrite"}, {Key: "bs", Value: "4k"}, {Key: "size", Value: "64M"}, {Key: "ioengine", Value: "psync"},
		{Key: "direct", Value: "1"}, {Key: "time_based", Value: "1"}, {Key: "runtime", Value: "3"}, {Key: "randrepeat", Value: "0"},
	}}}}
	rec := s.Start()
	began := time.Now()
	out, err := fio.Runner{Cmder: p.Cmder, Dir: p.Dir}.Run(context.Background(), job, nil)
	wall := time.Since(began)
	tel := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if tel.Device == "" || tel.Device != result.LabelDevice.Of(p.Labels) {
		t.Fatalf("sampled device %q, target labels %v", tel.Device, p.Labels)
	}
	j := fio.ToResult(out.Final.Jobs[0])
	w := j.Write
	if w == nil {
		t.Fatal("fio reports no write")
	}
	t.Logf("fio: %d writes, %d bytes, usr %.1f%% sys %.1f%%; telemetry totals %+v", w.TotalIOs, w.Bytes, j.CPU.UserPercent, j.CPU.SystemPercent, tel.Totals)

	if n := len(tel.Series.OffsetsMS); n < 3 || n > int(wall.Seconds())+2 {
		t.Errorf("%d samples over %s", n, wall)
	}
	if d := tel.Totals.Elapsed - wall; d < -500*time.Millisecond || d > 500*time.Millisecond {
		t.Errorf("telemetry covers %s, fio ran %s", tel.Totals.Elapsed, wall)
	}
	for _, name := range []string{result.SeriesCPUBusy, result.SeriesCPUCoreMaxBusy, result.SeriesDiskUtil, result.SeriesDiskWriteIOPS, result.SeriesDiskWriteBPS, result.SeriesDiskQueue} {
		if s, ok := tel.Stat(name); !ok || s.Mean <= 0 {
			t.Errorf("%s: %+v, want a non-zero mean", name, s)
		}
	}
	// Every write fio completed reached the device (other processes may
	// add more, never fewer).
	if float64(tel.Totals.DiskWriteIOs) < 0.95*float64(w.TotalIOs) {
		t.Errorf("diskstats saw %d writes, fio completed %d", tel.Totals.DiskWriteIOs, w.TotalIOs)
	}
	if float64(tel.Totals.DiskWriteBytes) < 0.95*float64(w.Bytes) {
		t.Errorf("diskstats saw %d bytes written, fio wrote %d", tel.Totals.DiskWriteBytes, w.Bytes)
	}
	wps, _ := tel.Stat(result.SeriesDiskWriteIOPS)
	if fioIOPS := w.IOPS; wps.Max < 0.9*fioIOPS {
		t.Errorf("peak write IOPS sampled %.0f, fio's average %.0f", wps.Max, fioIOPS)
	}
	// fio's CPU use (percent of one core over its runtime) is part of the
	// host's busy time, which cannot exceed all cores for the whole run.
	fioCPU := time.Duration((j.CPU.UserPercent + j.CPU.SystemPercent) / 100 * float64(w.Runtime))
	if tel.Totals.CPUBusy < fioCPU*8/10 {
		t.Errorf("host busy %s, fio alone used %s", tel.Totals.CPUBusy, fioCPU)
	}
	if capacity := time.Duration(tel.CPUs) * tel.Totals.Elapsed; tel.Totals.CPUBusy > capacity*105/100 {
		t.Errorf("host busy %s exceeds %d cores x %s", tel.Totals.CPUBusy, tel.CPUs, tel.Totals.Elapsed)
	}
	if a := telemetry.Attribute(&result.Result{CPU: j.CPU}, tel); a == nil || a.Evidence == "" {
		t.Errorf("no attribution: %+v", a)
	}
}

// TestDeviceTargetSamplesItsDevice: a device target's sampler watches that
// device's own line of /proc/diskstats while fio writes to it.
func TestDeviceTargetSamplesItsDevice(t *testing.T) {
	testenv.Fio(t)
	dev := testenv.LoopDevice(t, 32<<20)
	p, err := NewTarget(dev, Options{Destructive: []string{dev}}).Prepare(context.Background(), runner.Need{RunID: "tel", FileSize: 16 << 20, Writers: []string{"w"}, Direct: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Cleanup(context.Background()); err != nil {
			t.Error(err)
		}
	})
	if !p.Local || p.Telemetry == nil {
		t.Fatalf("device target: Local %v, telemetry offered %v", p.Local, p.Telemetry != nil)
	}
	job := fio.Job{Global: []fio.Option{{Key: "filename", Value: p.File.Name}}, Sections: []fio.Section{{Name: "w", Options: []fio.Option{
		{Key: "rw", Value: "write"}, {Key: "bs", Value: "64k"}, {Key: "size", Value: "16M"}, {Key: "ioengine", Value: "psync"},
		{Key: "direct", Value: "1"}, {Key: "randrepeat", Value: "0"},
	}}}}
	s, err := p.Telemetry()
	if err != nil {
		t.Fatal(err)
	}
	rec := s.Start()
	out, err := fio.Runner{Cmder: p.Cmder}.Run(context.Background(), job, nil)
	tel := rec.Stop()
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Base(dev); tel.Device != want {
		t.Fatalf("sampled device %q, want %q (labels %v)", tel.Device, want, p.Labels)
	}
	if w := fio.ToResult(out.Final.Jobs[0]).Write; w == nil || tel.Totals.DiskWriteIOs < w.TotalIOs {
		t.Errorf("diskstats saw %d writes on %s, fio completed %+v", tel.Totals.DiskWriteIOs, tel.Device, w)
	}
}
