package kube_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

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
	conf := os.Getenv("CEPH_CONF")
	os.Setenv("CEPH_CONF", filepath.Join(t.TempDir(), "absent.conf"))
	g := openKind(t, ctx, kind, kube.TargetPrefix+"rbd:rbd?rook="+ns)
	p, err := g.Targets[0].Prepare(ctx, runner.Need{RunID: "toolbox-rbd", FileSize: 8 << 20})
	if err == nil {
		want := "pool rbd's size and OSDs read with the ceph CLI in Rook's toolbox pod " + ns + "/" + pod
		if !slices.ContainsFunc(p.Notices, func(n string) bool { return strings.Contains(n, want) }) {
			t.Errorf("notices %q: want one saying %q", p.Notices, want)
		}
		if result.LabelReplicas.Of(p.Labels) != "3" || result.LabelCephOSDs.Of(p.Labels) != "osd.0,osd.1,osd.2" {
			t.Errorf("the pool's facts through Rook's toolbox: labels %v", p.Labels)
		}
		err = p.Cleanup(ctx)
	}
	os.Setenv("CEPH_CONF", conf)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := rbdImages(t, ctx); slices.Contains(imgs, "storbench-toolbox-rbd-"+kind.Nodes.Names[0]) {
		t.Errorf("images after the toolbox's run: %v", imgs)
	}
	t.Logf("the pool's facts through Rook's toolbox %s/%s: %.1f s", ns, pod, time.Since(t0).Seconds())
}
