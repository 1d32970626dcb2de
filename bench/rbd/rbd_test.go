// Package rbd measures storbench's RBD target against bare fio's rbd
// engine on the same Ceph and the same image: storbench drives
// rbd:POOL/bare with --destructive naming it, bare fio drives "bare"
// itself, so both write and read the same objects on the same PGs and
// primary OSDs. Every node's link is shaped, so that both are bound by the
// same links rather than by whatever else the machine runs at that moment.
// Rounds alternate the order of the sides, and each storbench run is
// paired with the bare run next to it in the same round.
//
//	go test -count=1 -run '^$' -bench RBDAgainstBareFio -benchtime 1x ./bench/rbd/
package rbd

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
	"github.com/storbench/storbench/internal/testenv"
	"github.com/storbench/storbench/test/cephtest"
)

const (
	rounds = 6
	rate   = "400mbit"
	image  = "bare"
	suite  = `name: fidelity
workloads:
  - {name: seq-write, rw: write, bs: 4MiB, iodepth: 8, size: 256MiB, runtime: 10s, time_based: true, direct: true}
  - {name: seq-read, rw: read, bs: 4MiB, iodepth: 8, size: 256MiB, runtime: 10s, time_based: true, direct: true}
`
)

var workloads = []string{"seq-write", "seq-read"}

// bare is each workload's fio options as a user would type them for the
// same job; fio's defaults do the rest. The job storbench writes adds
// only reporting options (logged by jobDiff).
var bare = map[string][]string{
	"seq-write": {"--rw=write", "--bs=4M", "--iodepth=8", "--size=256M", "--runtime=10", "--time_based", "--direct=1"},
	"seq-read":  {"--rw=read", "--bs=4M", "--iodepth=8", "--size=256M", "--runtime=10", "--time_based", "--direct=1"},
}

// side is one way of running the suite: bytes per second per workload.
type side func() map[string]float64

func BenchmarkRBDAgainstBareFio(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Minute)
	defer cancel()
	c := shapedCeph(ctx, b, rate, false, image, "512M")
	fioRBD(ctx, b, c, "--rw=write", "--bs=4M", "--iodepth=8", "--size=512M", "--direct=1") // filled once, so reads reach the OSDs
	b.Log(jobDiff(b, c.Pool))

	target := "rbd:" + c.Pool + "/" + image
	runner := storbenchtest.New(ctx, b, "fidelity.yaml", suite, target+"?conf="+c.Conf)
	storbenchSide := func(telemetry bool) side {
		return func() map[string]float64 {
			d := runner.RunWith(ctx, b, func(r *storbench.RunRequest) {
				r.Telemetry, r.Destructive = telemetry, []string{target}
			})
			return storbenchBW(b, d)
		}
	}
	bareSide := func() map[string]float64 {
		bw := map[string]float64{}
		for _, w := range workloads {
			bw[w] = fioRBD(ctx, b, c, bare[w]...)
		}
		return bw
	}
	pairs := alternate(storbenchSide(true), bareSide, storbenchSide(false))
	b.Log(report(b, pairs))
}

// rounded holds, per workload, the paired figures of every round.
type rounded struct {
	on, bare, off map[string][]float64
}

// alternate runs rounds of storbench with telemetry on, bare fio and
// storbench with telemetry off, the two storbench sides swapped every
// round; bare fio sits in the middle, next to both.
func alternate(on, bareFio, off side) rounded {
	r := rounded{on: map[string][]float64{}, bare: map[string][]float64{}, off: map[string][]float64{}}
	add := func(dst map[string][]float64, bw map[string]float64) {
		for w, v := range bw {
			dst[w] = append(dst[w], v)
		}
	}
	for i := range rounds {
		first, last := on, off
		firstDst, lastDst := r.on, r.off
		if i%2 == 1 {
			first, last, firstDst, lastDst = off, on, r.off, r.on
		}
		add(firstDst, first())
		add(r.bare, bareFio())
		add(lastDst, last())
	}
	return r
}

func report(b *testing.B, r rounded) string {
	var out []string
	for _, w := range workloads {
		out = append(out, fmt.Sprintf("%s: storbench %s MB/s, telemetry off %s, bare fio %s", w, mbs(r.on[w]), mbs(r.off[w]), mbs(r.bare[w])))
		for _, s := range []struct {
			name string
			got  []float64
		}{{"telemetry on", r.on[w]}, {"telemetry off", r.off[w]}} {
			ratios := make([]float64, len(s.got))
			for i := range s.got {
				ratios[i] = s.got[i] / r.bare[w][i]
			}
			lo, hi := bootstrapMedian(ratios, 0.90)
			out = append(out, fmt.Sprintf("  %s: paired ratios %s; median %.3f, min-max %.3f-%.3f, bootstrap 90%% of the median %.3f-%.3f",
				s.name, fmts(ratios), median(ratios), slices.Min(ratios), slices.Max(ratios), lo, hi))
			b.ReportMetric(median(ratios), w+"-ratio-"+strings.ReplaceAll(s.name, " ", "-"))
		}
	}
	return strings.Join(out, "\n")
}

// storbenchBW reads each workload's bytes per second from a run, which
// must have driven the shared image.
func storbenchBW(b *testing.B, d *storbench.RunDetail) map[string]float64 {
	bw := map[string]float64{}
	for _, r := range d.Results {
		v, _ := r.Metric(result.MetricBW)
		if r.Status != result.StatusComplete || v <= 0 {
			b.Fatalf("%s: %s %s", r.Workload, r.Status, r.Error)
		}
		if got := result.LabelCephImage.Of(r.Labels); got != image {
			b.Fatalf("%s: storbench drove image %q, not %q", r.Workload, got, image)
		}
		bw[r.Workload] = v
	}
	return bw
}

// jobDiff names the options storbench's job has that the bare command
// lacks, and the other way round, once for all workloads if they agree
// (fio's spellings differ: sizes in bytes there, 4M here; flags as "=1").
func jobDiff(b *testing.B, pool string) string {
	s, err := spec.Parse([]byte(suite), "fidelity.yaml")
	if err != nil {
		b.Fatal(err)
	}
	f := fio.File{Size: 512 << 20, Engine: &fio.EngineTarget{IOEngine: "rbd",
		Options: []fio.Option{{Key: "clientname", Value: "admin"}, {Key: "pool", Value: pool}, {Key: "rbdname", Value: image}}}}
	var lines []string
	for _, w := range s.Workloads {
		sb := slices.DeleteFunc(fio.FromWorkload(w, f, "").Args(), named)
		bf := append([]string{"--ioengine=rbd", "--clientname=admin", "--pool=" + pool, "--rbdname=" + image,
			"--randrepeat=0", "--refill_buffers"}, bare[w.Name]...)
		line := fmt.Sprintf("storbench's job only: %s; bare only: %s", strings.Join(minus(sb, bf), " "), strings.Join(minus(bf, sb), " "))
		if !slices.Contains(lines, line) {
			lines = append(lines, line)
		}
	}
	return strings.Join(lines, "\n")
}

func named(arg string) bool { return strings.HasPrefix(arg, "--name=") }

func minus(a, b []string) []string {
	var out []string
	for _, x := range a {
		if !slices.Contains(b, x) {
			out = append(out, x)
		}
	}
	return out
}

// fioRBD runs bare fio's rbd engine on the shared image from this host
// and returns the bytes per second of its busier direction.
func fioRBD(ctx context.Context, b *testing.B, c *cephtest.Cluster, opts ...string) float64 {
	args := append([]string{"--name=bare", "--ioengine=rbd", "--clientname=admin", "--pool=" + c.Pool, "--rbdname=" + image,
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
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// bootstrapMedian is the percentile bootstrap interval (level, e.g. 0.90)
// of v's median, from a fixed seed so a rerun on the same figures agrees.
func bootstrapMedian(v []float64, level float64) (lo, hi float64) {
	const resamples = 4000
	rng := rand.New(rand.NewPCG(1, 2))
	meds := make([]float64, resamples)
	s := make([]float64, len(v))
	for i := range meds {
		for j := range s {
			s[j] = v[rng.IntN(len(v))]
		}
		meds[i] = median(s)
	}
	slices.Sort(meds)
	tail := (1 - level) / 2
	return meds[int(tail*resamples)], meds[int((1-tail)*resamples)-1]
}

func mbs(v []float64) string {
	var w []string
	for _, x := range v {
		w = append(w, fmt.Sprintf("%.1f", x/1e6))
	}
	return strings.Join(w, "/")
}

func fmts(v []float64) string {
	var w []string
	for _, x := range v {
		w = append(w, fmt.Sprintf("%.3f", x))
	}
	return strings.Join(w, "/")
}

// shapedCeph starts the standalone Ceph, waits for its PGs, shapes the
// links of its OSD nodes (and of the client, with withClient) to rate and
// creates the image of size in its pool.
func shapedCeph(ctx context.Context, b *testing.B, rate string, withClient bool, image, size string) *cephtest.Cluster {
	testenv.Root(b)
	testenv.Tool(b, "fio", "fio", "fio")
	c := cephtest.Start(b, cephtest.Options{})
	c.Script(b, "wait-clean", "120")
	nodes := c.Nodes
	if withClient {
		nodes = append(append([]cephtest.Node{}, c.Nodes...), c.Client)
	}
	for _, n := range nodes {
		c.Script(b, "link", "shape", n.Name, rate)
	}
	if out, err := c.Command(ctx, cephtest.Node{}, "rbd", "create", c.Pool+"/"+image, "--size", size).CombinedOutput(); err != nil {
		b.Fatalf("rbd create: %v: %s", err, out)
	}
	return c
}
