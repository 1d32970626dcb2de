// Package rbd measures storbench's RBD target against bare fio's rbd
// engine on the same Ceph: the same job options, alternating rounds, every
// node's link shaped so that both are bound by the same links rather than
// by whatever else the machine runs at that moment.
//
//	go test -count=1 -run '^$' -bench RBDAgainstBareFio -benchtime 1x ./bench/rbd/
package rbd

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/cephtest"
)

const (
	rounds = 3
	rate   = "400mbit"
	suite  = `name: fidelity
workloads:
  - {name: seq-write, rw: write, bs: 4MiB, iodepth: 8, size: 256MiB, runtime: 10s, time_based: true, direct: true}
  - {name: seq-read, rw: read, bs: 4MiB, iodepth: 8, size: 256MiB, runtime: 10s, time_based: true, direct: true}
`
)

// bare is each workload's fio options, as storbench writes them (fio.Job:
// randrepeat=0, refill_buffers, direct I/O, the rbd engine's target).
var bare = map[string][]string{
	"seq-write": {"--rw=write", "--bs=4M", "--iodepth=8", "--size=256M", "--runtime=10", "--time_based", "--direct=1"},
	"seq-read":  {"--rw=read", "--bs=4M", "--iodepth=8", "--size=256M", "--runtime=10", "--time_based", "--direct=1"},
}

func BenchmarkRBDAgainstBareFio(b *testing.B) {
	testenv.Root(b)
	testenv.Tool(b, "fio", "fio", "fio")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c := cephtest.Start(b, cephtest.Options{})
	c.Script(b, "wait-clean", "120")
	for _, n := range c.Nodes {
		c.Script(b, "link", "shape", n.Name, rate)
	}
	if out, err := c.Command(ctx, cephtest.Node{}, "rbd", "create", c.Pool+"/bare", "--size", "512M").CombinedOutput(); err != nil {
		b.Fatalf("rbd create: %v: %s", err, out)
	}
	fioRBD(ctx, b, c, "--rw=write", "--bs=4M", "--iodepth=8", "--size=512M", "--direct=1") // filled once, as storbench fills its own
	runner := storbenchtest.New(ctx, b, "fidelity.yaml", suite, "rbd:"+c.Pool+"?conf="+c.Conf)
	// workload -> storbench with telemetry, without, bare fio (bytes/s per round)
	got := map[string][3][]float64{}
	for range rounds {
		for i, telemetry := range []bool{true, false} {
			d := runner.RunWith(ctx, b, func(r *storbench.RunRequest) { r.Telemetry = telemetry })
			for _, r := range d.Results {
				bw, _ := r.Metric(result.MetricBW)
				if r.Status != result.StatusComplete || bw <= 0 {
					b.Fatalf("%s: %s %s", r.Workload, r.Status, r.Error)
				}
				g := got[r.Workload]
				g[i] = append(g[i], bw)
				got[r.Workload] = g
			}
		}
		for _, w := range []string{"seq-write", "seq-read"} {
			g := got[w]
			g[2] = append(g[2], fioRBD(ctx, b, c, bare[w]...))
			got[w] = g
		}
	}
	var out strings.Builder
	for _, w := range []string{"seq-write", "seq-read"} {
		g := got[w]
		with, without := median(g[0])/median(g[2]), median(g[1])/median(g[2])
		fmt.Fprintf(&out, "%s: storbench %s MB/s (telemetry off %s), bare fio %s MB/s; median ratio %.3f (telemetry off %.3f)\n",
			w, mbs(g[0]), mbs(g[1]), mbs(g[2]), with, without)
		b.ReportMetric(with, w+"-ratio")
		b.ReportMetric(without, w+"-ratio-no-telemetry")
	}
	b.Log("\n" + out.String())
}

// fioRBD runs bare fio's rbd engine on the image "bare" from this host
// and returns the bytes per second of its busier direction.
func fioRBD(ctx context.Context, b *testing.B, c *cephtest.Cluster, opts ...string) float64 {
	args := append([]string{"--name=bare", "--ioengine=rbd", "--clientname=admin", "--pool=" + c.Pool, "--rbdname=bare",
		"--randrepeat=0", "--refill_buffers", "--output-format=json"}, opts...)
	out, err := c.Command(ctx, cephtest.Node{}, "fio", args...).Output()
	if err != nil {
		b.Fatalf("fio %s: %v", strings.Join(args, " "), err)
	}
	var r struct {
		Jobs []struct {
			Read, Write struct {
				BW float64 `json:"bw_bytes"`
			}
		} `json:"jobs"`
	}
	if err := json.Unmarshal(out, &r); err != nil || len(r.Jobs) != 1 {
		b.Fatalf("fio's JSON: %v", err)
	}
	return max(r.Jobs[0].Read.BW, r.Jobs[0].Write.BW)
}

func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)/2]
}

func mbs(v []float64) string {
	var w []string
	for _, x := range v {
		w = append(w, fmt.Sprintf("%.1f", x/1e6))
	}
	return strings.Join(w, "/")
}
