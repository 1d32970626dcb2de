package analysis

import (
	"math"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestLinksAtDepth(t *testing.T) {
	link := func(ceiling float64) LinkTraffic { return LinkTraffic{CeilingBPS: ceiling} }
	tests := []struct {
		name  string
		links []LinkTraffic
		own   float64
		n     int
		want  float64
	}{
		{"one write alone takes its own time", []LinkTraffic{link(100), link(100), link(50)}, 0.03, 1, 1 / 0.03},
		// D = (1, 2), own 2. n=1: X = 1/2, Q = X*D = (1/2, 1); n=2:
		// W = 1*1/2 + 2*1, X = 2/(2 + 5/2) = 4/9.
		{"two links, 2 in flight, by hand", []LinkTraffic{link(1), link(0.5)}, 2, 2, 4.0 / 9},
		{"one link is its ceiling at any depth", []LinkTraffic{link(100)}, 0.01, 32, 100},
		{"deep: towards the lowest ceiling", []LinkTraffic{link(100), link(200)}, 0.015, MaxInFlight, 100 * 0.999},
		{"a link of unknown capacity is left out", []LinkTraffic{link(100), link(0)}, 0.01, 4, 100},
		{"nothing known", []LinkTraffic{link(0)}, 0.01, 4, 0},
		{"own time unknown", []LinkTraffic{link(100)}, 0, 4, 0},
		{"no depth", []LinkTraffic{link(100)}, 0.01, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := linksAtDepth(tt.links, tt.own, tt.n)
			if tt.n == MaxInFlight {
				if got < tt.want || got > 100 {
					t.Errorf("linksAtDepth = %.4f, want between %.4f and the ceiling 100", got, tt.want)
				}
				return
			}
			if math.Abs(got-tt.want) > 1e-9*max(1, tt.want) {
				t.Errorf("linksAtDepth = %.6f, want %.6f", got, tt.want)
			}
		})
	}
	if a, b := linksAtDepth([]LinkTraffic{link(100)}, 0.01, MaxInFlight), linksAtDepth([]LinkTraffic{link(100)}, 0.01, 1<<30); a != b {
		t.Errorf("a depth past MaxInFlight: %.4f, want MaxInFlight's %.4f", b, a)
	}
}

func TestOwnTransfer(t *testing.T) {
	caps := map[string]float64{"x": 25e6, "a": 25e6, "b": 25e6, "c": 25e6}
	hosts := []string{"a", "b", "c"}
	tests := []struct {
		name string
		in   TrafficInput
		want float64 // seconds per MB
	}{
		// client to primary 1/25, primary to two others 2/25.
		{"client outside", TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 3, Hosts: hosts, LinkBytesPerSec: caps}, 3.0 / 25},
		// a leads half: its writes skip the first hop.
		{"client a primary of half", TrafficInput{Model: result.ReplicationPrimary, Client: "a", Replicas: 3, Hosts: hosts, LinkBytesPerSec: caps,
			PrimaryShare: map[string]float64{"a": 2, "b": 1, "c": 1}}, 0.5*2.0/25 + 0.5*3.0/25},
		// a slow receiver paces the hop: 1/5 for the copy that lands on c.
		{"a slow receiver", TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 2, Hosts: []string{"a", "c"},
			LinkBytesPerSec: caps, MeasuredCapacity: map[string]map[string]float64{"c": {"rx": 5e6}}}, 0.5*(1.0/25+1.0/5) + 0.5*(1.0/5+1.0/25)},
		{"a capacity unknown", TrafficInput{Model: result.ReplicationPrimary, Client: "y", Replicas: 3, Hosts: hosts, LinkBytesPerSec: caps}, 0},
		{"client-side: one hop, no own time", TrafficInput{Model: result.ReplicationClient, Client: "x", Replicas: 3, Hosts: hosts, LinkBytesPerSec: caps}, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ownTransfer(tt.in) * 1e6; math.Abs(got-tt.want) > 1e-9 {
				t.Errorf("ownTransfer = %.6f s/MB, want %.6f", got, tt.want)
			}
		})
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
	if want := "with 8 writes in flight the links allow 17.6 MB/s, 70% of the ceiling"; !strings.Contains(PlanTraffic(in, "test", 96<<20, nil).Summary, want) {
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
