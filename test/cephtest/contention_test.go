package cephtest

import (
	"context"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
)

// contentionProbe is the latency probe of the contention round: small
// synchronous writes, as a database's.
const contentionProbe = `name: contention
workloads:
  - {name: probe, rw: randwrite, bs: 4KiB, iodepth: 1, size: 16MiB, runtime: 4s, time_based: true, direct: true}
`

// checkContention runs the contention round on the rbd target (the probe
// alone, then beside a bulk writer of 1 MiB blocks at QD16 on the same
// image) and reads what they contend for from the OSDs' figures. With
// every OSD's disk throttled to 40 MiB/s the writer fills the disks: the
// OSDs' waits for their devices rise, the round trips do not. (With
// nothing limited, this host's two cores are what they share, the client
// and every OSD running here; how busy they are alone depends on what else
// the machine runs, so that case is a unit test's.) With every node's link
// shaped to 100 Mbit/s the writer fills the links instead: the round
// trips to the OSDs rise.
func checkContention(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runner := storbenchtest.New(ctx, t, "contention.yaml", contentionProbe, "rbd:"+c.Pool+"?conf="+c.Conf)
	run := func(t *testing.T) *analysis.ContentionShared {
		d := runner.RunWith(ctx, t, func(r *storbench.RunRequest) {
			r.Round, r.Probe, r.NoiseSize = result.RoundContention, "probe", "64MiB"
		})
		if len(d.Contention) != 1 {
			t.Fatalf("contention reports %+v, want one", d.Contention)
		}
		for _, res := range d.Results {
			if tm := res.Telemetry; tm != nil {
				for _, o := range tm.OSDs {
					t.Logf("%s: osd.%d: commit %v (mean %v), device wait %v, round trip %v, greeting %v", res.Workload, o.ID, o.Commit, o.CommitMean, o.DeviceWait, o.RTT, o.Greeting)
				}
				t.Logf("%s: host cpu %v", res.Workload, tm.Summary[result.SeriesCPUBusy])
			}
		}
		rep := d.Contention[0]
		t.Logf("verdict: %s", rep.Verdict)
		if rep.Shared == nil {
			t.Fatalf("no figures of what the probe and the writer share: %+v", rep)
		}
		return rep.Shared
	}
	kinds := func(sh *analysis.ContentionShared) []string { return strings.Split(sh.Kind, " and ") }
	t.Run("disks throttled: the OSDs' disks", func(t *testing.T) {
		for _, n := range c.Nodes {
			c.Script(t, "osd", "slow", strconv.Itoa(n.OSD), strconv.Itoa(40<<20))
		}
		defer func() {
			for _, n := range c.Nodes {
				c.Script(t, "osd", "unslow", strconv.Itoa(n.OSD))
			}
		}()
		if sh := run(t); !slices.Contains(kinds(sh), analysis.SharedDisks) || slices.Contains(kinds(sh), analysis.SharedLink) {
			t.Errorf("shared %q (%s), want %q, not %q", sh.Kind, sh.Summary, analysis.SharedDisks, analysis.SharedLink)
		}
	})
	t.Run("links shaped: a link", func(t *testing.T) {
		for _, n := range c.Nodes {
			c.Script(t, "link", "shape", n.Name, "100mbit")
		}
		defer func() {
			for _, n := range c.Nodes {
				c.Script(t, "link", "unshape", n.Name)
			}
		}()
		if sh := run(t); !slices.Contains(kinds(sh), analysis.SharedLink) || slices.Contains(kinds(sh), analysis.SharedDisks) {
			t.Errorf("shared %q (%s), want %q, not %q", sh.Kind, sh.Summary, analysis.SharedLink, analysis.SharedDisks)
		}
	})
}
