package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

// TestLinksAtDepth: one write alone takes its hops in turn, each at its
// slowest link's pace (TCP's headers off a nominal speed); more writes in
// flight share the links, towards the lowest ceiling.
func TestLinksAtDepth(t *testing.T) {
	f := PayloadOfNominal
	caps := map[string]float64{"x": 25e6, "a": 25e6, "b": 25e6, "c": 25e6}
	hosts := []string{"a", "b", "c"}
	ceph := func(mod func(*TrafficInput)) TrafficInput {
		in := TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 3, Hosts: hosts, LinkBytesPerSec: caps}
		if mod != nil {
			mod(&in)
		}
		return in
	}
	// measured capacities of 1 byte/s on every link: no headers taken off.
	ones := func(nodes ...string) map[string]map[string]float64 {
		m := map[string]map[string]float64{}
		for _, n := range nodes {
			m[n] = map[string]float64{"tx": 1, "rx": 1}
		}
		return m
	}
	tests := []struct {
		name string
		in   TrafficInput
		n    int
		want float64 // bytes/s
	}{
		// client to primary 1/25, primary to two others 2/25 (s/MB).
		{"one write, client outside", ceph(nil), 1, 1e6 * f / (3.0 / 25)},
		// a leads half: its writes skip the first hop.
		{"one write, the client a primary of half", ceph(func(in *TrafficInput) {
			in.Client, in.PrimaryShare = "a", map[string]float64{"a": 2, "b": 1, "c": 1}
		}), 1, 1e6 * f / (0.5*2.0/25 + 0.5*3.0/25)},
		// a slow receiver (measured: no headers taken off) paces its hops.
		{"one write, a slow receiver", ceph(func(in *TrafficInput) {
			in.Replicas, in.Hosts, in.MeasuredCapacity = 2, []string{"a", "c"}, map[string]map[string]float64{"c": {"rx": 5e6}}
		}), 1, 1 / (1/(25e6*f) + 1/5e6)},
		// a leads every write: d = 1 s/byte on its four links. n=1: two
		// hops of 1, X = 1/2, each link holds a write half the time; n=2:
		// each hop 1.5, X = 2/3.
		{"two hops, 2 in flight, by hand", TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 2, Hosts: []string{"a", "b"},
			PrimaryShare: map[string]float64{"a": 1}, MeasuredCapacity: ones("x", "a", "b")}, 2, 2.0 / 3},
		{"one hop is its ceiling at any depth", TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 1, Hosts: []string{"a"},
			MeasuredCapacity: ones("x", "a")}, 32, 1},
		{"a capacity unknown", ceph(func(in *TrafficInput) { in.Client = "y" }), 4, 0},
		{"client-side: one hop, no figure at depth", ceph(func(in *TrafficInput) { in.Model = result.ReplicationClient }), 4, 0},
		{"no depth", ceph(nil), 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := linksAtDepth(tt.in, tt.n); math.Abs(got-tt.want) > 1e-9*max(1, tt.want) {
				t.Errorf("linksAtDepth = %.6f, want %.6f", got, tt.want)
			}
		})
	}
	// Deep: towards the lowest ceiling (the client's link and every
	// host's receiving side at 1x the payload, TCP's headers off).
	ceiling := 25e6 * f
	if got := linksAtDepth(ceph(nil), MaxInFlight); got < 0.98*ceiling || got > ceiling {
		t.Errorf("at %d in flight: %.0f, want within 2%% under the ceiling %.0f", MaxInFlight, got, ceiling)
	}
	if a, b := linksAtDepth(ceph(nil), MaxInFlight), linksAtDepth(ceph(nil), 1<<30); a != b {
		t.Errorf("a depth past MaxInFlight: %.4f, want MaxInFlight's %.4f", b, a)
	}
	// Fewer copies than other hosts: they spread over the others, so the
	// order the hosts are named in changes nothing.
	two := func(hosts ...string) TrafficInput {
		return ceph(func(in *TrafficInput) {
			in.Replicas, in.Hosts, in.PrimaryShare = 2, hosts, map[string]float64{"a": 2, "b": 1, "c": 1}
		})
	}
	if a, b := linksAtDepth(two("a", "b", "c"), 8), linksAtDepth(two("c", "a", "b"), 8); math.Abs(a-b) > 1e-6*a {
		t.Errorf("2 copies on 3 hosts at 8 in flight: %.0f with the hosts in one order, %.0f in another", a, b)
	}
	prev := 0.0
	for n := 1; n <= 64; n *= 2 {
		got := linksAtDepth(ceph(nil), n)
		if got <= prev {
			t.Errorf("%d in flight: %.0f, not above %.0f at half as many", n, got, prev)
		}
		prev = got
	}
}

// TestPlanTrafficAtDepth is the primary-copy write measured on the
// standalone Ceph (test/cephtest's harness, 2026-11-28): a client and
// three OSD hosts on links shaped to 200 Mbit/s, a size-3 pool whose
// primaries sent 0.42, 0.84 and 0.75 times the payload, fio's rbd engine
// writing 4 MiB blocks over objects already written, at iodepth 1 to 16.
// Four links tie at the 25 MB/s ceiling.
func TestPlanTrafficAtDepth(t *testing.T) {
	caps := map[string]float64{"client": 25e6, "n1": 25e6, "n2": 25e6, "n3": 25e6}
	in := TrafficInput{Model: result.ReplicationPrimary, Client: "client", Replicas: 3, Hosts: []string{"n1", "n2", "n3"},
		PrimaryShare: map[string]float64{"n1": 0.42, "n2": 0.84, "n3": 0.75}, LinkBytesPerSec: caps}
	measured := map[int]float64{1: 7.87e6, 2: 11.15e6, 4: 15.16e6, 8: 18.26e6, 16: 20.42e6}
	for depth, bps := range measured {
		in.InFlight = depth
		p := PlanTraffic(in, "test", 96<<20, nil)
		if p.CeilingBPS != 25e6 || len(p.Tied) != 3 {
			t.Fatalf("ceiling %.0f with %d tied links: want 25 MB/s, four links tied\n%s", p.CeilingBPS, len(p.Tied), p.Summary)
		}
		if r := bps / p.AtDepthBPS; r < 0.9 || r > 1.1 {
			t.Errorf("iodepth %d: predicted %.2f MB/s, measured %.2f MB/s (%.0f%%): want within 10%%", depth, p.AtDepthBPS/1e6, bps/1e6, r*100)
		}
	}
	// Deeper, from BenchmarkLinksAtDepth's third run (2026-11-29): 512
	// and 1,024 MiB written, 8 rounds of the depth's writes, so the
	// write's start and end are a small part (96 MiB, 24 writes, was
	// mostly its ends: 87% at 32); each depth's primary shares as its
	// links sent them.
	for _, d := range []struct {
		depth int
		bps   float64
		share map[string]float64
	}{
		{16, 20.98e6, map[string]float64{"n1": 0.26, "n2": 0.32, "n3": 0.425}},
		{32, 21.17e6, map[string]float64{"n1": 0.29, "n2": 0.275, "n3": 0.44}},
	} {
		deep := in
		deep.InFlight, deep.PrimaryShare = d.depth, d.share
		p := PlanTraffic(deep, "test", 1<<30, nil)
		if r := d.bps / p.AtDepthBPS; r < 0.9 || r > 1.1 {
			t.Errorf("iodepth %d, steady: predicted %.2f MB/s, measured %.2f MB/s (%.0f%%): want within 10%%", d.depth, p.AtDepthBPS/1e6, d.bps/1e6, r*100)
		}
	}
	in.InFlight = 8
	if want := "with 8 writes in flight the links allow 20.1 MB/s, 80% of the ceiling"; !strings.Contains(PlanTraffic(in, "test", 96<<20, nil).Summary, want) {
		t.Errorf("summary %q: want %q", PlanTraffic(in, "test", 96<<20, nil).Summary, want)
	}
	in.InFlight = 0
	if p := PlanTraffic(in, "test", 96<<20, nil); p.AtDepthBPS != 0 || strings.Contains(p.Summary, "in flight") {
		t.Errorf("depth unknown: at depth %.0f, summary %q: want none", p.AtDepthBPS, p.Summary)
	}
	gluster := TrafficInput{Model: result.ReplicationClient, Client: "client", Replicas: 3, Hosts: []string{"n1", "n2", "n3"}, LinkBytesPerSec: caps, InFlight: 8}
	if p := PlanTraffic(gluster, "test", 96<<20, nil); p.AtDepthBPS != 0 {
		t.Errorf("client-side (one hop): at depth %.0f, want none (its ceiling holds)", p.AtDepthBPS)
	}
}

// TestBreakdownLinksAtDepth: a Ceph write labelled with its writes in
// flight gets the links' figure at that depth as its per-link part, and is
// judged against it; without the label, against the plain ceiling.
func TestBreakdownLinksAtDepth(t *testing.T) {
	measured := linkCounters(t, "links-seqwrite-200mbit.txt")
	nodes := []string{"client", "sbceph-node-1", "sbceph-node-2", "sbceph-node-3"}
	node := func(name string) *result.Telemetry {
		return &result.Telemetry{Host: name, LinkBytesPerSec: 25e6,
			Totals: result.TelemetryTotals{NetTxBytes: int64(measured[name]["tx"]), NetRxBytes: int64(measured[name]["rx"])}}
	}
	tm := node("client")
	tm.Nodes = []*result.Telemetry{node(nodes[1]), node(nodes[2]), node(nodes[3])}
	r := result.Result{Target: "rbd:rbd", Workload: "seq-write", Status: result.StatusComplete, Telemetry: tm,
		Write: &result.Direction{BytesPerSec: 16e6, Bytes: 536870912},
		Labels: map[string]string{string(result.LabelNode): "client", string(result.LabelReplicas): "3", string(result.LabelTargetKind): "rbd",
			string(result.LabelReplicaNodes): "sbceph-node-1,sbceph-node-2,sbceph-node-3", string(result.LabelInFlight): "8"}}
	bs := Breakdowns([]result.Result{r}, nil)
	if len(bs) != 1 || bs[0].Traffic == nil {
		t.Fatalf("breakdowns %+v", bs)
	}
	b, p := bs[0], bs[0].Traffic
	if p.InFlight != 8 || p.AtDepthBPS <= 0 || p.AtDepthBPS >= p.CeilingBPS {
		t.Fatalf("at depth %.0f of the ceiling %.0f with %d in flight: want under the ceiling\n%s", p.AtDepthBPS, p.CeilingBPS, p.InFlight, p.Summary)
	}
	var part *BreakdownPart
	for i := range b.Parts {
		if b.Parts[i].Name == PartLinks {
			part = &b.Parts[i]
		}
	}
	if part == nil || part.CeilingBPS != p.AtDepthBPS || !strings.Contains(part.Source, "with 8 writes in flight") {
		t.Fatalf("per-link part %+v: want the figure at depth %.0f", part, p.AtDepthBPS)
	}
	if b.CeilingBPS != p.AtDepthBPS || b.LimitedBy != BoundNetwork || math.Abs(b.Percent-16e6/p.AtDepthBPS*100) > 1e-9 {
		t.Errorf("ceiling %.0f, limited by %q at %.0f%%: want the links at depth, network", b.CeilingBPS, b.LimitedBy, b.Percent)
	}
	delete(r.Labels, string(result.LabelInFlight))
	if b := Breakdowns([]result.Result{r}, nil)[0]; b.CeilingBPS != b.Traffic.CeilingBPS || b.Traffic.AtDepthBPS != 0 {
		t.Errorf("no depth: ceiling %.0f, at depth %.0f: want the plain ceiling %.0f", b.CeilingBPS, b.Traffic.AtDepthBPS, b.Traffic.CeilingBPS)
	}
}
