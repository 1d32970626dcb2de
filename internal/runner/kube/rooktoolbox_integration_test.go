package kube_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/test/kubetest"
)

// toolboxPoolFacts: a k8s:rbd target on Rook's objects in namespace ns,
// whose pods' image has no ceph CLI, on a host with no Ceph configuration
// (CEPH_CONF naming no file), reads the pool's facts with the ceph CLI in
// Rook's toolbox there, checked against the run's Ceph (its fsid, from
// Rook's Secret), and says so.
func toolboxPoolFacts(t *testing.T, ctx context.Context, c *kubekit.Cluster, kind kube.Kind, ns string) {
	t.Helper()
	t0 := time.Now()
	pod := kubetest.RookToolbox(t, ctx, c, ns, kind.Nodes.Names[0], realImage)
	withoutHostCeph(t, ctx, kind, ns, "toolbox-rbd", func(p *runner.Prepared) {
		want := "pool rbd's size and OSDs read with the ceph CLI in Rook's toolbox pod " + ns + "/" + pod
		if !slices.ContainsFunc(p.Notices, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("notices %q: want one saying %q", p.Notices, want)
		}
		if result.LabelReplicas.Of(p.Labels) != "3" || result.LabelCephOSDs.Of(p.Labels) != "osd.0,osd.1,osd.2" {
			t.Errorf("the pool's facts through Rook's toolbox: labels %v", p.Labels)
		}
	})
	t.Logf("the pool's facts through Rook's toolbox %s/%s: %.1f s", ns, pod, time.Since(t0).Seconds())
}

// rookObjectsPoolFacts: the same target, on a host with no Ceph
// configuration and with no toolbox in Rook's namespace, reads the
// pool's facts from Rook's objects alone: a CephBlockPool of size 3 for
// pool rbd, and a pod for each of the test Ceph's OSDs, labelled as
// Rook labels its OSD pods, on the OSD's node. The facts are the real
// Ceph's (its OSDs and crush hosts, read with this host's ceph CLI
// first), the notice and the source labels say where they came from,
// and the image is gone after.
func rookObjectsPoolFacts(t *testing.T, ctx context.Context, c *kubekit.Cluster, kind kube.Kind, ns string) {
	t.Helper()
	t0 := time.Now()
	real, err := ceph.Client{Cmder: execx.Local{}, Conf: os.Getenv("CEPH_CONF")}.PoolPlacement(ctx, "rbd")
	if err != nil {
		t.Fatal(err)
	}
	osds, err := ceph.Client{Cmder: execx.Local{}, Conf: os.Getenv("CEPH_CONF")}.OSDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	kubetest.RookBlockPool(t, ctx, c, ns, "rbd", map[string]any{"failureDomain": "host", "replicated": map[string]any{"size": int64(real.Pool.Size)}})
	kubetest.RookOSDPods(t, ctx, c, ns, realImage, osds)
	withoutHostCeph(t, ctx, kind, ns, "rookobj-rbd", func(p *runner.Prepared) {
		want := "pool rbd's size and OSDs read with Rook's CephBlockPool " + ns + "/rbd and Rook's running OSD pods in " + ns
		if !slices.ContainsFunc(p.Notices, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("notices %q: want one saying %q", p.Notices, want)
		}
		osdNames := make([]string, len(real.OSDs))
		for i, id := range real.OSDs {
			osdNames[i] = fmt.Sprintf("osd.%d", id)
		}
		l := p.Labels
		if result.LabelReplicas.Of(l) != strconv.Itoa(real.Pool.Size) || result.LabelCephOSDs.Of(l) != strings.Join(osdNames, ",") ||
			result.LabelReplicaNodes.Of(l) != strings.Join(real.Hosts, ",") || result.LabelReplicationModel.Of(l) != result.ReplicationPrimary {
			t.Errorf("the pool's facts from Rook's objects: labels %v, want Ceph's own %+v", l, real)
		}
		if s := result.LabelReplicasSource.Of(l); s != "CephBlockPool "+ns+"/rbd spec.replicated.size" {
			t.Errorf("size source %q", s)
		}
	})
	t.Logf("the pool's facts from Rook's objects in %s: %.1f s", ns, time.Since(t0).Seconds())
}

// withoutHostCeph prepares k8s:rbd:rbd?rook=NS on kind's first node as
// run runID with this host's Ceph configuration hidden (CEPH_CONF naming
// no file), hands the prepared target to check, cleans it up, and checks
// that the run's image is gone.
func withoutHostCeph(t *testing.T, ctx context.Context, kind kube.Kind, ns, runID string, check func(*runner.Prepared)) {
	t.Helper()
	conf := os.Getenv("CEPH_CONF")
	os.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	g := openKind(t, ctx, kind, kube.TargetPrefix+"rbd:rbd?rook="+ns)
	p, err := g.Targets[0].Prepare(ctx, runner.Need{RunID: runID, FileSize: 8 << 20})
	if err == nil {
		check(p)
		err = p.Cleanup(ctx)
	}
	os.Setenv("CEPH_CONF", conf)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := rbdImages(t, ctx); slices.Contains(imgs, "storbench-"+runID+"-"+kind.Nodes.Names[0]) {
		t.Errorf("images after run %s: %v", runID, imgs)
	}
}
