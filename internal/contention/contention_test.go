package contention

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func dist(max time.Duration, ps ...any) result.Latency {
	l := result.Latency{Max: max, Samples: 1000}
	for i := 0; i < len(ps); i += 2 {
		l.Percentiles = append(l.Percentiles, result.Percentile{P: ps[i].(float64), Value: ps[i+1].(time.Duration)})
	}
	return l
}

func TestShareOver(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name  string
		l     result.Latency
		share float64
		bound string
		words string
	}{
		{"all under", dist(400*ms, 50.0, 2*ms, 99.0, 100*ms, 99.9, 300*ms), 0, "about", "never fail (slowest operation 400 ms)"},
		// 1 s lies a quarter of the way from p90 (600 ms) to p99 (2.2 s):
		// 90 + 9/4 = 92.25, so 7.75% are slower.
		{"interpolated", dist(5*time.Second, 50.0, 10*ms, 90.0, 600*ms, 99.0, 2200*ms), 7.75, "about", "fail about 7.8% of the time"},
		{"beyond the last percentile", dist(3*time.Second, 50.0, 10*ms, 99.9, 900*ms), 0.1, "less than", "fail less than 0.1% of the time (slowest operation 3 s)"},
		{"all over", dist(9*time.Second, 1.0, 2*time.Second, 50.0, 4*time.Second), 99, "more than", "fail more than 99% of the time"},
		{"no percentiles", result.Latency{Max: 2 * time.Second}, 0, "", "fail an unknown share of the time (no percentiles recorded)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			share, bound, words := ShareOver(tt.l, time.Second)
			if diff := share - tt.share; diff > 1e-9 || diff < -1e-9 || bound != tt.bound || words != tt.words {
				t.Errorf("got %v %q %q, want %v %q %q", share, bound, words, tt.share, tt.bound, tt.words)
			}
		})
	}
}

func probe(role string, sync result.Latency) result.Result {
	return result.Result{Target: "/mnt/ssd", Round: result.RoundContention, Repetition: 1, Workload: "etcd-fdatasync",
		Status: result.StatusComplete, Labels: map[string]string{string(result.LabelContention): role, string(result.LabelProbe): "etcd-fdatasync"},
		Write: &result.Direction{IOPS: 400, TotalIOs: 1000, Completion: dist(time.Millisecond, 50.0, 20*time.Microsecond, 99.0, 80*time.Microsecond)},
		Sync:  &sync}
}

func TestReportsVerdict(t *testing.T) {
	ms := time.Millisecond
	alone := probe(RoleAlone, dist(4*ms, 50.0, 900*time.Microsecond, 99.0, 2100*time.Microsecond, 99.9, 3*ms))
	loaded := probe(RoleLoaded, dist(1500*ms, 50.0, 20*ms, 99.0, 183*ms, 99.9, 1200*ms, 99.95, 1400*ms))
	loaded.Workload += "+bulk-write"
	loaded.Bottleneck = &result.Attribution{LimitedBy: "device", Evidence: "device sda 100% utilised"}
	noise := result.Result{Target: "/mnt/ssd", Round: result.RoundContention, Repetition: 1, Workload: "bulk-write-1m-qd16",
		Status: result.StatusComplete, Labels: map[string]string{string(result.LabelContention): RoleNoise, string(result.LabelProbe): "etcd-fdatasync"},
		Write: &result.Direction{BytesPerSec: 312e6, IOPS: 297, TotalIOs: 3000}}
	isolated := probe(RoleAlone, dist(ms, 99.0, ms))
	isolated.Round = result.RoundIsolated // not part of the round

	reps := Reports([]result.Result{noise, loaded, isolated, alone})
	if len(reps) != 1 {
		t.Fatalf("reports: %+v", reps)
	}
	r := reps[0]
	if r.Latency != "fdatasync" || r.Alone.P99 != 2100*time.Microsecond || r.Loaded.P99 != 183*ms || r.Loaded.P999 != 1200*ms {
		t.Errorf("figures: %+v", r)
	}
	if r.Slowdown < 87.14 || r.Slowdown > 87.15 || r.NoiseBytesPerSec != 312e6 || r.EtcdPass == nil || *r.EtcdPass || r.LoadedLimitedBy != "device" {
		t.Errorf("report: %+v", r)
	}
	want := "under a bulk copy (312 MB/s of 1 MiB writes), fdatasync p99 rises from 2.1 ms to 183 ms (87.1x): etcd would miss its 10 ms target; a probe with a 1 s timeout would fail about"
	if !strings.HasPrefix(r.Verdict, want) {
		t.Errorf("verdict:\n got %s\nwant %s ...", r.Verdict, want)
	}
	// 1 s sits between p99 (183 ms) and p99.9 (1.2 s): 99 + 0.9*817/1017.
	if r.TimeoutPercent < 0.27 || r.TimeoutPercent > 0.28 {
		t.Errorf("timeout share %v", r.TimeoutPercent)
	}

	// A probe without fdatasync has no etcd verdict and compares the latency it waited.
	ra, rl := alone, loaded
	ra.Sync, rl.Sync = nil, nil
	r = Reports([]result.Result{ra, rl})[0]
	if r.Latency != "write latency" || r.EtcdPass != nil || strings.Contains(r.Verdict, "etcd") || !strings.Contains(r.Verdict, "whose throughput was not measured") {
		t.Errorf("read probe: %+v", r)
	}
}

// A probe whose submissions block (libaio on ceph-fuse: each 4 KiB write
// done inside io_submit) has a completion latency of microseconds; the
// report compares what it waited, fio's total latency, when recorded.
func TestReportsCompareTotalLatency(t *testing.T) {
	us, ms := time.Microsecond, time.Millisecond
	side := func(role string, clat, lat time.Duration) result.Result {
		r := probe(role, result.Latency{})
		r.Sync = nil
		r.Write.Completion = dist(2*clat, 50.0, clat/2, 99.0, clat)
		r.Write.Total = dist(2*lat, 50.0, lat/2, 99.0, lat)
		return r
	}
	alone, loaded := side(RoleAlone, 8*us, 3*ms), side(RoleLoaded, 9*us, 45*ms)
	loaded.Workload += "+bulk-write"
	r := Reports([]result.Result{alone, loaded})[0]
	if r.Alone.P99 != 3*ms || r.Loaded.P99 != 45*ms || r.Slowdown != 15 {
		t.Errorf("compared %v to %v (%.1fx), want fio's total latency: 3 ms to 45 ms (15x)", r.Alone.P99, r.Loaded.P99, r.Slowdown)
	}
	// Without total percentiles (an imported result), completion latency.
	alone.Write.Total, loaded.Write.Total = result.Latency{}, result.Latency{}
	if r := Reports([]result.Result{alone, loaded})[0]; r.Alone.P99 != 8*us || r.Loaded.P99 != 9*us {
		t.Errorf("without total latency: %v to %v, want the completion latency 8 µs to 9 µs", r.Alone.P99, r.Loaded.P99)
	}
}
