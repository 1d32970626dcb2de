package kube_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/units"
)

// classProbe is the contention round's latency probe on the class: small
// synchronous writes at queue depth 1, as a database's (seed 004: a
// Prometheus beside a bulk copy).
const classProbe = `name: class-contention
workloads:
  - {name: probe, rw: randwrite, bs: 4KiB, iodepth: 1, size: 16MiB, runtime: 4s, time_based: true, direct: true}
`

// checkClassContention runs the contention round on k8s:cephfs as two
// workloads on a Ceph class meet in a homelab: the probe in a volume of its
// own on one node, the bulk writer (1 MiB at QD16) in another volume on
// another node, both on the class's data pool. The OSD figures the class
// run records (class_osds.go) say what the two share: with every OSD's
// disk throttled to 4 MiB/s, an SD card's writes, the OSDs' waits for their
// devices rise, not the round trips to them (the disks). The writer goes
// through its node's ceph-fuse, which does not reach 20 MB/s here: the
// limit sits below it, so that it fills the disks (at 10 MiB/s it wrote
// 7.9 MB/s, and the devices' waits rose to 1-4.5 ms only; at 5 MiB/s the
// busiest OSD's wait was 9.8-11.5 ms in five runs, one under the 10 ms floor).
//
// A shared link is the RBD target's case (test/cephtest: checkContention),
// not this one's: through ceph-fuse the writer reaches about half a shaped
// link's rate (5.0 MB/s at 100 Mbit/s; 2.4-2.7 MB/s at 40 Mbit/s, with
// the switch's queue at 25 ms or 200 ms alike), so the link is never full
// and the round trips to the OSDs rose past 1.5 ms in one run of three.
// On demand (EnvClassVerdicts=1), as the slow OSD's verdict: the floors
// are a quiet host's.
func checkClassContention(t *testing.T, c *kubekit.Cluster, nodes []string) {
	if !classVerdicts() {
		t.Skipf("on demand: %s=1 (what a probe and a writer share needs a quiet host)", EnvClassVerdicts)
	}
	probeNode, noiseNode := nodes[1], nodes[2]
	suite, err := spec.Parse([]byte(classProbe), "probe")
	if err != nil {
		t.Fatal(err)
	}
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever, OSDBenches: &kube.OSDBenches{}}
	run := func(t *testing.T) *analysis.ContentionShared {
		t.Helper()
		start := time.Now()
		plan := engine.Plan{Targets: []runner.Target{kube.NewTarget(c, "cephfs", probeNode, 1, opts)}, Telemetry: true,
			Contention: &engine.Contention{Probe: suite.Workloads[0], NoiseTarget: kube.NewTarget(c, "cephfs", noiseNode, 2, opts), NoiseSize: 64 << 20}}
		rs := runPlan(t, context.Background(), cephfsSuite, plan)
		for _, r := range rs {
			if r.Status != result.StatusComplete {
				t.Errorf("%s %s: %s %s", r.Target, r.Workload, r.Status, r.Error)
			}
			if tm := r.Telemetry; tm != nil {
				for _, o := range tm.OSDs {
					t.Logf("%s: osd.%d on %s: commit %v, device wait %v, round trip %v", r.Workload, o.ID, o.Host, o.Commit, o.DeviceWait, o.RTT)
				}
			}
		}
		reps := contention.Reports(rs)
		if len(reps) != 1 {
			t.Fatalf("contention reports %+v, want one", reps)
		}
		rep := reps[0]
		t.Logf("round in %.1f s; the writer on %s at %s; verdict: %s", time.Since(start).Seconds(), noiseNode, units.MBps(rep.NoiseBytesPerSec), rep.Verdict)
		if rep.Shared == nil {
			t.Fatalf("no figures of what the probe and the writer share: %+v", rep)
		}
		t.Logf("shared: %s", rep.Shared.Summary)
		return rep.Shared
	}
	kinds := func(sh *analysis.ContentionShared) []string { return strings.Split(sh.Kind, " and ") }
	t.Run("disks throttled: the OSDs' disks", func(t *testing.T) {
		for id := range nodes { // one OSD per real node
			slowOSD(t, id, 4<<20)
		}
		if sh := run(t); !slices.Contains(kinds(sh), analysis.SharedDisks) || slices.Contains(kinds(sh), analysis.SharedLink) {
			t.Errorf("shared %q (%s), want %q, not %q", sh.Kind, sh.Summary, analysis.SharedDisks, analysis.SharedLink)
		}
	})
}
