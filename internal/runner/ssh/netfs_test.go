package ssh

import (
	"context"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/test/glustertest"
)

// TestGlusterFUSEMountOverSSH: a directory on a real GlusterFS FUSE mount,
// reached over SSH, is explained from the mount as the host sees it: its
// three servers and replica 3 written by the client.
func TestGlusterFUSEMountOverSSH(t *testing.T) {
	var v *glustertest.Volume
	t.Run("mount", func(t *testing.T) {
		v = glustertest.Start(t, glustertest.Options{})
		h := newHost(t)
		sub := sshSubject(t, h, v.Mount, writeNeed("glssh"), false)
		p, err := sub.Target.Prepare(context.Background(), sub.Need)
		if err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := p.Cleanup(context.Background()); err != nil {
				t.Error(err)
			}
		}()
		var want []string
		for _, s := range v.Servers() {
			want = append(want, s+":24007")
		}
		l := p.Labels
		if got := result.LabelVolumeServers.Of(l); got != strings.Join(want, ",") ||
			result.LabelReplicas.Of(l) != "3" || result.LabelReplicationModel.Of(l) != result.ReplicationClient {
			t.Errorf("labels %v, want servers %s, replicas 3, model client", l, strings.Join(want, ","))
		}
	})
	if v != nil {
		glustertest.CheckClean(t, v)
	}
}
