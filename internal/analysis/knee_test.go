package analysis

import (
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestFindKnee(t *testing.T) {
	ms := time.Millisecond
	step := func(n int, iops float64, p99 time.Duration) SweepStep {
		return SweepStep{Clients: n, IOPS: iops, P99: p99}
	}
	tests := []struct {
		name      string
		steps     []SweepStep
		found     bool
		clients   int
		reason    string
		limitedBy string
		summary   string
	}{
		{name: "flat after four, the kbench curve", steps: []SweepStep{
			step(1, 10700, ms), step(2, 19000, ms), step(4, 21300, 2*ms), step(8, 21500, 6*ms)},
			found: true, clients: 4, reason: "flat",
			summary: "21.3k IOPS at 4 clients, then flat (+1% per doubling at 8); p99 x3.0 at 8"},
		{name: "a throttle: p99 jumps on the step reaching it, then flat", steps: []SweepStep{
			step(1, 500, 300*time.Microsecond), step(2, 1000, 300*time.Microsecond), step(4, 1529, 2600*time.Microsecond), step(8, 1531, 5*ms)},
			found: true, clients: 4, reason: "flat", summary: "1529 IOPS at 4 clients, then flat (+0% per doubling at 8); p99 x1.9 at 8"},
		{name: "just under ten percent is flat", steps: []SweepStep{step(1, 1000, ms), step(2, 1099, ms)},
			found: true, clients: 1, reason: "flat"},
		{name: "ten percent still scales", steps: []SweepStep{step(1, 1000, ms), step(2, 1101, ms)},
			summary: "no knee up to 2 clients: still +10% per doubling"},
		{name: "p99 past twice per doubling", steps: []SweepStep{
			step(1, 10000, ms), step(2, 15000, ms), step(4, 20000, 5*ms)},
			found: true, clients: 2, reason: "latency",
			summary: "15k IOPS at 2 clients, then p99 x5.0 per doubling at 4 (throughput +33%); p99 x5.0 at 4"},
		{name: "failed step skipped, gain per doubling over two", steps: []SweepStep{
			step(1, 10000, ms), {Clients: 2, Unusable: "failed: client 2"}, step(4, 21000, ms), step(8, 21500, ms)},
			found: true, clients: 4, reason: "flat"},
		{name: "late step skipped even when flat", steps: []SweepStep{
			step(1, 10000, ms), {Clients: 2, IOPS: 10100, Unusable: "late: client 2"}, step(4, 40000, ms)},
			summary: "no knee up to 4 clients: still +100% per doubling"},
		{name: "still scaling", steps: []SweepStep{step(1, 1000, ms), step(2, 2000, ms), step(4, 4000, ms)},
			summary: "no knee up to 4 clients: still +100% per doubling"},
		{name: "one step", steps: []SweepStep{step(1, 1000, ms)}, summary: "no knee: 1 usable step(s), two are needed"},
		{name: "unordered and not doubling", steps: []SweepStep{step(3, 3050, ms), step(1, 1000, ms), step(9, 3100, ms)},
			found: true, clients: 3, reason: "flat"},
		{name: "limited by what bound the step past the knee", steps: []SweepStep{
			step(1, 1000, ms), {Clients: 2, IOPS: 1020, P99: ms, LimitedBy: "device", Evidence: "sda 100% busy"}},
			found: true, clients: 1, reason: "flat", limitedBy: "device",
			summary: "1000 IOPS at 1 client, then flat (+2% per doubling at 2); p99 x1.0 at 2; limited by device"},
		{name: "the step past the knee unclear, the one after it clear", steps: []SweepStep{
			{Clients: 1, IOPS: 1056, P99: ms, LimitedBy: "device", Evidence: "vda 95% utilised"},
			{Clients: 2, IOPS: 1123, P99: 2 * ms, LimitedBy: "unclear", Evidence: "nothing saturated: vda 80% utilised"},
			{Clients: 4, IOPS: 1043, P99: 10 * ms, LimitedBy: "device", Evidence: "vda 100% utilised"}},
			found: true, clients: 1, reason: "flat", limitedBy: "device"},
		{name: "only the knee's own step clear", steps: []SweepStep{
			{Clients: 1, IOPS: 1056, P99: ms, LimitedBy: "device", Evidence: "vda 95% utilised"},
			{Clients: 2, IOPS: 1080, P99: ms, LimitedBy: "unclear"}},
			found: true, clients: 1, reason: "flat", limitedBy: "device"},
		{name: "a parallel device at its limit reads 80% busy: its queue grows", steps: []SweepStep{
			{Clients: 1, IOPS: 1026, P99: ms, LimitedBy: "unclear", Device: "vda", DiskUtil: 78, DiskQueue: 1.9},
			{Clients: 2, IOPS: 1176, P99: 2 * ms, LimitedBy: "unclear", Device: "vda", DiskUtil: 80, DiskQueue: 3.7},
			{Clients: 4, IOPS: 1203, P99: 4 * ms, LimitedBy: "unclear", Device: "vda", DiskUtil: 80, DiskQueue: 7.4}},
			found: true, clients: 2, reason: "flat", limitedBy: "device"},
		{name: "queue grows on an idle device: not the device", steps: []SweepStep{
			{Clients: 1, IOPS: 1000, P99: ms, LimitedBy: "unclear", DiskUtil: 20, DiskQueue: 1},
			{Clients: 2, IOPS: 1010, P99: ms, LimitedBy: "unclear", DiskUtil: 25, DiskQueue: 2}},
			found: true, clients: 1, reason: "flat", limitedBy: "unclear"},
		{name: "nothing clear anywhere", steps: []SweepStep{
			{Clients: 1, IOPS: 1056, P99: ms, LimitedBy: "unclear"}, {Clients: 2, IOPS: 1080, P99: ms, LimitedBy: "unclear"}},
			found: true, clients: 1, reason: "flat", limitedBy: "unclear"},
		{name: "bandwidth only", steps: []SweepStep{{Clients: 1, BytesPerSec: 100e6}, {Clients: 2, BytesPerSec: 101e6}},
			found: true, clients: 1, reason: "flat", summary: "100 MB/s at 1 client, then flat (+1% per doubling at 2)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := FindKnee(tc.steps)
			if k.Found != tc.found || k.Clients != tc.clients || k.Reason != tc.reason || k.LimitedBy != tc.limitedBy {
				t.Fatalf("knee = %+v, want found %v at %d (%s, limited by %q)", k, tc.found, tc.clients, tc.reason, tc.limitedBy)
			}
			if tc.summary != "" && k.Summary != tc.summary {
				t.Errorf("summary = %q\nwant      %q", k.Summary, tc.summary)
			}
		})
	}
}

func TestSweeps(t *testing.T) {
	lat := result.Latency{Percentiles: []result.Percentile{{P: 99, Value: time.Millisecond}}}
	res := func(round string, iops float64, status result.Status, labels map[string]string) result.Result {
		return result.Result{RunID: "r1", Target: "/mnt", Workload: "randread", Round: round, Status: status, Labels: labels,
			Read: &result.Direction{IOPS: iops, Completion: lat}}
	}
	results := []result.Result{
		res("isolated", 5000, result.StatusComplete, nil),
		res(result.SweepRound(2), 1900, result.StatusComplete, map[string]string{"sweep_late_clients": "client 2 (1.2 s)"}),
		res(result.SweepRound(1), 1000, result.StatusComplete, map[string]string{"sweep_client_min_iops": "1000", "sweep_start_spread_ms": "3"}),
		res(result.SweepRound(4), 0, result.StatusFailed, map[string]string{"sweep_failed_clients": "client 3"}),
		res(result.SweepRound(8), 2000, result.StatusComplete, nil),
		res(result.SweepRound(16), 2050, result.StatusComplete, nil),
	}
	results[4].Telemetry = &result.Telemetry{Device: "vda", Summary: map[string]result.Summary{
		result.SeriesDiskUtil: {Mean: 81, Samples: 5}, result.SeriesDiskQueue: {Mean: 7.5, Samples: 5}}}
	views := Sweeps(results)
	if len(views) != 1 {
		t.Fatalf("%d sweeps, want 1", len(views))
	}
	v := views[0]
	if st := v.Steps[3]; st.Clients != 8 || st.Device != "vda" || st.DiskUtil != 81 || st.DiskQueue != 7.5 {
		t.Errorf("step of 8 clients: %+v: want its result's device figures", st)
	}
	if fv := SweepsOf([]result.Figures{results[4].Figures()}); len(fv) != 1 || fv[0].Steps[0].DiskQueue != 0 {
		t.Errorf("figures keep no telemetry: %+v", fv)
	}
	var got []int
	for _, s := range v.Steps {
		got = append(got, s.Clients)
	}
	if len(got) != 5 || got[0] != 1 || got[4] != 16 {
		t.Fatalf("steps by clients = %v", got)
	}
	if v.Steps[1].Unusable != "late: client 2 (1.2 s)" || v.Steps[2].Unusable != "failed: client 3" {
		t.Errorf("unusable = %q, %q", v.Steps[1].Unusable, v.Steps[2].Unusable)
	}
	if v.Steps[0].ClientMinIOPS != 1000 || v.Steps[0].StartSpread != 3*time.Millisecond || v.Steps[0].P99 != time.Millisecond {
		t.Errorf("step 1 = %+v", v.Steps[0])
	}
	if !v.Knee.Found || v.Knee.Clients != 8 {
		t.Errorf("knee = %+v, want at 8 (2 is late, 4 failed)", v.Knee)
	}
}

// The breakdown of the step past the knee names its bound.
func TestBoundBy(t *testing.T) {
	steps := []SweepStep{{Clients: 1, IOPS: 1000}, {Clients: 2, IOPS: 1020, LimitedBy: "cpu"}}
	views := []SweepView{{Target: "longhorn/n2", Workload: "w", Steps: steps, Knee: FindKnee(steps)}}
	BoundBy(views, []Breakdown{
		{Target: "longhorn/n2", Workload: "w", Round: result.SweepRound(1), LimitedBy: BoundLocalDisk, Node: "n2"},
		{Target: "longhorn/n2", Workload: "w", Round: result.SweepRound(2), LimitedBy: BoundNetwork, Node: "kreal-node-2", Percent: 93, CeilingBPS: 117e6},
	})
	k := views[0].Knee
	want := "1000 IOPS at 1 client, then flat (+2% per doubling at 2); limited by kreal-node-2's network"
	if k.LimitedBy != "kreal-node-2's network" || k.Summary != want || k.Evidence != "93% of the 117 MB/s ceiling" {
		t.Errorf("knee %+v\nwant summary %q", k, want)
	}
}
