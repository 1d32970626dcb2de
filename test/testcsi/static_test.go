package testcsi

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"

	"github.com/storbench/storbench/internal/testenv"
)

// A static PV of the netfs mode (no CreateVolume, no record: the PV's
// volume attributes name the server and the share): attached, staged and
// published on two nodes as the kubelet would, each node mounts the share
// itself, data written on one is read on the other and lands in the
// share; released, nothing stays mounted and the controller recorded
// nothing.
func TestNetfsStaticVolumeFromAttributes(t *testing.T) {
	r := newRig(t, nil)
	testenv.Root(t)
	server, share := sftpShare(t)
	attrs := map[string]string{ServerParameter: server, ShareParameter: share}
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	ctx := context.Background()
	const id = "nas-static-1"
	var targets []string
	for _, n := range []string{"node-a", "node-b"} {
		staging, target := r.paths(n, id)
		if _, err := r.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: n, VolumeCapability: rwx, VolumeContext: attrs}); err != nil {
			t.Fatalf("ControllerPublishVolume on %s: %v", n, err)
		}
		if err := os.MkdirAll(staging, 0o750); err != nil {
			t.Fatal(err)
		}
		if _, err := r.nodes[n].NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: rwx, VolumeContext: attrs}); err != nil {
			t.Fatalf("NodeStageVolume on %s: %v", n, err)
		}
		if _, err := r.nodes[n].NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: rwx, VolumeContext: attrs}); err != nil {
			t.Fatalf("NodePublishVolume on %s: %v", n, err)
		}
		targets = append(targets, target)
	}
	if mountDev(t, targets[0]) == mountDev(t, targets[1]) {
		t.Error("one mount for two nodes: want each node's own")
	}
	data := writeRandom(t, filepath.Join(targets[0], "kept"), 64<<10)
	sameFile(t, filepath.Join(targets[1], "kept"), data)
	sameFile(t, filepath.Join(share, "kept"), data) // the share itself is the volume
	for _, n := range []string{"node-a", "node-b"} {
		r.release(t, id, n)
	}
	if entries, err := os.ReadDir(filepath.Join(r.state, "volumes")); err != nil || len(entries) > 0 {
		t.Errorf("the controller recorded %v for a static volume (%v)", entries, err)
	}
	noMountsUnder(t, r.dir)
}

// noMountsUnder fails t for each mount point under dir.
func noMountsUnder(t *testing.T, dir string) {
	t.Helper()
	mis, err := readMountInfo()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range mis {
		if strings.HasPrefix(m.point, dir+"/") {
			t.Errorf("left mounted: %s (%s)", m.point, m.fsType)
		}
	}
}

// A volume ID without a record is a static netfs volume only when its
// attributes name a server and a share, both well formed.
func TestNetfsStaticVolumeRefusals(t *testing.T) {
	r := newRig(t, nil)
	rwx := netfsCap(csi.VolumeCapability_AccessMode_MULTI_NODE_MULTI_WRITER)
	for _, tc := range []struct {
		name  string
		attrs map[string]string
		code  codes.Code
	}{
		{"no-attributes", nil, codes.NotFound},
		{"no-port", map[string]string{ServerParameter: "10.0.0.5", ShareParameter: "/srv/a"}, codes.InvalidArgument},
		{"no-share", map[string]string{ServerParameter: "10.0.0.5:2022"}, codes.InvalidArgument},
		{"relative-share", map[string]string{ServerParameter: "10.0.0.5:2022", ShareParameter: "srv/a"}, codes.InvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := r.ctrl.ControllerPublishVolume(context.Background(), &csi.ControllerPublishVolumeRequest{
				VolumeId: "static-" + tc.name, NodeId: "node-a", VolumeCapability: rwx, VolumeContext: tc.attrs})
			wantCode(t, err, tc.code, "ControllerPublishVolume")
			staging, _ := r.paths("node-a", "static-"+tc.name)
			_, err = r.nodes["node-a"].NodeStageVolume(context.Background(), &csi.NodeStageVolumeRequest{
				VolumeId: "static-" + tc.name, StagingTargetPath: staging, VolumeCapability: rwx, VolumeContext: tc.attrs})
			wantCode(t, err, tc.code, "NodeStageVolume")
		})
	}
}
