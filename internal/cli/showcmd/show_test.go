package showcmd

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/golden"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
)

func lat(mean, p50, p99, p999 time.Duration) result.Latency {
	return result.Latency{Samples: 1000, Mean: mean, Percentiles: []result.Percentile{{P: 50, Value: p50}, {P: 99, Value: p99}, {P: 99.9, Value: p999}}}
}

// The table show prints: several targets, a mixed workload with two
// directions, a synced workload, an imported figure shown back in its own
// unit, and a failure with its reason.
func TestShowTableGolden(t *testing.T) {
	results := []result.Result{
		{Workload: "seq-read", Target: "/mnt/ssd", Repetition: 1, Status: result.StatusComplete,
			Read: &result.Direction{IOPS: 412.3, BytesPerSec: 432.3e6, TotalIOs: 4123, Completion: lat(19400*time.Microsecond, 18*time.Millisecond, 41*time.Millisecond, 60*time.Millisecond)}},
		{Workload: "rand-rw-4k-50-4x32", Target: "/mnt/ssd", Repetition: 1, Status: result.StatusComplete,
			Read:  &result.Direction{IOPS: 18234, BytesPerSec: 74.68e6, TotalIOs: 182340, Completion: lat(3500*time.Microsecond, 2900*time.Microsecond, 12*time.Millisecond, 25*time.Millisecond)},
			Write: &result.Direction{IOPS: 18190, BytesPerSec: 74.5e6, TotalIOs: 181900, Completion: lat(3600*time.Microsecond, 3*time.Millisecond, 13*time.Millisecond, 28*time.Millisecond)}},
		{Workload: "etcd-fdatasync", Target: "/mnt/sd", Repetition: 1, Status: result.StatusComplete,
			Write: &result.Direction{IOPS: 310, BytesPerSec: 713e3, TotalIOs: 10029, Completion: lat(40*time.Microsecond, 30*time.Microsecond, 120*time.Microsecond, 900*time.Microsecond)},
			Sync:  &result.Latency{Samples: 10029, Percentiles: []result.Percentile{{P: 99, Value: 14200 * time.Microsecond}}}},
		{Workload: "seq-read", Target: "nas-1", Repetition: 1, Status: result.StatusComplete, Method: "dd if=/dev/zero bs=1M oflag=direct",
			DisplayUnits: map[string]string{result.MetricBW: "MiB/s"}, Read: &result.Direction{BytesPerSec: 100 << 20}},
		{Workload: "seq-write", Target: "/mnt/sd", Repetition: 1, Status: result.StatusFailed, Error: "workload seq-write on /mnt/sd: fio failed: fio: io_u error on file storbench-test.dat: No space left on device"},
	}
	var b bytes.Buffer
	if err := render.ResultsTable(&b, results); err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join("testdata", "show.txt"), b.Bytes())
}
