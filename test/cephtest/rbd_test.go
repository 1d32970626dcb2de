package cephtest

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/rbd"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// checkRBD runs the rbd target kind on the real Ceph: the kind's
// conformance (leftovers of a killed run found and removed), the quick
// suite through storbench with its facts on every result and its image gone
// afterwards, a cancelled run leaving nothing, and an image it did not make
// left untouched.
func checkRBD(t *testing.T, c *Cluster) {
	testenv.Fio(t)
	ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
	defer cancel()
	target := "rbd:" + c.Pool + "?conf=" + c.Conf
	images := func() []string {
		out, err := c.Command(ctx, Node{}, "rbd", "ls", c.Pool, "--format", "json").Output()
		if err != nil {
			t.Fatal(err)
		}
		var names, ours []string
		if err := json.Unmarshal(out, &names); err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			if strings.HasPrefix(n, rbd.Prefix) {
				ours = append(ours, n)
			}
		}
		return ours
	}

	t.Run("kind conformance", func(t *testing.T) {
		runnertest.KindConformance(t, runnertest.KindSuite{
			Kind:      rbd.Kind{},
			Valid:     []string{target, "rbd:" + c.Pool + "/some-image?conf=" + c.Conf},
			Malformed: []runnertest.Malformed{{Target: "rbd:", Want: "no pool"}, {Target: "rbd:p/a/b", Want: "has no /"}},
			Foreign:   []string{"/tmp", "k8s:local-path", "gluster:vol", "ssh://host/dir"},
			Killed: func(t *testing.T) (runner.Spec, runnertest.Subject, runner.Need) {
				sp, _, err := rbd.Kind{}.Parse(target)
				if err != nil {
					t.Fatal(err)
				}
				tg, err := sp.Target(runner.Options{})
				if err != nil {
					t.Fatal(err)
				}
				need := runner.Need{RunID: "killed-run", FileSize: 8 << 20, Writers: []string{"w"}}
				if _, err := tg.Prepare(ctx, need); err != nil { // never cleaned up: storbench was killed
					t.Fatal(err)
				}
				return sp, runnertest.Subject{Target: tg, Need: need, Leftovers: images}, need
			},
		})
	})

	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	t.Run("quick suite", func(t *testing.T) {
		req := storbench.DefaultRunRequest()
		req.SuiteSpec, req.Targets, req.Telemetry = quickAt(t, time.Second), []string{target}, false
		run, err := storbench.Run(ctx, st, req, nil)
		if err != nil {
			t.Fatal(err)
		}
		out, err := storbench.LoadRunOutcome(ctx, st, run)
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Results) != 4 {
			t.Fatalf("%d results", len(out.Results))
		}
		for _, r := range out.Results {
			l := r.Labels
			if r.Status != result.StatusComplete || result.LabelCephPool.Of(l) != c.Pool || result.LabelReplicas.Of(l) != "3" ||
				result.LabelCephOSDs.Of(l) != "osd.0,osd.1,osd.2" || result.LabelReplicaNodes.Of(l) != "sbceph-node-1,sbceph-node-2,sbceph-node-3" ||
				result.LabelReplicationModel.Of(l) != result.ReplicationPrimary || result.LabelTargetKind.Of(l) != "rbd" {
				t.Errorf("%s: %s, labels %v", r.Workload, r.Status, l)
			}
			t.Logf("%s: read %.1f MB/s %.0f IOPS, write %.1f MB/s %.0f IOPS", r.Workload, bps(r.Read), iops(r.Read), bps(r.Write), iops(r.Write))
		}
		if left := images(); len(left) > 0 {
			t.Errorf("images left: %v", left)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, stop := context.WithCancel(ctx)
		time.AfterFunc(6*time.Second, stop)
		req := storbench.DefaultRunRequest()
		req.Suite, req.Targets, req.Telemetry = "quick", []string{target}, false
		_, err := storbench.Run(cctx, st, req, nil)
		t.Logf("the cancelled run: %v", err)
		if left := images(); len(left) > 0 {
			t.Errorf("images left after a cancelled run: %v", left)
		}
	})

	t.Run("storbench cleanup after a killed run", func(t *testing.T) {
		sp, _, err := rbd.Kind{}.Parse(target)
		if err != nil {
			t.Fatal(err)
		}
		tg, err := sp.Target(runner.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.Prepare(ctx, runner.Need{RunID: "killed-2", FileSize: 4 << 20}); err != nil {
			t.Fatal(err)
		}
		req := storbench.KindCleanupRequest{Targets: []string{target}, DryRun: true}
		dry, err := storbench.CleanupKinds(ctx, req)
		if err != nil || len(dry.Targets) != 1 || len(dry.Targets[0].Leftovers) != 1 || len(images()) != 1 {
			t.Fatalf("dry run: %+v, %v; images %v", dry, err, images())
		}
		req.DryRun = false
		if done, err := storbench.CleanupKinds(ctx, req); err != nil || len(done.Targets[0].Leftovers) != 1 {
			t.Errorf("cleanup: %+v, %v", done, err)
		}
		if left := images(); len(left) > 0 {
			t.Errorf("images left after cleanup: %v", left)
		}
	})

	t.Run("an image it did not make", func(t *testing.T) {
		mustRBD(ctx, t, c, "create", c.Pool+"/keep", "--size", "64M")
		sum := func() string {
			out, err := c.Command(ctx, Node{}, "bash", "-c", "rbd export "+c.Pool+"/keep - 2>/dev/null | sha256sum").Output()
			if err != nil {
				t.Fatal(err)
			}
			return string(out)
		}
		mustRBD(ctx, t, c, "bench", "--io-type", "write", "--io-total", "8M", c.Pool+"/keep")
		before := sum()
		req := storbench.DefaultRunRequest()
		req.Suite, req.Targets, req.Telemetry = "quick", []string{"rbd:" + c.Pool + "/keep?conf=" + c.Conf}, false
		_, err := storbench.Run(ctx, st, req, nil)
		if err == nil || !strings.Contains(err.Error(), "rbd:"+c.Pool+"/keep") {
			t.Errorf("a write suite on an image storbench did not make: %v", err)
		}
		t.Logf("refused: %v", err)
		if after := sum(); after != before {
			t.Errorf("image changed: %s -> %s", before, after)
		}
		req.Suite, req.SuiteSpec, req.Workloads = "", quickAt(t, time.Second), []string{"seq-read", "rand-read-4k-qd32"}
		if _, err := storbench.Run(ctx, st, req, nil); err != nil {
			t.Errorf("reading it: %v", err)
		}
		if after := sum(); after != before {
			t.Errorf("image changed by reads: %s -> %s", before, after)
		}
	})
}

// quickAt is the built-in quick suite with each workload's runtime cut to
// d: the RBD tests check what the runs store and leave, not their figures.
func quickAt(t *testing.T, d time.Duration) *spec.Suite {
	t.Helper()
	s, err := spec.Builtin("quick")
	if err != nil {
		t.Fatal(err)
	}
	for i := range s.Workloads {
		s.Workloads[i].Runtime = spec.Duration(d)
	}
	return s
}

func bps(d *result.Direction) float64 {
	if d == nil {
		return 0
	}
	return d.BytesPerSec / 1e6
}

func iops(d *result.Direction) float64 {
	if d == nil {
		return 0
	}
	return d.IOPS
}
