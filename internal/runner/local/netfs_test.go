package local

import (
	"context"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/test/glustertest"
)

// TestGlusterFUSEMountExplained: a directory on a real GlusterFS FUSE
// mount (no Kubernetes) is explained from the mount itself: its three
// servers, replica 3 written by the client, a round trip to each.
func TestGlusterFUSEMountExplained(t *testing.T) {
	var v *glustertest.Volume
	t.Run("mount", func(t *testing.T) {
		v = glustertest.Start(t, glustertest.Options{})
		tgt := NewTarget(v.Mount, Options{})
		need := runner.Need{RunID: "gl1", FileSize: 1 << 20, Writers: []string{"w"}, Direct: true}
		p, err := tgt.Prepare(context.Background(), need)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := p.Cleanup(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		v.CheckExplained(t, p.Labels)
		l := p.Labels
		rtt := result.LabelServerRTT.Of(l)
		if strings.Count(rtt, " ms") != 3 || strings.Contains(rtt, "unreachable") {
			t.Errorf("round trips %q: want one per server", rtt)
		}
		t.Logf("%s; %s", rtt, result.LabelReplicasSource.Of(l))
	})
	if v != nil {
		glustertest.CheckClean(t, v)
	}
}
