package analysis

import (
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func res(target, node, workload string, bps float64, p50 time.Duration, labels map[string]string) result.Result {
	l := map[string]string{string(result.LabelNode): node}
	for k, v := range labels {
		l[k] = v
	}
	return result.Result{Target: target, Workload: workload, Round: result.RoundIsolated, Status: result.StatusComplete, Labels: l,
		Write: &result.Direction{BytesPerSec: bps, TotalIOs: 1, Completion: result.Latency{Samples: 1, Percentiles: []result.Percentile{{P: 50, Value: p50}}}}}
}

func link(from, to string, bps float64, idle time.Duration) []result.Result {
	l := map[string]string{string(result.LabelNetFrom): from, string(result.LabelNetTo): to, string(result.LabelNetwork): "host"}
	send := result.Result{Target: from + " -> " + to, Round: result.RoundNetwork, Workload: result.WorkloadTCPSend, Status: result.StatusComplete, Labels: l,
		Write: &result.Direction{BytesPerSec: bps, TotalIOs: 1}}
	rtt := result.Result{Target: from + " -> " + to, Round: result.RoundNetwork, Workload: result.WorkloadTCPRTTIdle, Status: result.StatusComplete, Labels: l,
		Write: &result.Direction{TotalIOs: 1, Completion: result.Latency{Samples: 1, Percentiles: []result.Percentile{{P: 50, Value: idle}, {P: 99, Value: 2 * idle}}}}}
	return []result.Result{send, rtt}
}

// TestBreakdownReplicated is the example: two remote replicas
// share a 118 MB/s link from kube-2, under a 410 MB/s local disk.
func TestBreakdownReplicated(t *testing.T) {
	rs := []result.Result{
		res("k8s:local-path@kube-2", "kube-2", "seq-write", 410e6, 200*time.Microsecond, map[string]string{string(result.LabelStorageClass): "local-path"}),
		res("k8s:longhorn@kube-2", "kube-2", "seq-write", 54e6, 900*time.Microsecond, map[string]string{
			string(result.ClassParameter("numberOfReplicas")): "3", string(result.LabelReplicaNodes): "kube-1,kube-2,kube-3"}),
	}
	rs = append(rs, link("kube-2", "kube-1", 118e6, 100*time.Microsecond)...)
	rs = append(rs, link("kube-2", "kube-3", 120e6, 150*time.Microsecond)...)
	bs := Breakdowns(rs, LinkMatrices(rs))
	if len(bs) != 1 {
		t.Fatalf("%d breakdowns, want 1: %+v", len(bs), bs)
	}
	b := bs[0]
	if b.LimitedBy != BoundReplication || b.RemoteCopies != 2 || int(b.CeilingBPS/1e6) != 59 || int(b.Percent+0.5) != 92 {
		t.Errorf("breakdown %+v", b)
	}
	want := "seq-write 54 MB/s: local disk 410 MB/s; link kube-2 -> kube-1 and kube-3 118 MB/s; 2 remote copies share it: 59 MB/s; ceiling 59 MB/s; limited by network (replication traffic), 92% of the ceiling"
	if !strings.HasPrefix(b.Summary, want) {
		t.Errorf("summary\n%s\nwant it to begin\n%s", b.Summary, want)
	}
	if b.Latency == nil || b.Latency.FloorP50 != 350*time.Microsecond {
		t.Errorf("latency floor %+v, want 200 µs local + 150 µs round trip", b.Latency)
	}
	steps := map[string]float64{}
	for _, s := range b.Steps {
		steps[s.Name] = s.LostBPS / 1e6
	}
	if steps[PartLink] != 292 || int(steps[PartReplication]) != 59 || int(steps[PartRest]) != 5 {
		t.Errorf("steps %+v", b.Steps)
	}
}

// TestBreakdownNetworkFilesystem: one copy on a server across a link
// slower than the disk binds on the network; a fast link leaves the disk
// as the ceiling; a figure under half of its ceiling is the storage
// engine's doing, whichever part is lowest; nothing measured says what is
// missing.
func TestBreakdownNetworkFilesystem(t *testing.T) {
	base := res("k8s:local-path@n1", "n1", "seq-write", 300e6, 0, map[string]string{string(result.LabelStorageClass): "local-path"})
	netfs := func(bps float64) result.Result {
		return res("k8s:netfs@n1", "n1", "seq-write", bps, 0, map[string]string{string(result.LabelReplicas): "1", string(result.LabelReplicaNodes): "n3"})
	}
	for _, c := range []struct {
		name               string
		measured, linkBPS  float64
		want, lowest, says string
	}{
		{"shaped", 110e6, 117e6, BoundNetwork, BoundNetwork, "ceiling 117 MB/s; limited by network, 94% of the ceiling"},
		{"unshaped", 250e6, 1200e6, BoundLocalDisk, BoundLocalDisk, "ceiling 300 MB/s; limited by local disk, 83% of the ceiling"},
		{"unshaped, slow engine", 110e6, 1200e6, BoundEngine, BoundLocalDisk, "ceiling 300 MB/s (local disk); limited by the storage engine, 37% of the ceiling"},
		{"shaped, slow engine", 50e6, 117e6, BoundEngine, BoundNetwork, "ceiling 117 MB/s (network); limited by the storage engine, 43% of the ceiling"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rs := append([]result.Result{base, netfs(c.measured)}, link("n1", "n3", c.linkBPS, 50*time.Microsecond)...)
			bs := Breakdowns(rs, LinkMatrices(rs))
			if len(bs) != 1 || bs[0].LimitedBy != c.want || bs[0].Lowest != c.lowest {
				t.Fatalf("breakdowns %+v, want limited by %s, lowest %s", bs, c.want, c.lowest)
			}
			if !strings.Contains(bs[0].Summary, c.says) {
				t.Errorf("summary %q, want it to say %q", bs[0].Summary, c.says)
			}
		})
	}
	nfs := netfs(110e6)
	bs := Breakdowns([]result.Result{nfs}, nil)
	if len(bs) != 1 || bs[0].CeilingBPS != 0 || len(bs[0].Missing) != 2 {
		t.Fatalf("with nothing measured: %+v", bs)
	}
	if !strings.Contains(bs[0].Summary, "--rounds network") || !strings.Contains(bs[0].Summary, "local-path") {
		t.Errorf("summary %q does not say how to get the missing inputs", bs[0].Summary)
	}
}
