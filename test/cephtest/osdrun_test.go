package cephtest

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
)

const osdRunSuite = `name: osd-write
workloads:
  - {name: seq-write, rw: write, bs: 4MiB, iodepth: 8, size: 64MiB, runtime: 8s, time_based: true, direct: true}
`

// checkOSDRun: a run on the rbd target with telemetry names the slow OSD
// itself. osd.2's disk is throttled to 20 MiB/s; storbench benches each of
// the pool's OSDs before the first workload, samples their commit latency
// while it runs, and `show` names osd.2 on sbceph-node-3, its disk, and no
// other OSD. Then sbceph-node-3's link is shaped to 100 Mbit/s instead: the
// round trip to osd.2 during the workload names its link. Then osd.2 is
// capped at 10% of a core: it greets new connections late while their
// round trip stays in line, which names its CPU. With no fault, a run
// names none.
func checkOSDRun(t *testing.T, c *Cluster) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	runner := storbenchtest.New(ctx, t, "osd-write.yaml", osdRunSuite, "rbd:"+c.Pool+"?conf="+c.Conf)
	run := func(t *testing.T) []analysis.ResultOSDVerdict {
		d := runner.Run(ctx, t)
		for _, res := range d.Results {
			if tm := res.Telemetry; tm != nil {
				for _, o := range tm.OSDs {
					t.Logf("%s: osd.%d on %s (%s, up %v): bench %.0f MB/s %s, commit %v (mean %v, device wait %v), round trip %v, greeting %v", res.Workload, o.ID, o.Host, o.Device, o.Up, o.BenchBytesPerSec/1e6, o.BenchError, o.Commit, o.CommitMean, o.DeviceWait, o.RTT, o.Greeting)
				}
			} else {
				t.Errorf("%s: no telemetry", res.Workload)
			}
		}
		for _, v := range d.OSDs {
			t.Logf("verdict: %s", v.Summary)
		}
		return d.OSDs
	}
	slow := 2
	t.Run("slow disk", func(t *testing.T) {
		c.Script(t, "osd", "slow", strconv.Itoa(slow), strconv.Itoa(20<<20))
		defer c.Script(t, "osd", "unslow", strconv.Itoa(slow))
		vs := run(t)
		if len(vs) != 1 || vs[0].OSD != slow || vs[0].Cause != analysis.OSDCauseDisk || vs[0].Host != c.Nodes[slow].Name ||
			!strings.Contains(vs[0].Summary, "osd.2 on "+c.Nodes[slow].Name) {
			t.Errorf("verdicts %+v: want osd.%d's disk on %s alone", vs, slow, c.Nodes[slow].Name)
		}
	})
	t.Run("slow link", func(t *testing.T) {
		c.Script(t, "link", "shape", c.Nodes[slow].Name, "100mbit")
		defer c.Script(t, "link", "unshape", c.Nodes[slow].Name)
		vs := run(t)
		if len(vs) != 1 || vs[0].OSD != slow || vs[0].Cause != analysis.OSDCauseLink || vs[0].Host != c.Nodes[slow].Name {
			t.Errorf("verdicts %+v: want osd.%d's link on %s alone", vs, slow, c.Nodes[slow].Name)
		}
	})
	t.Run("CPU starved", func(t *testing.T) {
		c.Script(t, "osd", "cpu", strconv.Itoa(slow), "10")
		defer c.Script(t, "osd", "uncpu", strconv.Itoa(slow))
		vs := run(t)
		if len(vs) != 1 || vs[0].OSD != slow || vs[0].Cause != analysis.OSDCauseCPU || vs[0].Host != c.Nodes[slow].Name {
			t.Errorf("verdicts %+v: want osd.%d's CPU on %s alone", vs, slow, c.Nodes[slow].Name)
		}
	})
	t.Run("OSD stopped", func(t *testing.T) {
		c.Script(t, "osd", "stop", strconv.Itoa(slow))
		defer func() {
			c.Script(t, "osd", "start", strconv.Itoa(slow))
			c.Script(t, "wait-clean", "120")
		}()
		vs := run(t)
		if len(vs) != 1 || vs[0].OSD != slow || vs[0].Cause != analysis.OSDCauseDown || vs[0].Host != c.Nodes[slow].Name {
			t.Errorf("verdicts %+v: want osd.%d on %s down alone", vs, slow, c.Nodes[slow].Name)
		}
	})
	t.Run("no fault", func(t *testing.T) {
		if vs := run(t); len(vs) != 0 {
			t.Errorf("verdicts %+v with no fault injected: want none", vs)
		}
	})
}
