package kube_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/ceph/osdtelemetry"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/test/kubetest"
)

// EnvClassVerdicts runs the timing-sensitive checks of a class run on
// cephfs: a throttled OSD's disk and its node named, and the contention
// round naming the OSDs' disks as what a probe and a writer share.
const EnvClassVerdicts = "STORBENCH_CEPH_CLASS_VERDICTS"

// checkClassOSDs: every result of a class run on cephfs with telemetry
// carries the OSDs of the class's data pool (cephfs_data, named by the
// class's annotation storbench.io/ceph-fs): one per real node, on that
// node, up, each with its bench; and says which pool and why.
func checkClassOSDs(t *testing.T, rs []result.Result, nodes []string) {
	t.Helper()
	for _, r := range rs {
		tm := r.Telemetry
		if tm == nil {
			t.Errorf("%s %s: no telemetry", r.Target, r.Workload)
			continue
		}
		var hosts []string
		for _, o := range tm.OSDs {
			hosts = append(hosts, o.Host)
			if !o.Up || o.BenchBytesPerSec <= 0 {
				t.Errorf("%s %s: osd.%d on %s: up %v, bench %.0f B/s %s", r.Target, r.Workload, o.ID, o.Host, o.Up, o.BenchBytesPerSec, o.BenchError)
			}
		}
		slices.Sort(hosts)
		if !slices.Equal(hosts, sorted(nodes)) {
			t.Errorf("%s %s: OSD hosts %v, want the real nodes %v", r.Target, r.Workload, hosts, sorted(nodes))
		}
		src := tm.Sources[osdtelemetry.SourceKey]
		if !strings.Contains(src, "pool cephfs_data (the first data pool of CephFS cephfs (class annotation storbench.io/ceph-fs))") {
			t.Errorf("%s %s: OSD source %q: want the pool and why", r.Target, r.Workload, src)
		}
	}
}

// checkClassOSDVerdict, on demand (EnvClassVerdicts=1: a busy host's
// bench and commit latencies vary), throttles one OSD's disk to 20 MB/s
// (ceph.sh osd slow) and runs a sequential write on k8s:cephfs from
// another node: the run's OSD verdicts name that OSD's disk and its node.
func checkClassOSDVerdict(t *testing.T, c *kubekit.Cluster, nodes []string) {
	if !classVerdicts() {
		t.Skipf("on demand: %s=1 (a slowed OSD's verdict needs a quiet host)", EnvClassVerdicts)
	}
	const slow = 2
	slowNode := cephEnv(t)["osd"+strconv.Itoa(slow)+"_NODE"]
	from := nodes[0]
	if from == slowNode {
		from = nodes[1]
	}
	slowOSD(t, slow, 20000000)
	opts := kube.TargetOptions{Timeout: 2 * time.Minute, Image: realImage, PullPolicy: corev1.PullNever}
	const suite = `name: class-osd-verdict
workloads:
  - {name: seq-write, rw: write, bs: 1MiB, size: 256MiB, runtime: 10s, time_based: true, ioengine: libaio, iodepth: 8}
`
	rs := runPlan(t, context.Background(), suite, engine.Plan{Targets: []runner.Target{kube.NewTarget(c, "cephfs", from, 1, opts)}, Telemetry: true})
	v := analysis.OSDVerdicts(rs)
	for _, r := range rs {
		for _, d := range r.Directions() {
			t.Logf("%s from %s: %.1f MB/s; verdicts %+v", r.Workload, from, d.BytesPerSec/1e6, v)
		}
	}
	if len(v) != 1 || v[0].OSD != slow || v[0].Cause != analysis.OSDCauseDisk || v[0].Host != slowNode || !strings.Contains(v[0].Summary, slowNode) {
		t.Errorf("verdicts %+v: want osd.%d's disk on %s", v, slow, slowNode)
	}
}

// slowOSD throttles osd id's disk to bytesPerSec (reads and writes) until
// the test ends (test/cluster/ceph.sh osd slow, then unslow).
func slowOSD(t *testing.T, id, bytesPerSec int) {
	t.Helper()
	script, err := filepath.Abs("../../../test/cluster/ceph.sh")
	if err != nil {
		t.Fatal(err)
	}
	osd := strconv.Itoa(id)
	if out, err := exec.Command("bash", script, "osd", "slow", osd, strconv.Itoa(bytesPerSec)).CombinedOutput(); err != nil {
		t.Fatalf("ceph.sh osd slow %s: %v: %s", osd, err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("bash", script, "osd", "unslow", osd).CombinedOutput(); err != nil {
			t.Errorf("ceph.sh osd unslow %s: %v: %s", osd, err, out)
		}
	})
}

// classVerdicts: the timing-sensitive checks of a Ceph class run were asked
// for (EnvClassVerdicts=1).
func classVerdicts() bool { return os.Getenv(EnvClassVerdicts) == "1" }

// cephEnv reads the test cluster's Ceph description (ceph.sh's ceph.env,
// in cluster.sh's format).
func cephEnv(t *testing.T) kubetest.ClusterEnv {
	t.Helper()
	f, err := os.Open(filepath.Join(filepath.Dir(os.Getenv("CLUSTER_ENV")), "ceph", "ceph.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env, err := kubetest.ParseEnv(f)
	if err != nil {
		t.Fatal(err)
	}
	return env
}
