package analysis

import (
	"bufio"
	"bytes"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/result"
)

// testdata/ceph holds figures recorded on test/cluster/ceph.sh's
// standalone Ceph (three OSD nodes sbceph-node-1..3 holding osd.0..2, a
// client namespace, size-3 pool rbd with 32 PGs): a 4 MiB sequential
// write (fio's rbd engine, QD8) with osd.2's disk throttled to 20 MiB/s,
// with sbceph-node-3's link shaped to 100 Mbit/s, and with every link
// shaped to 200 Mbit/s.

func cephFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "ceph", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// commitSamples reads a file of `ceph osd perf -f json` outputs: OSD -> samples.
func commitSamples(t *testing.T, name string) map[int][]time.Duration {
	t.Helper()
	stream, err := ceph.ParsePerfStream(cephFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int][]time.Duration{}
	for _, ls := range stream {
		for _, l := range ls {
			out[l.OSD] = append(out[l.OSD], l.Commit)
		}
	}
	return out
}

func benchOf(t *testing.T, osd int, name string) float64 {
	t.Helper()
	b, err := ceph.ParseBench(osd, cephFile(t, name))
	if err != nil {
		t.Fatal(err)
	}
	return b.BytesPerSec
}

// linkCounters reads "veth rx tx<TAB>veth rx tx" (before, after) lines:
// node -> "tx"/"rx" -> bytes the node sent and received during the run.
func linkCounters(t *testing.T, name string) map[string]map[string]float64 {
	t.Helper()
	out := map[string]map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(cephFile(t, name)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) != 6 || strings.HasPrefix(f[0], "#") {
			continue
		}
		n := make([]float64, 6)
		for _, i := range []int{1, 2, 4, 5} {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				t.Fatal(err)
			}
			n[i] = v
		}
		node := "client"
		if s := strings.TrimPrefix(f[0], "sbct1v"); s != "c" {
			node = "sbceph-node-" + s
		}
		// the host side's rx is what the node sent
		out[node] = map[string]float64{"tx": n[4] - n[1], "rx": n[5] - n[2]}
	}
	return out
}

func TestCompareOSDsRecorded(t *testing.T) {
	const mbit100 = 100e6 / 8
	bench := []float64{benchOf(t, 0, "osd-bench-0.json"), benchOf(t, 1, "osd-bench-1.json"), benchOf(t, 2, "osd-bench-2.json")}
	slowDisk := commitSamples(t, "osd-perf-seqwrite-osd2-disk-20MBps.txt")
	slowLink := commitSamples(t, "osd-perf-seqwrite-node3-link-100mbit.txt")
	links := linkCounters(t, "links-seqwrite-node3-link-100mbit.txt")
	const linkRunSec = 54.323 // fio's runtime of that write
	facts := func(benchBPS []float64, commit map[int][]time.Duration, linkCap map[int]float64) []OSDFacts {
		var fs []OSDFacts
		for id := 0; id < 3; id++ {
			host := "sbceph-node-" + strconv.Itoa(id+1)
			f := OSDFacts{ID: id, Host: host, Device: "vda", BenchBytesPerSec: benchBPS[id], Commit: commit[id], LinkBytesPerSec: linkCap[id]}
			if l, ok := links[host]; ok && linkCap != nil {
				f.LinkUsedBytesPerSec = math.Max(l["tx"], l["rx"]) / linkRunSec
			}
			fs = append(fs, f)
		}
		return fs
	}
	tests := []struct {
		name      string
		osds      []OSDFacts
		wantOSD   int // -1: no verdict
		wantCause string
		wantWords []string
	}{
		{"osd.2's disk throttled to 20 MiB/s",
			facts([]float64{bench[0], bench[1], benchOf(t, 2, "osd-bench-2-slowed.json")}, slowDisk, nil),
			2, OSDCauseDisk, []string{"osd.2 on sbceph-node-3 (vda): 21 MB/s against 393-481 MB/s for the others", "commit latency", "during seq-write", "the pool's writes wait for it"}},
		{"sbceph-node-3's link shaped to 100 Mbit/s",
			facts(bench, slowLink, map[int]float64{2: mbit100}),
			2, OSDCauseLink, []string{"osd.2 on sbceph-node-3 (vda): its link carried", "of 12.5 MB/s", "its disk is in line with the others", "wait for its link, not its disk"}},
		{"nothing wrong", facts(bench, slowLink, nil), -1, "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := CompareOSDs("seq-write", tt.osds)
			if tt.wantOSD < 0 {
				if len(v) != 0 {
					t.Fatalf("verdicts %+v, want none", v)
				}
				return
			}
			if len(v) != 1 || v[0].OSD != tt.wantOSD || v[0].Cause != tt.wantCause || v[0].Host != "sbceph-node-3" {
				t.Fatalf("verdicts %+v, want one: osd.%d, %s", v, tt.wantOSD, tt.wantCause)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(v[0].Summary, w) {
					t.Errorf("summary %q lacks %q", v[0].Summary, w)
				}
			}
			t.Log(v[0].Summary)
		})
	}
}

func TestPrimaryCopyTrafficRecorded(t *testing.T) {
	const payload = 536870912.0 // fio's io_bytes
	const mbit200 = 200e6 / 8
	measured := linkCounters(t, "links-seqwrite-200mbit.txt")
	pgs, err := ceph.ParsePGs(cephFile(t, "pg-ls-by-pool-rbd-200mbit-after.json"))
	if err != nil {
		t.Fatal(err)
	}
	share := map[string]float64{}
	for osd, s := range ceph.PrimaryByteShare(pgs) {
		share["sbceph-node-"+strconv.Itoa(osd+1)] = s
	}
	hosts := []string{"sbceph-node-1", "sbceph-node-2", "sbceph-node-3"}
	caps := map[string]float64{"client": mbit200}
	for _, h := range hosts {
		caps[h] = mbit200
	}
	model, why := ReplicationModelOf(result.Result{Labels: map[string]string{string(result.LabelTargetKind): "rbd"}})
	if model != result.ReplicationPrimary {
		t.Fatalf("model for an rbd target: %s (%s)", model, why)
	}
	in := TrafficInput{Model: model, Client: "client", Replicas: 3, Hosts: hosts, PrimaryShare: share, LinkBytesPerSec: caps}
	p := PlanTraffic(in, why, payload, measured)
	t.Log(p.Summary)
	if len(p.Links) != 7 { // client tx, three rx, three tx
		t.Fatalf("links %+v", p.Links)
	}
	for _, l := range p.Links {
		if d := math.Abs(l.PredictedBytes-l.MeasuredBytes) / l.MeasuredBytes; d > 0.15 {
			t.Errorf("%s %s: predicted %.0f MiB, measured %.0f MiB (%.0f%% off)", l.Node, l.Direction, l.PredictedBytes/(1<<20), l.MeasuredBytes/(1<<20), d*100)
		}
	}
	if p.Binding == nil || p.CeilingBPS != mbit200 {
		t.Errorf("binding %+v, ceiling %.0f: want a link at 1.00x the payload, 25 MB/s", p.Binding, p.CeilingBPS)
	}
	// the client's tx and every host's rx carry 1.00x: four links tie
	var tied []string
	for _, l := range p.Tied {
		tied = append(tied, l.Node+"/"+l.Direction)
	}
	if p.Binding != nil && (p.Binding.Node != "client" || len(tied) != 3 || !strings.Contains(p.Summary, "4 links saturate together")) {
		t.Errorf("binding %s/%s, tied %v: want client/tx tied with the three hosts' rx\n%s", p.Binding.Node, p.Binding.Direction, tied, p.Summary)
	}
	for _, l := range p.Tied {
		if l.Direction != "rx" {
			t.Errorf("%s %s tied at %.2fx: a primary's tx carries under 1x here", l.Node, l.Direction, l.PerPayload)
		}
	}

	// the client-side model on the same run would predict 3x on the client link: measured 1.00x
	client := PlanTraffic(TrafficInput{Model: result.ReplicationClient, Client: "client", Replicas: 3, Hosts: hosts}, "", payload, measured)
	if l := client.Links[0]; l.Node != "client" || l.PerPayload != 3 || l.MeasuredBytes/payload > 1.05 {
		t.Errorf("client-side model: %+v", l)
	}
}

func TestPredictTraffic(t *testing.T) {
	hosts := []string{"a", "b", "c"}
	tests := []struct {
		name string
		in   TrafficInput
		want map[string]float64 // node/dir -> per payload
	}{
		{"client-side, client outside", TrafficInput{Model: result.ReplicationClient, Client: "x", Replicas: 3, Hosts: hosts},
			map[string]float64{"x/tx": 3, "a/rx": 1, "b/rx": 1, "c/rx": 1}},
		{"client-side, client holds a copy", TrafficInput{Model: result.ReplicationClient, Client: "a", Replicas: 3, Hosts: hosts},
			map[string]float64{"a/tx": 2, "b/rx": 1, "c/rx": 1}},
		{"client-side, a brick's server not named", TrafficInput{Model: result.ReplicationClient, Client: "b", Replicas: 3, Hosts: []string{"b", "c"}},
			map[string]float64{"b/tx": 2, "c/rx": 1}},
		{"primary, even shares", TrafficInput{Model: result.ReplicationPrimary, Client: "x", Replicas: 3, Hosts: hosts},
			map[string]float64{"x/tx": 1, "a/rx": 1, "b/rx": 1, "c/rx": 1, "a/tx": 2.0 / 3, "b/tx": 2.0 / 3, "c/tx": 2.0 / 3}},
		{"primary, client on a host leading half", TrafficInput{Model: result.ReplicationPrimary, Client: "a", Replicas: 3, Hosts: hosts,
			PrimaryShare: map[string]float64{"a": 2, "b": 1, "c": 1}},
			map[string]float64{"a/tx": 0.5 + 1, "a/rx": 0.5, "b/rx": 1, "c/rx": 1, "b/tx": 0.5, "c/tx": 0.5}},
		{"server", TrafficInput{Model: result.ReplicationServer, Client: "x", Replicas: 1, Hosts: []string{"nas"}},
			map[string]float64{"x/tx": 1, "nas/rx": 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := map[string]float64{}
			for _, l := range PredictTraffic(tt.in) {
				got[l.Node+"/"+l.Direction] = l.PerPayload
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for k, v := range tt.want {
				if math.Abs(got[k]-v) > 1e-9 {
					t.Errorf("%s = %.3f, want %.3f (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}

func TestReplicationModelOf(t *testing.T) {
	tests := []struct {
		labels map[string]string
		want   string
	}{
		{map[string]string{string(result.LabelReplicationModel): "server"}, result.ReplicationServer},
		{map[string]string{string(result.LabelCSIDriver): "rook-ceph.rbd.csi.ceph.com"}, result.ReplicationPrimary},
		{map[string]string{string(result.LabelProvisioner): "driver.longhorn.io"}, result.ReplicationClient},
		{nil, result.ReplicationClient},
	}
	for _, tt := range tests {
		if got, why := ReplicationModelOf(result.Result{Labels: tt.labels}); got != tt.want || why == "" {
			t.Errorf("%v: %s (%s), want %s", tt.labels, got, why, tt.want)
		}
	}
}

func TestReplicationPart(t *testing.T) {
	const link = 100e6
	tests := []struct {
		model  string
		remote []string
		copies int
		want   float64 // 0: no part
	}{
		{result.ReplicationClient, []string{"b", "c"}, 2, link / 2},
		{result.ReplicationPrimary, []string{"b", "c"}, 2, link},      // 2 hosts forward 2 copies of half the writes each
		{result.ReplicationPrimary, []string{"a", "b", "c"}, 3, link}, // 2/3 of a payload per primary: the link binds first
		{result.ReplicationPrimary, []string{"b"}, 1, link / 2},       // one host leads everything and forwards 2 copies
		{result.ReplicationServer, []string{"nas"}, 1, 0},
	}
	for _, tt := range tests {
		b := Breakdown{Direction: "write", Replicas: 3, Remote: tt.remote, ReplicationModel: tt.model}
		p, ok := replicationPart(b, link, tt.copies, "test")
		if got := map[bool]float64{true: p.CeilingBPS}[ok]; got != tt.want {
			t.Errorf("%s over %v: %.0f (%s), want %.0f", tt.model, tt.remote, got, p.Source, tt.want)
		}
	}
}

func TestOSDFailure(t *testing.T) {
	log := func(rates ...float64) []RatePoint {
		var out []RatePoint
		for i, r := range rates {
			out = append(out, RatePoint{At: time.Duration(i+1) * 500 * time.Millisecond, BytesPerSec: r})
		}
		return out
	}
	frozen := OSDFailure{Fault: "frozen", OSD: 1, Host: "n2", FaultAt: 2 * time.Second, MarkedDown: 2 * time.Second, RestoredAt: 4 * time.Second,
		CleanAfter: 3 * time.Second, Log: log(60e6, 60e6, 60e6, 60e6, 0, 0, 0, 0, 40e6, 40e6), Verified: true}
	if s := frozen.Stall(); s != 2*time.Second {
		t.Errorf("stall %s, want 2s", s)
	}
	if b, d := frozen.Throughput(); b != 60e6 || d != 0 {
		t.Errorf("throughput %.0f before, %.0f degraded", b, d)
	}
	c := frozen.Check()
	if c.Status != result.CheckOK || !strings.Contains(c.Detail, "osd.1 on n2 frozen 2s into the write: marked down 2s later; the writer stalled 2s") {
		t.Errorf("check %+v", c)
	}
	// fio leaves periods without I/O out of its log: the gap is the stall too
	sparse := frozen
	sparse.Log = append(log(60e6, 60e6, 60e6, 60e6), RatePoint{At: 4500 * time.Millisecond, BytesPerSec: 40e6})
	if s := sparse.Stall(); s != 2*time.Second {
		t.Errorf("stall over a gap in the log: %s, want 2s", s)
	}
	bad := frozen
	bad.Verified, bad.VerifyError = false, "verify: bad header"
	if c := bad.Check(); c.Status != result.CheckFail || c.Fix == "" {
		t.Errorf("unverified data: %+v", c)
	}
}

// TestBreakdownTraffic: a Ceph class's write whose telemetry sampled the
// fio node and the replica nodes gets the per-link plan (the figures of
// the 200 Mbit/s recording, the client on a node without an OSD).
func TestBreakdownTraffic(t *testing.T) {
	measured := linkCounters(t, "links-seqwrite-200mbit.txt")
	node := func(name string) *result.Telemetry {
		return &result.Telemetry{Host: name, LinkBytesPerSec: 25e6,
			Totals: result.TelemetryTotals{NetTxBytes: int64(measured[name]["tx"]), NetRxBytes: int64(measured[name]["rx"])}}
	}
	tm := node("client")
	tm.Nodes = []*result.Telemetry{node("sbceph-node-1"), node("sbceph-node-2"), node("sbceph-node-3")}
	r := result.Result{Target: "k8s:ceph-rbd", Workload: "seq-write", Status: result.StatusComplete, Telemetry: tm,
		Write: &result.Direction{BytesPerSec: 19195212, Bytes: 536870912},
		Labels: map[string]string{string(result.LabelNode): "client", string(result.LabelReplicas): "3",
			string(result.LabelReplicaNodes): "sbceph-node-1,sbceph-node-2,sbceph-node-3", string(result.LabelCSIDriver): "rook-ceph.rbd.csi.ceph.com"}}
	bs := Breakdowns([]result.Result{r}, nil)
	if len(bs) != 1 || bs[0].Traffic == nil {
		t.Fatalf("breakdowns %+v", bs)
	}
	p := bs[0].Traffic
	if p.Model != result.ReplicationPrimary || len(p.Links) != 7 || p.CeilingBPS != 25e6 {
		t.Fatalf("plan %+v", p)
	}
	for _, l := range p.Links {
		// even primary shares (no PG data in a result): within 25% of the uneven real split
		if d := math.Abs(l.PredictedBytes-l.MeasuredBytes) / l.MeasuredBytes; d > 0.25 {
			t.Errorf("%s %s: predicted %.0f, measured %.0f", l.Node, l.Direction, l.PredictedBytes, l.MeasuredBytes)
		}
	}
	if !strings.Contains(bs[0].Summary, "replication model primary") {
		t.Errorf("summary %q", bs[0].Summary)
	}
	t.Log(p.Summary)
}

// TestBreakdownTrafficMeasuredCapacity: where the interfaces claim their
// nominal speed (a veth's 10 Gbit/s) but the links are shaped, the plan's
// capacities come from the network round's measured links, and say so;
// without the round, from the nominal speed, and say that.
func TestBreakdownTrafficMeasuredCapacity(t *testing.T) {
	measured := linkCounters(t, "links-seqwrite-200mbit.txt")
	nodes := []string{"client", "sbceph-node-1", "sbceph-node-2", "sbceph-node-3"}
	node := func(name string) *result.Telemetry {
		return &result.Telemetry{Host: name, LinkBytesPerSec: 1.25e9,
			Totals: result.TelemetryTotals{NetTxBytes: int64(measured[name]["tx"]), NetRxBytes: int64(measured[name]["rx"])}}
	}
	tm := node("client")
	tm.Nodes = []*result.Telemetry{node(nodes[1]), node(nodes[2]), node(nodes[3])}
	r := result.Result{Target: "k8s:ceph-rbd", Workload: "seq-write", Status: result.StatusComplete, Telemetry: tm,
		Write: &result.Direction{BytesPerSec: 19195212, Bytes: 536870912},
		Labels: map[string]string{string(result.LabelNode): "client", string(result.LabelReplicas): "3",
			string(result.LabelReplicaNodes): "sbceph-node-1,sbceph-node-2,sbceph-node-3", string(result.LabelCSIDriver): "rook-ceph.rbd.csi.ceph.com"}}
	m := LinkMatrix{Network: "host", Nodes: nodes, Cells: make([][]*Link, len(nodes))}
	for i, from := range nodes {
		m.Cells[i] = make([]*Link, len(nodes))
		for j, to := range nodes {
			if i != j {
				// the client's own link is the slowest: 20 MB/s out, 24.5 in
				bps := 24.5e6
				if from == "client" {
					bps = 20e6
				}
				m.Cells[i][j] = &Link{From: from, To: to, SendBytesPerSec: bps - float64(j)*1e3}
			}
		}
	}
	// A replica node whose link is slow (shaped to 100 Mbit/s): the round
	// measures it, the plan binds there, and its counters show it full.
	slow := LinkMatrix{Network: "host", Nodes: nodes, Cells: make([][]*Link, len(nodes))}
	for i := range nodes {
		slow.Cells[i] = slices.Clone(m.Cells[i])
		for j := range nodes {
			if l := m.Cells[i][j]; l != nil && (nodes[i] == "sbceph-node-3" || nodes[j] == "sbceph-node-3") {
				slow.Cells[i][j] = &Link{From: l.From, To: l.To, SendBytesPerSec: 12.5e6}
			}
		}
	}
	slowWrite := r
	slowWrite.Write = &result.Direction{BytesPerSec: 12.2e6, Bytes: 536870912}
	tests := []struct {
		name        string
		r           result.Result
		links       []LinkMatrix
		wantCeiling float64
		wantSource  string
		wantFull    string // the fullest link measured, "node dir"
	}{
		{"measured", r, []LinkMatrix{m}, 20e6 - 1e3, "the network round, client -> sbceph-node-1 at 20.0 MB/s", "client tx"},
		{"nominal", r, nil, 1.25e9, "the interface's nominal speed", ""},
		{"slow replica link", slowWrite, []LinkMatrix{slow}, 12.5e6, "the network round, client -> sbceph-node-3 at 12.5 MB/s", "sbceph-node-3 rx"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs := Breakdowns([]result.Result{tt.r}, tt.links)
			if len(bs) != 1 || bs[0].Traffic == nil || bs[0].Traffic.Binding == nil {
				t.Fatalf("breakdowns %+v", bs)
			}
			p := bs[0].Traffic
			if math.Abs(p.CeilingBPS-tt.wantCeiling) > 1 || p.Binding.CapacitySource != tt.wantSource ||
				!strings.Contains(p.Summary, "capacity from "+tt.wantSource) {
				t.Errorf("ceiling %.0f from %q, want %.0f from %q\n%s", p.CeilingBPS, p.Binding.CapacitySource, tt.wantCeiling, tt.wantSource, p.Summary)
			}
			full := ""
			if len(p.Saturated) > 0 {
				full = p.Saturated[0].Node + " " + p.Saturated[0].Direction
			}
			if full != tt.wantFull || (full != "" && !strings.Contains(p.Summary, "measured full: "+full)) {
				t.Errorf("fullest link measured %q, want %q\n%s", full, tt.wantFull, p.Summary)
			}
		})
	}
}

// TestCompareOSDsCPU: the waits for each OSD's banner and the round trips
// measured on a standalone Ceph (ceph.sh: three OSD nodes, fio's rbd
// engine writing 4 MiB blocks at depth 16 for 10 s, each OSD's public
// address probed every 250 ms, then every 125-375 ms), with commit
// latencies from the same runs.
func TestCompareOSDsCPU(t *testing.T) {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	osds := func(greeting, rtt [3]float64, commit [3]float64) []OSDFacts {
		var fs []OSDFacts
		for id := range 3 {
			fs = append(fs, OSDFacts{ID: id, Host: "sbceph-node-" + strconv.Itoa(id+1), Device: "vda",
				Greeting: ms(greeting[id]), RTT: ms(rtt[id]), Commit: []time.Duration{ms(commit[id])}})
		}
		return fs
	}
	tests := []struct {
		name      string
		osds      []OSDFacts
		wantCause string // "": no verdict
		wantWords []string
	}{
		{"osd.2 capped at 10% of a core", osds([3]float64{0.14, 0.04, 50.91}, [3]float64{0.14, 0.11, 0.03}, [3]float64{9.4, 10.9, 350.2}),
			OSDCauseCPU, []string{"osd.2 on sbceph-node-3 (vda): it greeted a new connection after 50.9 ms against 0.0-0.1 ms",
				"round trip was in line (0.0 ms against 0.1-0.1 ms)", "waits for CPU", "its disk's figures follow from that (commit latency 350 ms"}},
		{"osd.2's disk throttled to 20 MB/s", osds([3]float64{0.14, 0.01, 0.01}, [3]float64{0.15, 0.12, 0.13}, [3]float64{10.5, 11.1, 1142.7}),
			OSDCauseDisk, []string{"commit latency 1142 ms"}},
		{"osd.2 capped at 10% of a core, probed at random phases", osds([3]float64{0.12, 0.14, 51.28}, [3]float64{0.22, 0.25, 0.21}, [3]float64{7, 5, 194}),
			OSDCauseCPU, []string{"after 51.3 ms against 0.1-0.1 ms"}},
		{"osd.2 capped at 10% of a core, upper quartiles, commit from the counters", func() []OSDFacts {
			fs := osds([3]float64{0.41, 0.23, 63.40}, [3]float64{0.36, 0.39, 0.30}, [3]float64{43, 43, 167})
			for i, m := range []float64{44.6, 41.8, 410.8} {
				fs[i].CommitMean = ms(m)
			}
			return fs
		}(), OSDCauseCPU, []string{"after 63.4 ms against 0.2-0.4 ms", "its disk's figures follow from that (commit latency 410 ms against 41-44 ms"}},
		{"osd.2 late on a busy host (CI, recorded: the third OSD down), its commits in line", func() []OSDFacts {
			fs := osds([3]float64{4.47, 0, 29.55}, [3]float64{0.269, 0, 0.272}, [3]float64{36, 0, 79})
			fs[0].CommitMean, fs[2].CommitMean = ms(132.6), ms(125.5)
			return []OSDFacts{fs[0], fs[2]}
		}(), "", nil},
		{"osd.2 late on a busy host, the others quieter, its commits in line", func() []OSDFacts {
			fs := osds([3]float64{0.5, 0.6, 29.55}, [3]float64{0.27, 0.27, 0.27}, [3]float64{36, 79, 79})
			for i, m := range []float64{132.6, 131.0, 125.5} {
				fs[i].CommitMean = ms(m)
			}
			return fs
		}(), "", nil},
		{"osd.2 late, its commits three times the others' (under the disk's five)", osds([3]float64{0.5, 0.6, 29.55}, [3]float64{0.27, 0.27, 0.27}, [3]float64{40, 42, 130}),
			OSDCauseCPU, []string{"after 29.6 ms", "its commit latency follows from that (130 ms against 40-42 ms)"}},
		{"osd.2 capped, a read workload: no commits, its greetings alone", func() []OSDFacts {
			fs := osds([3]float64{0.41, 0.23, 63.40}, [3]float64{0.36, 0.39, 0.30}, [3]float64{})
			for i := range fs {
				fs[i].Commit = nil
			}
			return fs
		}(), OSDCauseCPU, []string{"after 63.4 ms against 0.2-0.4 ms"}},
		{"nothing wrong, upper quartiles", osds([3]float64{8.95, 3.04, 1.27}, [3]float64{0.29, 0.27, 0.25}, [3]float64{127, 52, 62}), "", nil},
		{"osd.2 restarted a minute before, nothing wrong", osds([3]float64{1.66, 3.73, 9.82}, [3]float64{0.20, 0.18, 0.17}, [3]float64{11, 6, 13}), "", nil},
		{"osd.2 restarted, the others quiet: under the floor", osds([3]float64{0.12, 0.15, 9.82}, [3]float64{0.20, 0.18, 0.17}, [3]float64{11, 6, 13}), "", nil},
		{"a host saturated by the workload, nothing wrong", osds([3]float64{6.82, 6.61, 8.27}, [3]float64{0.14, 0.08, 0.07}, [3]float64{30, 33, 29}), "", nil},
		{"osd.2's link full: its banner waits behind the data too", osds([3]float64{0.2, 0.3, 11.0}, [3]float64{0.1, 0.3, 11.0}, [3]float64{9, 10, 11}),
			OSDCauseLink, []string{"its link is full"}},
		{"osd.2 frozen: no banner within the probe's 2 s", osds([3]float64{0.1, 0.1, 2000}, [3]float64{0.1, 0.1, 0.1}, [3]float64{9, 10, 11}),
			OSDCauseCPU, []string{"after 2000.0 ms"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := CompareOSDs("seq-write", tt.osds)
			if tt.wantCause == "" {
				if len(v) != 0 {
					t.Fatalf("verdicts %+v, want none", v)
				}
				return
			}
			if len(v) != 1 || v[0].OSD != 2 || v[0].Cause != tt.wantCause {
				t.Fatalf("verdicts %+v, want one: osd.2, %s", v, tt.wantCause)
			}
			for _, w := range tt.wantWords {
				if !strings.Contains(v[0].Summary, w) {
					t.Errorf("summary %q lacks %q", v[0].Summary, w)
				}
			}
			t.Log(v[0].Summary)
		})
	}
}

// TestCompareOSDsCountedCommits: Ceph's sampled commit latencies lag (a
// degraded pool, osd.2 down, recorded: osd.0's first four samples still
// 11 ms while osd.1's were 80 ms) and name a disk that is fine; the OSDs'
// own counters over the workload (a run of the same test: 115 and 133 ms)
// name none. A slow disk is named by its counters too, and an OSD without
// a counted mean leaves the comparison on the samples.
func TestCompareOSDsCountedCommits(t *testing.T) {
	ms := func(xs ...float64) []time.Duration {
		var out []time.Duration
		for _, x := range xs {
			out = append(out, time.Duration(x*float64(time.Millisecond)))
		}
		return out
	}
	lagging := []OSDFacts{
		{ID: 0, Host: "sbceph-node-1", Device: "vda", Commit: ms(11, 11, 11, 11, 74, 74, 74)},
		{ID: 1, Host: "sbceph-node-2", Device: "vda", Commit: ms(80, 80, 80)},
	}
	if v := CompareOSDs("seq-write", lagging); len(v) != 1 || v[0].OSD != 1 {
		t.Fatalf("samples alone: verdicts %+v, want osd.1's (the lag this test is about)", v)
	}
	counted := slices.Clone(lagging)
	counted[0].CommitMean, counted[1].CommitMean = ms(114.8)[0], ms(132.6)[0]
	if v := CompareOSDs("seq-write", counted); len(v) != 0 {
		t.Errorf("counted: verdicts %+v, want none", v)
	}
	slow := []OSDFacts{
		{ID: 0, Host: "sbceph-node-1", Device: "vda", BenchBytesPerSec: 270e6, Commit: ms(36, 50), CommitMean: ms(47.2)[0]},
		{ID: 1, Host: "sbceph-node-2", Device: "vda", BenchBytesPerSec: 256e6, Commit: ms(47, 46), CommitMean: ms(43.9)[0]},
		{ID: 2, Host: "sbceph-node-3", Device: "vda", BenchBytesPerSec: 24e6, Commit: ms(447, 860), CommitMean: ms(829.2)[0]},
	}
	if v := CompareOSDs("seq-write", slow); len(v) != 1 || v[0].OSD != 2 || v[0].Cause != OSDCauseDisk ||
		!strings.Contains(v[0].Summary, "commit latency 829 ms against 43-47 ms") {
		t.Errorf("slow disk by its counters: verdicts %+v", v)
	}
	mixed := slices.Clone(counted)
	mixed[0].CommitMean = 0
	if v := CompareOSDs("seq-write", mixed); len(v) != 1 || v[0].OSD != 1 {
		t.Errorf("one OSD without counters: verdicts %+v, want the samples' (osd.1)", v)
	}
}
