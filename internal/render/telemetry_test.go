package render

import (
	"bytes"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/result"
)

func lat(p50, p99, p999, max time.Duration) result.Latency {
	return result.Latency{Samples: 5000, Mean: p50, Max: max, Percentiles: []result.Percentile{{P: 50, Value: p50}, {P: 90, Value: p99 / 2}, {P: 99, Value: p99}, {P: 99.9, Value: p999}}}
}

// TestTelemetryAndContentionGolden renders what show prints for a
// contention run: the LIMITED BY column, the evidence, the missing sources
// once, and the alone-versus-loaded table with its verdict.
func TestTelemetryAndContentionGolden(t *testing.T) {
	ms := time.Millisecond
	missing := []string{"temperature: no readable /sys/class/thermal zone", "throttling: no get_throttled (not a Raspberry Pi, or vcgencmd missing)"}
	labels := func(role string) map[string]string {
		return map[string]string{"contention": role, "probe": "etcd-fdatasync"}
	}
	sync := func(l result.Latency) *result.Latency { return &l }
	rs := []result.Result{
		{Target: "/mnt/ssd", Round: "contention", Repetition: 1, Workload: "etcd-fdatasync", Status: result.StatusComplete, Labels: labels("alone"),
			Write:      &result.Direction{IOPS: 412, BytesPerSec: 412 * 2300, TotalIOs: 10000, Completion: lat(20*time.Microsecond, 80*time.Microsecond, 200*time.Microsecond, ms)},
			Sync:       sync(lat(900*time.Microsecond, 2100*time.Microsecond, 3*ms, 4*ms)),
			Bottleneck: &result.Attribution{LimitedBy: "device", Evidence: "device sda1 96% utilised, queue depth 1.0; CPU 12% busy (busiest core 20%)"},
			Telemetry:  &result.Telemetry{Missing: missing}},
		{Target: "/mnt/ssd", Round: "contention", Repetition: 1, Workload: "etcd-fdatasync+bulk-write", Status: result.StatusComplete, Labels: labels("loaded"),
			Write:      &result.Direction{IOPS: 31, BytesPerSec: 31 * 2300, TotalIOs: 930, Completion: lat(40*time.Microsecond, 900*time.Microsecond, 2*ms, 3*ms)},
			Sync:       sync(lat(20*ms, 183*ms, 1200*ms, 1500*ms)),
			Bottleneck: &result.Attribution{LimitedBy: "device", Evidence: "device sda1 100% utilised, queue depth 17.2; CPU 35% busy (busiest core 52%)"},
			Telemetry:  &result.Telemetry{Missing: missing}},
		{Target: "/mnt/ssd", Round: "contention", Repetition: 1, Workload: "bulk-write-1m-qd16", Status: result.StatusComplete, Labels: labels("noise"),
			Write: &result.Direction{IOPS: 297.5, BytesPerSec: 312e6, TotalIOs: 9000, Completion: lat(50*ms, 120*ms, 300*ms, 400*ms)}},
	}
	var b bytes.Buffer
	if err := ResultsTable(&b, rs); err != nil {
		t.Fatal(err)
	}
	if err := ContentionSection(&b, contention.Reports(rs)); err != nil {
		t.Fatal(err)
	}
	golden(t, "telemetry-contention.golden", b.Bytes())

	// No contention round, no section.
	b.Reset()
	if err := ContentionSection(&b, contention.Reports(rs[:1])); err != nil || b.Len() != 0 {
		t.Errorf("section without a loaded probe: %q %v", b.String(), err)
	}
}

// TestTelemetrySourcesAndOtherNodes: where each group of series was read
// is listed once, and the other nodes' load is shown per workload with
// only the series each node had.
func TestTelemetrySourcesAndOtherNodes(t *testing.T) {
	node3 := &result.Telemetry{Host: "kreal-node-3", Sources: map[string]string{"network": "the kubelet's Summary API"},
		Summary: map[string]result.Summary{result.SeriesNetRxBPS: {Mean: 98.5e6, Samples: 10}, result.SeriesNetTxBPS: {Mean: 1.2e6, Samples: 10}}}
	tel := func() *result.Telemetry {
		return &result.Telemetry{Host: "kreal-node-2", Sources: map[string]string{"network": "host-network sampler pod storbench/sampler-x"},
			Nodes: []*result.Telemetry{node3, {Host: "kreal-node-1"}, {Host: "kreal-node-4", Device: "sda",
				Summary: map[string]result.Summary{result.SeriesDiskUtil: {Mean: 97, Samples: 10}, result.SeriesDiskWriteBPS: {Mean: 110e6, Samples: 10}}}}}
	}
	rs := []result.Result{
		{Workload: "seq-write", Telemetry: tel()},
		{Workload: "rand-read", Telemetry: tel()},
	}
	var b bytes.Buffer
	if err := Bottlenecks(&b, rs); err != nil {
		t.Fatal(err)
	}
	want := `Telemetry read from:
  kreal-node-3 network: the kubelet's Summary API
  network: host-network sampler pod storbench/sampler-x
The run's other nodes meanwhile (means over each workload):
  seq-write on kreal-node-3: network in 98.5 MB/s, network out 1.2 MB/s
  seq-write on kreal-node-1: nothing readable
  seq-write on kreal-node-4: disk sda 97% busy, disk write 110 MB/s
  rand-read on kreal-node-3: network in 98.5 MB/s, network out 1.2 MB/s
  rand-read on kreal-node-1: nothing readable
  rand-read on kreal-node-4: disk sda 97% busy, disk write 110 MB/s
`
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
}
