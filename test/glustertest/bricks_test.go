package glustertest

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/storbench/storbenchtest"
	"github.com/storbench/storbench/internal/testenv"
)

const brickSuite = `name: brick-write
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, iodepth: 4, size: 64MiB, runtime: 4s, time_based: true, direct: true}
`

// TestBrickNamed: a run on a replica-3 volume's FUSE mount names the brick
// that held it back, from what the client saw, and tells its link from
// the brick itself by the round trip to its server: a brick whose disk is
// throttled to 10 MiB/s and one capped at 5% of a core (disk or CPU), one
// whose node's link is shaped to 100 Mbit/s (link), one killed (down);
// with no fault, none. The volume opens files O_DIRECT on the bricks (DirectIO),
// so the disk throttle applies.
func TestBrickNamed(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	var v *Volume
	t.Run("volume", func(t *testing.T) {
		v = Start(t, Options{VolumeOptions: DirectIO})
		bricksNamed(t, v)
	})
	if v != nil {
		CheckClean(t, v) // once the subtest's cleanup removed the volume
	}
}

func bricksNamed(t *testing.T, v *Volume) {
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := filepath.Join(v.Mount, "bench")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	runner := storbenchtest.New(ctx, t, "brick-write.yaml", brickSuite, dir)
	run := func(t *testing.T) []analysis.BrickVerdict {
		d := runner.Run(ctx, t)
		for _, res := range d.Results {
			if res.Telemetry == nil || len(res.Telemetry.Bricks) != len(v.Nodes) {
				t.Fatalf("%s: telemetry %+v: want every brick", res.Workload, res.Telemetry)
			}
			for _, b := range res.Telemetry.Bricks {
				t.Logf("%s: brick %s connected %v: %d writes, %v mean; %d bytes sent; round trip %v", res.Workload, b.Host, b.Connected, b.Writes, b.WriteLatency, b.BytesSent, b.RTT)
			}
		}
		for _, vd := range d.Bricks {
			t.Logf("verdict: %s", vd.Summary)
		}
		return d.Bricks
	}
	check := func(t *testing.T, vs []analysis.BrickVerdict, node int, cause string) {
		t.Helper()
		if len(vs) != 1 || vs[0].Host != v.Nodes[node].Addr || vs[0].Cause != cause {
			t.Errorf("verdicts %+v: want brick %s alone, %s", vs, v.Nodes[node].Addr, cause)
		}
	}
	t.Run("no fault", func(t *testing.T) {
		if vs := run(t); len(vs) != 0 {
			t.Errorf("verdicts %+v with no fault: want none", vs)
		}
	})
	t.Run("disk throttled", func(t *testing.T) {
		v.BrickLimit(t, "slow", 2, strconv.Itoa(10<<20))
		defer v.BrickLimit(t, "unslow", 2, "")
		check(t, run(t), 2, analysis.BrickCauseServer)
	})
	t.Run("link shaped", func(t *testing.T) {
		v.LinkOp(t, "shape", 2, "100mbit")
		defer v.LinkOp(t, "unshape", 2, "")
		check(t, run(t), 2, analysis.BrickCauseLink)
	})
	t.Run("cpu capped", func(t *testing.T) {
		v.BrickLimit(t, "cpu", 1, "5")
		defer v.BrickLimit(t, "uncpu", 1, "")
		check(t, run(t), 1, analysis.BrickCauseServer)
	})
	t.Run("killed", func(t *testing.T) {
		v.Brick(t, "kill", 0)
		defer v.Brick(t, "start", 0)
		vs := run(t)
		check(t, vs, 0, analysis.BrickCauseDown)
		if len(vs) == 1 && !strings.Contains(vs[0].Summary, "was lost by the client") {
			t.Errorf("summary %q", vs[0].Summary)
		}
	})
}
