package cephtest

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// checkVerdicts injects real faults into a real Ceph and checks what
// storbench concludes from live measurements: osd.2's disk throttled by a
// blkio cgroup is named as a disk; its node's link shaped by tbf is named
// as a link; with every link shaped, the primary-copy model predicts the
// bytes on every link of a sequential write.
func checkVerdicts(t *testing.T, c *Cluster) {
	fio := testenv.Fio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	cl := ceph.Client{Cmder: execx.Local{}, Conf: c.Conf}
	osds, err := cl.OSDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(osds) != len(c.Nodes) {
		t.Fatalf("%d OSDs for %d nodes", len(osds), len(c.Nodes))
	}
	for i, o := range osds {
		if o.Host != c.Nodes[i].Name || !o.Up || len(o.Devices) == 0 || o.Addr != c.Nodes[i].IP {
			t.Errorf("osd.%d: %+v, want on %+v", o.ID, o, c.Nodes[i])
		}
	}
	bench := map[int]float64{}
	for _, o := range osds {
		b, err := cl.Bench(ctx, ceph.BenchRequest{OSD: o.ID})
		if err != nil {
			t.Fatal(err)
		}
		bench[o.ID] = b.BytesPerSec
	}
	if _, err := c.Ceph(ctx, "osd", "pool", "set", c.Pool, "size", "3"); err != nil {
		t.Fatal(err)
	}
	mustRBD(ctx, t, c, "create", c.Pool+"/verdicts", "--size", "1G")
	slow := osds[2]
	node3 := c.Nodes[2]

	t.Run("slow disk", func(t *testing.T) {
		c.Script(t, "osd", "slow", strconv.Itoa(slow.ID), strconv.Itoa(20<<20))
		defer c.Script(t, "osd", "unslow", strconv.Itoa(slow.ID))
		b, err := cl.Bench(ctx, ceph.BenchRequest{OSD: slow.ID})
		if err != nil {
			t.Fatal(err)
		}
		w := write(ctx, t, c, cl, fio, "verdicts", "--runtime=10", "--time_based")
		facts := osdFacts(osds, map[int]float64{0: bench[0], 1: bench[1], 2: b.BytesPerSec}, w, nil, c)
		v := analysis.CompareOSDs("seq-write", facts)
		t.Logf("write %.1f MB/s; verdicts %+v", w.bps/1e6, v)
		if len(v) != 1 || v[0].OSD != slow.ID || v[0].Cause != analysis.OSDCauseDisk || !strings.Contains(v[0].Summary, node3.Name) {
			t.Errorf("verdicts %+v: want osd.%d's disk on %s", v, slow.ID, node3.Name)
		}
	})

	t.Run("slow link", func(t *testing.T) {
		if os.Getenv(EnvLinkVerdict) != "1" {
			// On a loaded host the write may not fill the shaped link to the
			// verdict's 70% and an OSD bench run beside other tests varies
			// four-fold (seen in a CI-like run: 8.7 MB/s on a 12.5 MB/s link):
			// a timing-sensitive check stays out of the default suite.
			t.Skipf("on demand: %s=1 (the slow link's verdict needs a quiet host)", EnvLinkVerdict)
		}
		c.Script(t, "link", "shape", node3.Name, "100mbit")
		defer c.Script(t, "link", "unshape", node3.Name)
		w := write(ctx, t, c, cl, fio, "verdicts", "--runtime=12", "--time_based")
		facts := osdFacts(osds, bench, w, map[string]float64{node3.Name: 100e6 / 8}, c)
		v := analysis.CompareOSDs("seq-write", facts)
		t.Logf("write %.1f MB/s; verdicts %+v", w.bps/1e6, v)
		if len(v) != 1 || v[0].OSD != slow.ID || v[0].Cause != analysis.OSDCauseLink {
			t.Errorf("verdicts %+v: want osd.%d's link", v, slow.ID)
		}
	})

	t.Run("primary-copy traffic at 200 Mbit/s", func(t *testing.T) { checkPrimaryTraffic(ctx, t, c, cl, fio) })
}

// checkPrimaryTraffic shapes every link to 200 Mbit/s and writes the pool
// sequentially: the primary-copy model's bytes on every link against the
// links' counters, and the links at the write's depth against a write
// over the same objects.
func checkPrimaryTraffic(ctx context.Context, t *testing.T, c *Cluster, cl ceph.Client, fio string) {
	nodes := append(append([]Node{}, c.Nodes...), c.Client)
	caps := map[string]float64{}
	for _, n := range nodes {
		c.Script(t, "link", "shape", n.Name, "200mbit")
		caps[n.Name] = 200e6 / 8
	}
	defer func() {
		for _, n := range nodes {
			c.Script(t, "link", "unshape", n.Name)
		}
	}()
	mustRBD(ctx, t, c, "create", c.Pool+"/traffic", "--size", "1G")
	// The OSDs report PG statistics every few seconds, and the slow
	// disk's write before this one may still be arriving (seen: 247 MB
	// grown for 201 MB written, every extra byte in the wrong PGs): the
	// listings are taken once the pool's bytes have stopped changing.
	before := settledPGs(ctx, t, cl, c.Pool, 0)
	w := write(ctx, t, c, cl, fio, "traffic", "--size=192M")
	var grownBefore int64
	for _, pg := range before {
		grownBefore += pg.Bytes
	}
	after := settledPGs(ctx, t, cl, c.Pool, grownBefore+int64(0.99*w.bytes))
	var grown int64
	for _, pg := range pgDelta(before, after) {
		grown += pg.Bytes
	}
	t.Logf("PGs grew by %d bytes for %.0f written", grown, w.bytes)
	if float64(grown) < 0.99*w.bytes || float64(grown) > 1.05*w.bytes {
		t.Fatalf("PGs grew by %d bytes for %.0f written: the PG statistics do not account for this write alone", grown, w.bytes)
	}
	share := map[string]float64{}
	for osd, s := range ceph.PrimaryByteShare(pgDelta(before, after)) {
		share[c.Nodes[osd].Name] = s
	}
	model, why := analysis.ReplicationModelOf(result.Result{Labels: map[string]string{string(result.LabelTargetKind): "rbd"}})
	var hosts []string
	for _, n := range c.Nodes {
		hosts = append(hosts, n.Name)
	}
	p := analysis.PlanTraffic(analysis.TrafficInput{Model: model, Client: "client", Replicas: 3, Hosts: hosts, PrimaryShare: share,
		LinkBytesPerSec: caps, InFlight: 8}, why, w.bytes, w.links) // write's iodepth
	t.Log(p.Summary)
	for _, l := range p.Links {
		// Within 10% of what the link carried; a link carrying under
		// half the payload (a primary of few PGs) within 5% of the
		// payload, where Ceph's own heartbeats and reports are a larger
		// part. With settled PG statistics every link was within 2% on
		// a quiet host.
		d := math.Abs(l.PredictedBytes-l.MeasuredBytes) / l.MeasuredBytes
		bad := d > 0.10
		if l.MeasuredBytes < w.bytes/2 {
			d = math.Abs(l.PredictedBytes-l.MeasuredBytes) / w.bytes
			bad = d > 0.05
		}
		if bad {
			t.Errorf("%s %s: predicted %.1f MiB, measured %.1f MiB (%.0f%% off)", l.Node, l.Direction, l.PredictedBytes/(1<<20), l.MeasuredBytes/(1<<20), d*100)
		}
	}
	// The links' figure at the write's depth (the queueing model)
	// against a write over the same objects: the first write also
	// created them (BlueStore's allocation and metadata, no link's
	// work: 15.2 MB/s against 18.1-18.4 over written objects), and
	// storbench fills its own images before it measures for the same
	// reason. Alone on the host this write was at 92%, 101% and 96% of
	// the figure (BenchmarkLinksAtDepth in bench/rbd: 89-105% from 1 to
	// 32 in flight); in the suite another package's test shares the two
	// cores, so the band is 15% here, the 10% being the bench's,
	// and a write out of it is measured once more and the second judged.
	judge := func() (float64, bool) {
		w := write(ctx, t, c, cl, fio, "traffic", "--size=192M")
		r := w.bps / p.AtDepthBPS
		t.Logf("write %.1f MB/s against %.1f MB/s predicted at 8 in flight (%.0f%%); the ceiling %.1f MB/s (%.0f%%)",
			w.bps/1e6, p.AtDepthBPS/1e6, r*100, p.CeilingBPS/1e6, w.bps/p.CeilingBPS*100)
		return r, r >= 0.85 && r <= 1.15
	}
	if _, ok := judge(); !ok {
		if r, ok := judge(); !ok {
			t.Errorf("write at %.0f%% of the predicted %.1f MB/s twice: want within 15%%", r*100, p.AtDepthBPS/1e6)
		}
	}
}

// measuredWrite is one fio run: its throughput, payload, each node's link
// bytes and the OSDs' commit latencies sampled during it.
type measuredWrite struct {
	bps, bytes float64
	secs       float64
	links      map[string]map[string]float64
	commit     map[int][]time.Duration
}

func write(ctx context.Context, t *testing.T, c *Cluster, cl ceph.Client, fio, image string, extra ...string) measuredWrite {
	t.Helper()
	nodes := append(append([]Node{}, c.Nodes...), c.Client)
	before := map[string][2]uint64{}
	for _, n := range nodes {
		tx, rx, err := c.LinkBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		before[n.Name] = [2]uint64{tx, rx}
	}
	sctx, stop := context.WithCancel(ctx)
	samples := make(chan []ceph.PerfSample, 1)
	go func() { s, _ := cl.SamplePerf(sctx, 2*time.Second); samples <- s }()
	args := append([]string{"--name=seq-write", "--ioengine=rbd", "--clientname=admin", "--pool=" + c.Pool, "--rbdname=" + image,
		"--rw=write", "--bs=4M", "--iodepth=8", "--direct=1", "--randrepeat=0", "--refill_buffers", "--output-format=json"}, extra...)
	out, err := c.Command(ctx, c.Client, fio, args...).Output()
	stop()
	perf := <-samples
	if err != nil {
		t.Fatalf("fio: %v\n%s", err, out)
	}
	var j struct {
		Jobs []struct {
			Write struct {
				BwBytes   float64 `json:"bw_bytes"`
				IOBytes   float64 `json:"io_bytes"`
				RuntimeMs float64 `json:"runtime"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &j); err != nil || len(j.Jobs) != 1 {
		t.Fatalf("fio output: %v\n%s", err, out)
	}
	w := measuredWrite{bps: j.Jobs[0].Write.BwBytes, bytes: j.Jobs[0].Write.IOBytes, secs: j.Jobs[0].Write.RuntimeMs / 1000,
		links: map[string]map[string]float64{}, commit: map[int][]time.Duration{}}
	for _, n := range nodes {
		tx, rx, err := c.LinkBytes(n)
		if err != nil {
			t.Fatal(err)
		}
		w.links[n.Name] = map[string]float64{"tx": float64(tx - before[n.Name][0]), "rx": float64(rx - before[n.Name][1])}
	}
	for _, s := range perf {
		for _, l := range s.Latencies {
			w.commit[l.OSD] = append(w.commit[l.OSD], l.Commit)
		}
	}
	return w
}

func osdFacts(osds []ceph.OSD, bench map[int]float64, w measuredWrite, linkCap map[string]float64, c *Cluster) []analysis.OSDFacts {
	var fs []analysis.OSDFacts
	for _, o := range osds {
		f := analysis.OSDFacts{ID: o.ID, Host: o.Host, Device: strings.Join(o.Devices, ","), BenchBytesPerSec: bench[o.ID], Commit: w.commit[o.ID],
			LinkBytesPerSec: linkCap[o.Host]}
		if l := w.links[o.Host]; l != nil && w.secs > 0 {
			f.LinkUsedBytesPerSec = math.Max(l["tx"], l["rx"]) / w.secs
		}
		fs = append(fs, f)
	}
	return fs
}

// settledPGs lists the pool's PGs once their bytes add up to at least
// min and have not changed over three readings 2 s apart (the OSDs report
// about every 5 s); it gives up after a minute.
func settledPGs(ctx context.Context, t *testing.T, cl ceph.Client, pool string, min int64) []ceph.PG {
	t.Helper()
	var last int64 = -1
	same := 0
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
		pgs, err := cl.PGs(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64
		for _, pg := range pgs {
			sum += pg.Bytes
		}
		if sum == last && sum >= min {
			same++
		} else {
			same = 0
		}
		last = sum
		if same >= 2 {
			return pgs
		}
		if time.Now().After(deadline) {
			t.Fatalf("pool %s's PG bytes did not settle in a minute (last %d, want at least %d)", pool, sum, min)
		}
	}
}

// pgDelta is what each PG gained between two listings: where one write's data went.
func pgDelta(before, after []ceph.PG) []ceph.PG {
	was := map[string]int64{}
	for _, pg := range before {
		was[pg.ID] = pg.Bytes
	}
	out := make([]ceph.PG, 0, len(after))
	for _, pg := range after {
		pg.Bytes -= was[pg.ID]
		out = append(out, pg)
	}
	return out
}

func mustRBD(ctx context.Context, t *testing.T, c *Cluster, args ...string) {
	t.Helper()
	if out, err := c.Command(ctx, Node{}, "rbd", args...).CombinedOutput(); err != nil {
		t.Fatalf("rbd %s: %v\n%s", strings.Join(args, " "), err, out)
	}
}
