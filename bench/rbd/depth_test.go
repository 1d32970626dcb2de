package rbd

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/test/cephtest"
)

// BenchmarkLinksAtDepth measures a primary-copy write at several depths on
// links shaped to 200 Mbit/s and sets each beside the breakdown's figure
// for the links at that depth (analysis.PlanTraffic with InFlight): fio's
// rbd engine from the client namespace, 4 MiB writes over objects already
// written (the image is filled first), depthSize per depth; each primary's
// share is what its link sent over the payload, halved (it sends two
// copies of what it leads).
//
//	go test -count=1 -run '^$' -bench LinksAtDepth -benchtime 1x ./bench/rbd/
func BenchmarkLinksAtDepth(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Minute)
	defer cancel()
	c := shapedCeph(ctx, b, "200mbit", true, "depth", "1G")
	nodes := append(append([]cephtest.Node{}, c.Nodes...), c.Client)
	caps := map[string]float64{}
	for _, n := range nodes {
		caps[n.Name] = 200e6 / 8
	}
	depthWrite(ctx, b, c, nodes, 8, 1<<30) // the fill: the objects exist from here on
	var out strings.Builder
	for _, qd := range []int{1, 2, 4, 8, 16, 32} {
		size := depthSize(qd)
		bps, links := depthWrite(ctx, b, c, nodes, qd, size)
		share := map[string]float64{}
		var hosts []string
		for _, n := range c.Nodes {
			hosts = append(hosts, n.Name)
			share[n.Name] = links[n.Name]["tx"] / links[c.Client.Name]["tx"] / 2
		}
		in := analysis.TrafficInput{Model: result.ReplicationPrimary, Client: c.Client.Name, Replicas: 3, Hosts: hosts,
			PrimaryShare: share, LinkBytesPerSec: caps, InFlight: qd}
		p := analysis.PlanTraffic(in, "bench", float64(size), links)
		fmt.Fprintf(&out, "iodepth %2d, %4d MiB: measured %5.2f MB/s, predicted at depth %5.2f MB/s (%3.0f%%), ceiling %.1f MB/s (%3.0f%%); primaries sent %s\n",
			qd, size>>20, bps/1e6, p.AtDepthBPS/1e6, bps/p.AtDepthBPS*100, p.CeilingBPS/1e6, bps/p.CeilingBPS*100, shares(hosts, share))
		b.ReportMetric(bps/p.AtDepthBPS, fmt.Sprintf("qd%d-measured/predicted", qd))
	}
	b.Log("\n" + out.String())
}

// depthSize is what one depth writes: 96 MiB, or 8 rounds of its depth's
// 4 MiB writes where that is more. A write of few rounds is mostly its
// start and its end: a primary forwards a write only once the whole of it
// has arrived, so with every write issued at once the copies wait for the
// client's link to finish, and the links take turns instead of sharing.
func depthSize(qd int) int64 { return max(96<<20, int64(qd)*8*4<<20) }

// depthWrite writes the image's first 96 MiB at iodepth qd and returns
// the throughput and each node's link bytes (node -> tx/rx) meanwhile.
func depthWrite(ctx context.Context, b *testing.B, c *cephtest.Cluster, nodes []cephtest.Node, qd int, size int64) (float64, map[string]map[string]float64) {
	before := map[string][2]uint64{}
	for _, n := range nodes {
		tx, rx, err := c.LinkBytes(n)
		if err != nil {
			b.Fatal(err)
		}
		before[n.Name] = [2]uint64{tx, rx}
	}
	args := []string{"--name=depth", "--ioengine=rbd", "--clientname=admin", "--pool=" + c.Pool, "--rbdname=depth", "--rw=write", "--bs=4M",
		fmt.Sprintf("--iodepth=%d", qd), fmt.Sprintf("--size=%d", size), "--direct=1", "--randrepeat=0", "--refill_buffers", "--output-format=json"}
	raw, err := c.Command(ctx, c.Client, "fio", args...).Output()
	if err != nil {
		b.Fatalf("fio %s: %v", strings.Join(args, " "), err)
	}
	var r struct {
		Jobs []struct {
			Write struct {
				BW float64 `json:"bw_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	if err := json.Unmarshal(raw, &r); err != nil || len(r.Jobs) != 1 {
		b.Fatalf("fio's JSON: %v", err)
	}
	links := map[string]map[string]float64{}
	for _, n := range nodes {
		tx, rx, err := c.LinkBytes(n)
		if err != nil {
			b.Fatal(err)
		}
		links[n.Name] = map[string]float64{"tx": float64(tx - before[n.Name][0]), "rx": float64(rx - before[n.Name][1])}
	}
	return r.Jobs[0].Write.BW, links
}

// shares says what each primary sent over the payload: "0.42, 0.84, 0.75".
func shares(hosts []string, share map[string]float64) string {
	var s []string
	for _, h := range hosts {
		s = append(s, fmt.Sprintf("%.2f", 2*share[h]))
	}
	return strings.Join(s, ", ")
}
