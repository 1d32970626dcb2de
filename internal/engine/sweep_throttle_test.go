package engine

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cliff/throttle"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// TestSweepKneeAtThrottle sweeps automatically (doubling from one client), each writing at
// most 500 IOPS of 4 KiB, on a filesystem on a loop device whose writes
// the clients' control group caps at 6000 KiB/s (1500 IOPS): the aggregate
// doubles, then stops at the cap, and the knee is named at four clients
// with the cap's rate, after which the sweep stops (8 clients showed it).
func TestSweepKneeAtThrottle(t *testing.T) {
	testenv.Measures(t)
	if testing.Short() {
		t.Skip("root, a loop device, a cgroup and fio")
	}
	needFio(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "mkfs")
	dev := testenv.LoopDevice(t, 256<<20)
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", dev, dir).CombinedOutput(); err != nil {
		t.Fatalf("mount: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
	os.Remove(dir + "/lost+found")
	major, minor, err := throttle.DeviceNumber(dev)
	if err != nil {
		t.Fatal(err)
	}
	g, err := throttle.New(fmt.Sprintf("sbswp-%d", os.Getpid()), major, minor)
	if err != nil {
		testenv.Missing(t, "cgroup-io", "%v", err)
	}
	const limitBPS = 6000 * 1024
	if err := g.Limit(limitBPS); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := g.Remove(); err != nil {
			t.Error(err)
		}
	}()
	s, err := spec.Parse([]byte("name: s\nworkloads:\n  - {name: rw, rw: randwrite, bs: 4k, size: 4MiB, ioengine: psync, runtime: 4s, extra: {rate_iops: '500'}}\n"), "t.yaml")
	if err != nil {
		t.Fatal(err)
	}
	st := openStore(t)
	plan := Plan{Targets: []runner.Target{throttledTarget{Target: local.NewTarget(dir, local.Options{}), procs: g.Procs()}},
		Sweep: &Sweep{Workload: s.Workloads[0]}}
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(context.Background(), plan)
	if err != nil {
		t.Fatal(err)
	}
	rs, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil {
		t.Fatal(err)
	}
	views := analysis.Sweeps(rs)
	if len(views) != 1 {
		t.Fatalf("%d sweeps", len(views))
	}
	var got []string
	for _, st := range views[0].Steps {
		got = append(got, strconv.Itoa(st.Clients)+":"+strconv.FormatFloat(st.IOPS, 'f', 0, 64))
	}
	k := views[0].Knee
	t.Logf("steps %s; knee: %s", strings.Join(got, " "), k.Summary)
	capIOPS := float64(limitBPS) / 4096
	if !k.Found || k.Clients != 4 || k.IOPS < 0.85*capIOPS || k.IOPS > 1.1*capIOPS {
		t.Errorf("knee %+v, want at 4 clients near the cap's %.0f IOPS (steps %v)", k, capIOPS, got)
	}
	if len(got) != 4 {
		t.Errorf("steps %v: the automatic sweep goes on past the knee's proof", got)
	}
	if one := views[0].Steps[0]; one.IOPS < 450 || one.IOPS > 550 {
		t.Errorf("one client: %.0f IOPS, want its 500", one.IOPS)
	}
	emptyDir(t, dir)
}
