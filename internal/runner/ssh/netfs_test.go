package ssh

import (
	"context"
	"testing"

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
		v.CheckExplained(t, p.Labels)
	})
	if v != nil {
		glustertest.CheckClean(t, v)
	}
}
