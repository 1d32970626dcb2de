package testcsi

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
)

// cephfsClass is a cephfs class's parameters over a fresh directory
// standing for the controller's CephFS mount, and that directory. The
// controller only makes and removes directories in it and checks the
// ceph.conf is a file: no Ceph is needed for its side (the nodes' ceph-fuse
// mounts are proved on the test cluster: TestClusterCeph/CephFSFromEveryNode).
func cephfsClass(t *testing.T) (map[string]string, string) {
	t.Helper()
	dir := t.TempDir()
	share, conf := filepath.Join(dir, "volumes"), filepath.Join(dir, "ceph.conf")
	if err := os.Mkdir(share, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[global]\nmon host = 127.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]string{ModeParameter: string(ModeCephFS), CephConfParameter: conf, CephPathParameter: "/volumes", ShareParameter: share}, share
}

func TestCephFSModeVolumeIsADirectoryEveryNodeMounts(t *testing.T) {
	r := newRig(t, nil)
	params, share := cephfsClass(t)
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	v, err := r.createNetfs(t, "pvc-cephfs", params, rwx)
	if err != nil {
		t.Fatal(err)
	}
	ctx := v.GetVolumeContext()
	if ctx[CephPathParameter] != "/volumes/"+v.GetVolumeId() || ctx[CephConfParameter] != params[CephConfParameter] || ctx[ServerParameter] != "" {
		t.Errorf("volume context %v: want cephPath /volumes/%s, the class's cephConf and no server (no node serves a CephFS)", ctx, v.GetVolumeId())
	}
	dir := filepath.Join(share, v.GetVolumeId())
	if fi, err := os.Stat(dir); err != nil || fi.Mode().Perm() != 0o777 {
		t.Fatalf("the volume's directory %s: %v %v", dir, fi, err)
	}
	for _, n := range []string{"node-a", "node-b"} { // shared: attached to two nodes at once
		if _, err := r.ctrl.ControllerPublishVolume(context.Background(), &csi.ControllerPublishVolumeRequest{
			VolumeId: v.GetVolumeId(), NodeId: n, VolumeCapability: rwx}); err != nil {
			t.Fatalf("publish on %s: %v", n, err)
		}
	}
	_, err = r.ctrl.CreateSnapshot(context.Background(), &csi.CreateSnapshotRequest{Name: "snap-cephfs", SourceVolumeId: v.GetVolumeId()})
	wantCode(t, err, codes.InvalidArgument, "a snapshot of a cephfs volume")
	_, err = r.ctrl.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()})
	wantCode(t, err, codes.FailedPrecondition, "deleting a volume two nodes hold")
	for _, n := range []string{"node-a", "node-b"} {
		if _, err := r.ctrl.ControllerUnpublishVolume(context.Background(), &csi.ControllerUnpublishVolumeRequest{VolumeId: v.GetVolumeId(), NodeId: n}); err != nil {
			t.Fatalf("unpublish on %s: %v", n, err)
		}
	}
	if _, err := r.ctrl.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: v.GetVolumeId()}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the volume's directory is still there after DeleteVolume: %v", err)
	}
}

func TestCephFSModeRefusals(t *testing.T) {
	r := newRig(t, nil)
	params, share := cephfsClass(t)
	with := func(k, v string) map[string]string {
		p := map[string]string{}
		for pk, pv := range params {
			p[pk] = pv
		}
		if v == "" {
			delete(p, k)
		} else {
			p[k] = v
		}
		return p
	}
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	wantRefused(t, r, share, []refusal{
		{"block", params, blockCap(), codes.InvalidArgument},
		{"ext4", params, mountCap("ext4", ""), codes.InvalidArgument},
		{"no-conf", with(CephConfParameter, ""), rwx, codes.InvalidArgument},
		{"relative-path", with(CephPathParameter, "volumes"), rwx, codes.InvalidArgument},
		{"no-share", with(ShareParameter, ""), rwx, codes.InvalidArgument},
		{"missing-conf", with(CephConfParameter, share+"/gone.conf"), rwx, codes.FailedPrecondition},
		{"missing-share", with(ShareParameter, share+"/gone"), rwx, codes.FailedPrecondition},
		{"server", with(ServerParameter, "127.0.0.1:2022"), rwx, codes.InvalidArgument},
		{"conf-on-shared", with(ModeParameter, string(ModeShared)), mountCap("", ""), codes.InvalidArgument},
		{"unknown-parameter", with("fsName", "cephfs"), rwx, codes.InvalidArgument},
	})
}
