package cliff

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/cliff/throttle"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/testenv"
)

// series builds one sample a second from level(i), with relative noise.
func series(n int, noise float64, level func(i int) float64) []Sample {
	r := rand.New(rand.NewPCG(1, 2))
	out := make([]Sample, n)
	for i := range out {
		out[i] = Sample{At: time.Duration(i+1) * time.Second, BytesPerSec: level(i) * (1 + noise*r.NormFloat64())}
	}
	return out
}

func step(at int, before, after float64) func(int) float64 {
	return func(i int) float64 {
		if i < at {
			return before
		}
		return after
	}
}

func TestFindConstructed(t *testing.T) {
	const MB = 1e6
	cases := []struct {
		name    string
		samples []Sample
		// wantAt is the sample count before the cliff, 0 for none.
		wantAt        int
		before, after float64
	}{
		{"clean step", series(60, 0, step(24, 480*MB, 92*MB)), 24, 480 * MB, 92 * MB},
		{"noisy step", series(120, 0.08, step(40, 480*MB, 92*MB)), 40, 480 * MB, 92 * MB},
		{"late cliff", series(50, 0.05, step(45, 2000*MB, 600*MB)), 45, 2000 * MB, 600 * MB},
		{"flat", series(60, 0.1, step(0, 300*MB, 300*MB)), 0, 0, 0},
		{"small dip", series(60, 0.02, step(30, 300*MB, 250*MB)), 0, 0, 0},
		{"rise", series(60, 0.02, step(20, 100*MB, 400*MB)), 0, 0, 0},
		{"steady slide", series(60, 0, func(i int) float64 { return (500 - 6*float64(i)) * MB }), 0, 0, 0},
		{"too short", series(4, 0, step(2, 500*MB, 100*MB)), 0, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a := Find(c.samples, Options{})
			if c.wantAt == 0 {
				if a.Cliff != nil {
					t.Fatalf("cliff %+v in a series without one", a.Cliff)
				}
				return
			}
			if a.Cliff == nil {
				t.Fatal("no cliff found")
			}
			if got := a.Cliff.At; got != time.Duration(c.wantAt)*time.Second {
				t.Errorf("cliff at %s, want %ds", got, c.wantAt)
			}
			// The place in bytes: the first level times its duration.
			want := c.before * float64(c.wantAt)
			if rel := math.Abs(float64(a.Cliff.AtBytes)-want) / want; rel > 0.05 {
				t.Errorf("cliff at %d bytes, want %.0f (%.1f%% off)", a.Cliff.AtBytes, want, rel*100)
			}
			if rel := math.Abs(a.Cliff.BeforeBytesPerSec-c.before) / c.before; rel > 0.05 {
				t.Errorf("before %.0f, want %.0f", a.Cliff.BeforeBytesPerSec, c.before)
			}
			if rel := math.Abs(a.Cliff.AfterBytesPerSec-c.after) / c.after; rel > 0.05 {
				t.Errorf("after %.0f, want %.0f", a.Cliff.AfterBytesPerSec, c.after)
			}
		})
	}
}

func TestTotals(t *testing.T) {
	a := Find([]Sample{{At: 500 * time.Millisecond, BytesPerSec: 100}, {At: 1500 * time.Millisecond, BytesPerSec: 50}}, Options{})
	if a.TotalBytes != 100 || a.Duration != 1500*time.Millisecond || math.Abs(a.MeanBytesPerSec-100/1.5) > 1e-9 {
		t.Errorf("%+v", a)
	}
	if a := Find(nil, Options{}); a.Cliff != nil || a.TotalBytes != 0 {
		t.Errorf("empty: %+v", a)
	}
}

// Recorded fio bandwidth logs: writes to a loop device throttled by the
// blkio cgroup, the limit lowered part-way (see TestThrottledRealRun); the
// file name says where the cliff was made, in bytes.
func TestRecordedThrottledLogs(t *testing.T) {
	logs, err := filepath.Glob("testdata/throttled-*.log")
	if err != nil || len(logs) == 0 {
		t.Fatalf("no recorded logs: %v", err)
	}
	for _, p := range logs {
		t.Run(filepath.Base(p), func(t *testing.T) {
			var made int64
			var before, after int64
			if _, err := fmtSscanf(filepath.Base(p), &before, &after, &made); err != nil {
				t.Fatal(err)
			}
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			s, err := fio.ParseBandwidthLog(data, 1)
			if err != nil {
				t.Fatal(err)
			}
			checkFound(t, Find(FromLog(s), Options{}), made, before, after)
		})
	}
}

func checkFound(t *testing.T, a Analysis, made, before, after int64) {
	t.Helper()
	if a.Cliff == nil {
		t.Fatalf("no cliff found (mean %.0f B/s over %d bytes)", a.MeanBytesPerSec, a.TotalBytes)
	}
	if rel := math.Abs(float64(a.Cliff.AtBytes-made)) / float64(made); rel > 0.10 {
		t.Errorf("cliff found at %d bytes, made at %d: %.1f%% off (limit 10%%)", a.Cliff.AtBytes, made, rel*100)
	}
	if rel := math.Abs(a.Cliff.BeforeBytesPerSec-float64(before)) / float64(before); rel > 0.15 {
		t.Errorf("before %.0f B/s, limit was %d", a.Cliff.BeforeBytesPerSec, before)
	}
	if rel := math.Abs(a.Cliff.AfterBytesPerSec-float64(after)) / float64(after); rel > 0.15 {
		t.Errorf("after %.0f B/s, limit was %d", a.Cliff.AfterBytesPerSec, after)
	}
}

// A real write whose device is throttled part-way: the cliff is found
// within 10% of where it was made. Set STORBENCH_RECORD_CLIFF=1 to keep
// the log in testdata.
func TestThrottledRealRun(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	dev := testenv.LoopDevice(t, 768<<20)
	w := throttle.Write{Device: dev, Size: 768 << 20, Runtime: 15 * time.Second,
		Before: 40 << 20, After: 8 << 20, SwitchAfter: 5 * time.Second, Dir: t.TempDir(), LogAverage: 500 * time.Millisecond}
	out, err := throttle.Run(context.Background(), w)
	if err != nil {
		testenv.Missing(t, "cgroup-io", "throttled write not possible here: %v", err)
	}
	a := Find(FromLog(out.Samples), Options{})
	t.Logf("made at %d bytes; found %+v", out.SwitchBytes, a.Cliff)
	checkFound(t, a, out.SwitchBytes, w.Before, w.After)
	if os.Getenv("STORBENCH_RECORD_CLIFF") != "" {
		data, err := os.ReadFile(filepath.Join(w.Dir, "throttled_bw.1.log"))
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Join("testdata", fmtName(w.Before, w.After, out.SwitchBytes))
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
