package testcsi

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/safety/safetytest"
	"github.com/storbench/storbench/internal/testenv"
)

// TestThawAfterTheFrozenMountPointIsGone: a copy froze the filesystem
// through one mount point, and that mount point was unmounted meanwhile
// (the kubelet unpublishing a deleted pod's path). thaw unfreezes it
// through the mount point that is left, so a writer there finishes; with
// none left, through a mount of its own, so the device is released.
func TestThawAfterTheFrozenMountPointIsGone(t *testing.T) {
	needDisks(t)
	d := disk{cmd: execx.Local{}}
	ctx := context.Background()
	for _, left := range []bool{true, false} {
		name := map[bool]string{true: "another mount point left", false: "no mount point left"}[left]
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			t.Cleanup(func() { releaseAll(t, dir) })
			img := filepath.Join(dir, "vol.img")
			if err := createImage(img, 64<<20); err != nil {
				t.Fatal(err)
			}
			dev := testenv.AttachLoop(t, img)
			safetytest.Run(t, "mkfs.ext4", "-q", dev)
			frozenVia, other := filepath.Join(dir, "publish"), filepath.Join(dir, "staging")
			for _, p := range []string{frozenVia, other} {
				if err := os.Mkdir(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			safetytest.Run(t, "mount", dev, other)
			safetytest.Run(t, "mount", "--bind", other, frozenVia)
			safetytest.Run(t, "fsfreeze", "--freeze", frozenVia)
			safetytest.Run(t, "umount", frozenVia) // allowed on a frozen filesystem
			if !left {
				safetytest.Run(t, "umount", other)
			}
			if err := d.thaw(ctx, dev); err != nil {
				t.Fatal(err)
			}
			if left {
				done := make(chan error, 1)
				go func() { done <- os.WriteFile(filepath.Join(other, "after"), []byte("written"), 0o644) }()
				select {
				case err := <-done:
					if err != nil {
						t.Fatal(err)
					}
				case <-time.After(30 * time.Second):
					t.Fatal("a write to the volume still blocked 30 s after the thaw: the filesystem is frozen")
				}
				safetytest.Run(t, "umount", other)
			}
			sb := "/proc/fs/ext4/" + filepath.Base(dev)
			if alive, _ := exists(sb); alive {
				t.Errorf("%s: the filesystem lives on with no mount point (frozen)", sb)
			}
		})
	}
}
