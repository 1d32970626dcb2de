package testcsi

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"

	"github.com/storbench/storbench/internal/testenv"
)

// sftpShare serves a fresh directory with sftp-server on 127.0.0.1, as the
// test cluster's netfs server does on its node's address, and returns the
// server's HOST:PORT and the directory.
func sftpShare(t *testing.T) (server, share string) {
	t.Helper()
	testenv.Tool(t, "sshfs", "sshfs", "sshfs")
	socat := testenv.Tool(t, "socat", "socat", "sshfs")
	const sftp = "/usr/lib/openssh/sftp-server"
	if _, err := os.Stat(sftp); err != nil {
		testenv.Missing(t, "sshfs", "no %s (apt-get install openssh-sftp-server)", sftp)
	}
	share = filepath.Join(t.TempDir(), "share")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatal(err)
	}
	server = fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, socat, "TCP-LISTEN:"+strings.TrimPrefix(server, "127.0.0.1:")+",bind=127.0.0.1,reuseaddr,fork", "EXEC:"+sftp+" -e")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = srv.Wait() }) // killed by the cancel: its exit status says so
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		c, err := net.Dial("tcp", server)
		if err == nil {
			c.Close()
			return server, share
		}
		if time.Now().After(deadline) {
			t.Fatalf("sftp server on %s: %v", server, err)
		}
	}
}

func netfsCap(mode csi.VolumeCapability_AccessMode_Mode) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: mode},
	}
}

// createNetfs creates a netfs volume (deleted at the end) with params.
func (r *rig) createNetfs(t *testing.T, name string, params map[string]string, c *csi.VolumeCapability) (*csi.Volume, error) {
	t.Helper()
	return r.create(t, &csi.CreateVolumeRequest{
		Name: name, CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20},
		VolumeCapabilities: []*csi.VolumeCapability{c}, Parameters: params,
	})
}

// flockFree reports whether an exclusive flock on path is granted now.
// The kernel keeps flock locks of a FUSE filesystem that has none of its
// own (sshfs) per inode: two opens through one mount conflict, through two
// mounts they do not.
func flockFree(t *testing.T, path string) (free bool, release func()) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
	if err != nil && !errors.Is(err, unix.EWOULDBLOCK) {
		f.Close()
		t.Fatalf("flock %s: %v", path, err)
	}
	return err == nil, func() { f.Close() }
}

func mountDev(t *testing.T, path string) uint64 {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Stat(path, &st); err != nil {
		t.Fatal(err)
	}
	return st.Dev
}

// netfs: each node mounts the volume's directory itself (two sshfs mounts
// of one share, one filesystem each), data written on one node is read on
// the other, a lock through one mount is not seen through the other, and
// deleting the volume removes its directory.
func TestNetfsModeMountsTheShareOncePerNode(t *testing.T) {
	r := newRig(t, nil)
	testenv.Root(t)
	server, share := sftpShare(t)
	params := map[string]string{ModeParameter: string(ModeNetfs), ServerParameter: server, ShareParameter: share}
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	v, err := r.createNetfs(t, "pvc-netfs", params, rwx)
	if err != nil {
		t.Fatal(err)
	}
	if ctx := v.GetVolumeContext(); ctx[ServerParameter] != server || ctx[ShareParameter] != share {
		t.Errorf("volume context %v: want the server %s and share %s named, as the PV then names them", ctx, server, share)
	}
	dir := filepath.Join(share, v.GetVolumeId())
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("the volume's directory %s: %v %v", dir, fi, err)
	}
	a := r.use(t, v.GetVolumeId(), "node-a", rwx)
	b := r.use(t, v.GetVolumeId(), "node-b", rwx)
	mis, err := readMountInfo()
	if err != nil {
		t.Fatal(err)
	}
	sshfs := 0
	for _, m := range mis {
		if strings.HasPrefix(m.point, r.dir+"/") && strings.Contains(m.point, "/staging/") && m.fsType == fsNetfs {
			sshfs++
		}
	}
	if sshfs != 2 || mountDev(t, a) == mountDev(t, b) {
		t.Fatalf("want two sshfs mounts, one per node: %d staged, devices %d and %d", sshfs, mountDev(t, a), mountDev(t, b))
	}
	data := writeRandom(t, filepath.Join(a, "kept"), 64<<10)
	sameFile(t, filepath.Join(b, "kept"), data)
	sameFile(t, filepath.Join(dir, "kept"), data)

	free, releaseA := flockFree(t, filepath.Join(a, "kept"))
	if !free {
		t.Fatal("the first flock was refused")
	}
	if again, release := flockFree(t, filepath.Join(a, "kept")); again {
		t.Error("two flocks granted through one mount: the kernel should keep them apart")
	} else {
		release()
	}
	if other, release := flockFree(t, filepath.Join(b, "kept")); !other {
		t.Error("a flock through node-a's mount was seen through node-b's: one mount, not two")
	} else {
		release()
	}
	releaseA()

	_, err = r.ctrl.CreateSnapshot(context.Background(), &csi.CreateSnapshotRequest{Name: "snap-netfs", SourceVolumeId: v.GetVolumeId()})
	wantCode(t, err, codes.InvalidArgument, "a snapshot of a netfs volume")
	ex, err := r.ctrl.ControllerExpandVolume(context.Background(), &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 128 << 20}})
	if err != nil || ex.GetCapacityBytes() != 128<<20 || ex.GetNodeExpansionRequired() {
		t.Errorf("expanding a netfs volume: %v %v", ex, err)
	}
	r.release(t, v.GetVolumeId(), "node-a")
	r.release(t, v.GetVolumeId(), "node-b")
	if _, err := r.ctrl.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the volume's directory is still there after DeleteVolume: %v", err)
	}
	noMountsUnder(t, r.dir)
}

func TestNetfsModeRefusals(t *testing.T) {
	r := newRig(t, nil)
	server, share := sftpShare(t)
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	wantRefused(t, r, share, []refusal{
		{"block", map[string]string{ModeParameter: "netfs", ServerParameter: server, ShareParameter: share}, blockCap(), codes.InvalidArgument},
		{"no-server", map[string]string{ModeParameter: "netfs", ShareParameter: share}, rwx, codes.InvalidArgument},
		{"relative-share", map[string]string{ModeParameter: "netfs", ServerParameter: server, ShareParameter: "share"}, rwx, codes.InvalidArgument},
		{"missing-share", map[string]string{ModeParameter: "netfs", ServerParameter: server, ShareParameter: share + "/gone"}, rwx, codes.FailedPrecondition},
		{"share-on-shared", map[string]string{ModeParameter: "shared", ServerParameter: server, ShareParameter: share}, mountCap("", ""), codes.InvalidArgument},
		{"shared-many-nodes", map[string]string{ModeParameter: "shared"}, rwx, codes.InvalidArgument},
	})
}

// refusal is a CreateVolume the driver must refuse with code.
type refusal struct {
	name   string
	params map[string]string
	cap    *csi.VolumeCapability
	code   codes.Code
}

// wantRefused creates each refused volume and wants its code, and then
// nothing left in the share.
func wantRefused(t *testing.T, r *rig, share string, cases []refusal) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.createNetfs(t, "pvc-"+tc.name, tc.params, tc.cap)
			wantCode(t, err, tc.code, tc.name)
		})
	}
	entries, err := os.ReadDir(share)
	if err != nil || len(entries) > 0 {
		t.Errorf("a refused volume left %v in the share (%v)", entries, err)
	}
}
