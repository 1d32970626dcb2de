package kube_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/test/kubetest"
)

// TestClusterRealNodeBlockVolumeWithDataIsRefused binds a new claim to a retained
// Block-mode PV whose device holds data: every write run is refused inside
// the pod, the device's bytes are unchanged, and nothing is left.
func TestClusterRealNodeBlockVolumeWithDataIsRefused(t *testing.T) {
	kubetest.Shared(t) // its own class, objects and checks: shares the cluster
	e := integration(t)
	for _, name := range []string{"ext4", "zfs", "md-1.0"} {
		t.Run(name, func(t *testing.T) {
			var c safetytest.Case
			for _, k := range safetytest.Cases() {
				if k.Name == name {
					c = k
				}
			}
			dev := c.Device(t)
			before := safetytest.Sum(t, dev)
			class := unique("sb-blockdata")
			e.class(t, class)
			e.realPV(t, class, dev, "16Mi", true)
			r := storbench(context.Background(), t, "run", "--db", filepath.Join(t.TempDir(), "r.db"), "--suite", suiteFile(t, tinySuite),
				"--target", "k8s:"+class, "--nodes", realNode, "--volume-mode", "Block", "--size", "16Mi",
				"--image", realImage, "--image-pull-policy", "Never", "--timeout", "2m", "--output", "json")
			if r.code == 0 || !strings.Contains(r.errOut, "already holds data") || !strings.Contains(r.errOut, c.Magic) {
				t.Errorf("exit %d: %s", r.code, r.errOut)
			}
			if after := safetytest.Sum(t, dev); after != before {
				t.Errorf("device changed: sha256 %s -> %s", before, after)
			}
			if left := e.labelledOf(t, class); len(left) != 0 {
				t.Errorf("objects left: %v", left)
			}
		})
	}
}
