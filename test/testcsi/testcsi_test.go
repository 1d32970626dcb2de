package testcsi

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"
	registerapi "k8s.io/kubelet/pkg/apis/pluginregistration/v1"

	"github.com/storbench/storbench/internal/testenv"
)

// rig is a controller and two node plugins (node-a, node-b) over real unix
// sockets, sharing one state directory, as csi.sh runs them.
type rig struct {
	dir   string
	state string
	ctrl  csi.ControllerClient
	ident csi.IdentityClient
	nodes map[string]csi.NodeClient
}

func needDisks(t *testing.T) {
	t.Helper()
	testenv.Loop(t)
	for _, tool := range []struct{ name, pkg, prereq string }{
		{"mkfs.ext4", "e2fsprogs", "mkfs"}, {"resize2fs", "e2fsprogs", "mkfs"}, {"e2fsck", "e2fsprogs", "mkfs"},
		{"mkfs.xfs", "xfsprogs", "mkfs"}, {"xfs_growfs", "xfsprogs", "mkfs"},
		{"fsfreeze", "util-linux", "loop"}, {"blockdev", "util-linux", "loop"}, {"setpriv", "util-linux", "loop"},
	} {
		testenv.Tool(t, tool.name, tool.pkg, tool.prereq)
	}
}

func newRig(t *testing.T, edit func(*Config)) *rig {
	t.Helper()
	needDisks(t)
	r := &rig{dir: t.TempDir(), nodes: map[string]csi.NodeClient{}}
	r.state = filepath.Join(r.dir, "state")
	// Registered first so it runs last: whatever a failed test left mounted
	// or attached is released.
	t.Cleanup(func() { releaseAll(t, r.dir) })
	cfg := Config{Role: RoleController, StateDir: r.state, CapacityBytes: 4 << 30, MaxVolumesPerNode: 3, StuckExpandWait: 5 * time.Second}
	if edit != nil {
		edit(&cfg)
	}
	conn := r.start(t, cfg, "ctrl.sock")
	r.ctrl, r.ident = csi.NewControllerClient(conn), csi.NewIdentityClient(conn)
	for _, n := range []string{"node-a", "node-b"} {
		nc := cfg
		nc.Role, nc.NodeID = RoleNode, n
		r.nodes[n] = csi.NewNodeClient(r.start(t, nc, n+".sock"))
	}
	return r
}

func (r *rig) start(t *testing.T, cfg Config, sock string) *grpc.ClientConn {
	t.Helper()
	d, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(r.dir, sock)
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- d.Serve(ctx, l) }()
	conn, err := grpc.NewClient("unix://"+path, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve %s: %v", sock, err)
		}
	})
	return conn
}

// releaseAll unmounts everything under dir and detaches every loop device
// backed by a file under it.
func releaseAll(t *testing.T, dir string) {
	mis, err := readMountInfo()
	if err != nil {
		t.Error(err)
	}
	var points []string
	for _, m := range mis {
		if strings.HasPrefix(m.point, dir+"/") {
			points = append(points, m.point)
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(points)))
	for _, p := range points {
		exec.Command("fsfreeze", "--unfreeze", p).Run()
		if out, err := exec.Command("umount", "-l", p).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", p, err, out)
		}
	}
	out, err := exec.Command("losetup", "--list", "--noheadings", "--output", "NAME,BACK-FILE").Output()
	if err != nil {
		t.Errorf("losetup --list: %v", err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && strings.HasPrefix(f[1], dir+"/") {
			if out, err := exec.Command("losetup", "--detach", f[0]).CombinedOutput(); err != nil {
				t.Errorf("losetup --detach %s: %v %s", f[0], err, out)
			}
		}
	}
}

// mountCap asks for filesystem fs ("" for the driver's default, xfs).
func mountCap(fs, group string) *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Mount{Mount: &csi.VolumeCapability_MountVolume{FsType: fs, VolumeMountGroup: group}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

func blockCap() *csi.VolumeCapability {
	return &csi.VolumeCapability{
		AccessType: &csi.VolumeCapability_Block{Block: &csi.VolumeCapability_BlockVolume{}},
		AccessMode: &csi.VolumeCapability_AccessMode{Mode: csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER},
	}
}

type volumeSpec struct {
	name   string
	fs     string
	mode   Mode
	size   int64
	block  bool
	source *csi.VolumeContentSource
	node   string // preferred topology
}

func (r *rig) createVolume(t *testing.T, s volumeSpec) (*csi.Volume, error) {
	t.Helper()
	c := mountCap(s.fs, "")
	if s.block {
		c = blockCap()
	}
	req := &csi.CreateVolumeRequest{
		Name:                s.name,
		CapacityRange:       &csi.CapacityRange{RequiredBytes: s.size},
		VolumeCapabilities:  []*csi.VolumeCapability{c},
		Parameters:          map[string]string{ModeParameter: string(s.mode)},
		VolumeContentSource: s.source,
	}
	if s.node != "" {
		req.AccessibilityRequirements = &csi.TopologyRequirement{Preferred: []*csi.Topology{{Segments: map[string]string{TopologyKey: s.node}}}}
	}
	return r.create(t, req)
}

// create sends req and deletes the volume at the test's end.
func (r *rig) create(t *testing.T, req *csi.CreateVolumeRequest) (*csi.Volume, error) {
	t.Helper()
	resp, err := r.ctrl.CreateVolume(context.Background(), req)
	if err != nil {
		return nil, err
	}
	t.Cleanup(func() {
		if _, err := r.ctrl.DeleteVolume(context.Background(), &csi.DeleteVolumeRequest{VolumeId: resp.GetVolume().GetVolumeId()}); err != nil {
			t.Errorf("DeleteVolume %s: %v", resp.GetVolume().GetVolumeId(), err)
		}
	})
	return resp.GetVolume(), nil
}

func (r *rig) mustCreate(t *testing.T, s volumeSpec) *csi.Volume {
	t.Helper()
	v, err := r.createVolume(t, s)
	if err != nil {
		t.Fatalf("CreateVolume %s: %v", s.name, err)
	}
	return v
}

func (r *rig) paths(node, id string) (staging, target string) {
	return filepath.Join(r.dir, node, "staging", id), filepath.Join(r.dir, node, "pods", id, "mount")
}

// use attaches, stages and publishes volume id on node as the kubelet
// would, and returns the published path; cleanup undoes all three.
func (r *rig) use(t *testing.T, id, node string, c *csi.VolumeCapability) string {
	t.Helper()
	target, err := r.tryUse(t, id, node, c)
	if err != nil {
		t.Fatalf("using %s on %s: %v", id, node, err)
	}
	return target
}

func (r *rig) tryUse(t *testing.T, id, node string, c *csi.VolumeCapability) (string, error) {
	t.Helper()
	ctx := context.Background()
	staging, target := r.paths(node, id)
	if _, err := r.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: node, VolumeCapability: c}); err != nil {
		return "", err
	}
	undo := []func() error{func() error {
		_, err := r.ctrl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: node})
		return err
	}}
	release := func() {
		for _, u := range slices.Backward(undo) {
			if err := u(); err != nil {
				t.Errorf("releasing %s on %s: %v", id, node, err)
			}
		}
		undo = nil
	}
	if err := os.MkdirAll(staging, 0o750); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nodes[node].NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: c}); err != nil {
		release()
		return "", err
	}
	undo = append(undo, func() error {
		_, err := r.nodes[node].NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging})
		return err
	})
	if _, err := r.nodes[node].NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: c}); err != nil {
		release()
		return "", err
	}
	undo = append(undo, func() error {
		_, err := r.nodes[node].NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target})
		return err
	})
	t.Cleanup(release)
	return target, nil
}

// release undoes use early (a pod deleted before the test ends).
func (r *rig) release(t *testing.T, id, node string) {
	t.Helper()
	ctx := context.Background()
	staging, target := r.paths(node, id)
	if _, err := r.nodes[node].NodeUnpublishVolume(ctx, &csi.NodeUnpublishVolumeRequest{VolumeId: id, TargetPath: target}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nodes[node].NodeUnstageVolume(ctx, &csi.NodeUnstageVolumeRequest{VolumeId: id, StagingTargetPath: staging}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.ctrl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: node}); err != nil {
		t.Fatal(err)
	}
}

func (r *rig) snapshot(t *testing.T, name, volID string) *csi.Snapshot {
	t.Helper()
	resp, err := r.ctrl.CreateSnapshot(context.Background(), &csi.CreateSnapshotRequest{Name: name, SourceVolumeId: volID})
	if err != nil {
		t.Fatalf("CreateSnapshot: %v", err)
	}
	t.Cleanup(func() {
		if _, err := r.ctrl.DeleteSnapshot(context.Background(), &csi.DeleteSnapshotRequest{SnapshotId: resp.GetSnapshot().GetSnapshotId()}); err != nil {
			t.Errorf("DeleteSnapshot: %v", err)
		}
	})
	if !resp.GetSnapshot().GetReadyToUse() {
		t.Errorf("snapshot %s not ready to use", name)
	}
	return resp.GetSnapshot()
}

func fromSnapshot(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Snapshot{Snapshot: &csi.VolumeContentSource_SnapshotSource{SnapshotId: id}}}
}

func fromVolume(id string) *csi.VolumeContentSource {
	return &csi.VolumeContentSource{Type: &csi.VolumeContentSource_Volume{Volume: &csi.VolumeContentSource_VolumeSource{VolumeId: id}}}
}

func writeRandom(t *testing.T, path string, n int) []byte {
	t.Helper()
	data := make([]byte, n)
	rand.Read(data)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return data
}

func sameFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if sha256.Sum256(got) != sha256.Sum256(want) {
		t.Errorf("%s: sha256 differs from what was written (%d bytes read, %d written)", path, len(got), len(want))
	}
}

func fsBytes(t *testing.T, path string) int64 {
	t.Helper()
	var s unix.Statfs_t
	if err := unix.Statfs(path, &s); err != nil {
		t.Fatal(err)
	}
	return int64(s.Blocks) * int64(s.Bsize)
}

func wantCode(t *testing.T, err error, code codes.Code, what string) {
	t.Helper()
	if status.Code(err) != code {
		t.Errorf("%s: got %v, want code %v", what, err, code)
	}
}

func TestIdentityAndRegistration(t *testing.T) {
	r := newRig(t, nil)
	info, err := r.ident.GetPluginInfo(context.Background(), &csi.GetPluginInfoRequest{})
	if err != nil || info.GetName() != DefaultName || info.GetVendorVersion() == "" {
		t.Fatalf("GetPluginInfo = %v, %v", info, err)
	}
	probe, err := r.ident.Probe(context.Background(), &csi.ProbeRequest{})
	if err != nil || !probe.GetReady().GetValue() {
		t.Fatalf("Probe = %v, %v", probe, err)
	}
	ni, err := r.nodes["node-b"].NodeGetInfo(context.Background(), &csi.NodeGetInfoRequest{})
	if err != nil || ni.GetNodeId() != "node-b" || ni.GetMaxVolumesPerNode() != 3 || ni.GetAccessibleTopology().GetSegments()[TopologyKey] != "node-b" {
		t.Fatalf("NodeGetInfo = %v, %v", ni, err)
	}

	d, err := New(Config{Role: RoleNode, NodeID: "node-a", StateDir: r.state, Version: "1.2.3"})
	if err != nil {
		t.Fatal(err)
	}
	sock := filepath.Join(r.dir, "reg.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go d.ServeRegistration(ctx, l, "/var/lib/kubelet/plugins/x/csi.sock")
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	pi, err := registerapi.NewRegistrationClient(conn).GetInfo(ctx, &registerapi.InfoRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if pi.Type != registerapi.CSIPlugin || pi.Name != DefaultName || pi.Endpoint != "/var/lib/kubelet/plugins/x/csi.sock" || len(pi.SupportedVersions) == 0 {
		t.Errorf("GetInfo = %+v", pi)
	}
}

// A shared filesystem volume (xfs) through its whole life: write,
// snapshot, restore to a larger size, clone, online expansion, and a move
// to another node with the data intact.
func TestSharedFilesystemVolume(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	small := r.mustCreate(t, volumeSpec{name: "pvc-small", mode: ModeShared, size: 64 << 20})
	if small.GetCapacityBytes() != 300<<20 || len(small.GetAccessibleTopology()) != 0 || small.GetVolumeContext()[ModeParameter] != "shared" {
		t.Fatalf("volume = %v: want 300 MiB (xfs's least), no topology, mode shared", small)
	}
	v := r.mustCreate(t, volumeSpec{name: "pvc-shared", mode: ModeShared, size: 320 << 20})
	if again := r.mustCreate(t, volumeSpec{name: "pvc-shared", mode: ModeShared, size: 320 << 20}); again.GetVolumeId() != v.GetVolumeId() || v.GetCapacityBytes() != 320<<20 {
		t.Fatalf("volume = %v, again %v: want one volume of 320 MiB", v, again)
	}
	fi, err := os.Stat(filepath.Join(r.state, "volumes", v.GetVolumeId()+".img"))
	if err != nil || fi.Size() != 320<<20 || fi.Sys().(*syscall.Stat_t).Blocks != 0 {
		t.Fatalf("image = %v, %v: want a sparse file of 320 MiB", fi, err)
	}
	_, err = r.createVolume(t, volumeSpec{name: "pvc-shared", mode: ModeLocal, node: "node-a", size: 320 << 20})
	wantCode(t, err, codes.AlreadyExists, "the same name with another mode")
	id := v.GetVolumeId()
	mnt := r.use(t, id, "node-a", mountCap("", ""))
	size0 := fsBytes(t, mnt)
	before := writeRandom(t, filepath.Join(mnt, "before"), 1<<20)
	snap := r.snapshot(t, "snap-1", id)
	if snap.GetSourceVolumeId() != id || snap.GetSizeBytes() != 320<<20 {
		t.Errorf("snapshot = %v", snap)
	}
	after := writeRandom(t, filepath.Join(mnt, "after"), 1<<20)

	t.Run("restore to a larger size holds the snapshot's data only", func(t *testing.T) {
		rv := r.mustCreate(t, volumeSpec{name: "pvc-restored", mode: ModeShared, size: 448 << 20, source: fromSnapshot(snap.GetSnapshotId())})
		rm := r.use(t, rv.GetVolumeId(), "node-b", mountCap("", ""))
		sameFile(t, filepath.Join(rm, "before"), before)
		if _, err := os.Stat(filepath.Join(rm, "after")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("data written after the snapshot is in the restore: %v", err)
		}
		if got := fsBytes(t, rm); got < size0+120<<20 {
			t.Errorf("restored filesystem holds %d bytes, its source %d: want 128 MiB more", got, size0)
		}
		_, err := r.createVolume(t, volumeSpec{name: "pvc-too-small", mode: ModeShared, size: 300 << 20, source: fromSnapshot(snap.GetSnapshotId())})
		wantCode(t, err, codes.InvalidArgument, "restore to a smaller size")
	})

	t.Run("clone is a copy independent of its source", func(t *testing.T) {
		cv := r.mustCreate(t, volumeSpec{name: "pvc-clone", mode: ModeShared, size: 320 << 20, source: fromVolume(id)})
		cm := r.use(t, cv.GetVolumeId(), "node-b", mountCap("", ""))
		sameFile(t, filepath.Join(cm, "before"), before)
		sameFile(t, filepath.Join(cm, "after"), after)
		writeRandom(t, filepath.Join(cm, "after"), 4096)
		sameFile(t, filepath.Join(mnt, "after"), after)
	})

	t.Run("online expansion: controller then node", func(t *testing.T) {
		exp, err := r.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: id, CapacityRange: &csi.CapacityRange{RequiredBytes: 512 << 20}, VolumeCapability: mountCap("", "")})
		if err != nil || exp.GetCapacityBytes() != 512<<20 || !exp.GetNodeExpansionRequired() {
			t.Fatalf("ControllerExpandVolume = %v, %v", exp, err)
		}
		if got := fsBytes(t, mnt); got != size0 {
			t.Errorf("filesystem changed from %d to %d bytes before the node expansion", size0, got)
		}
		staging, _ := r.paths("node-a", id)
		nexp, err := r.nodes["node-a"].NodeExpandVolume(ctx, &csi.NodeExpandVolumeRequest{VolumeId: id, VolumePath: mnt, StagingTargetPath: staging, CapacityRange: &csi.CapacityRange{RequiredBytes: 512 << 20}, VolumeCapability: mountCap("", "")})
		if err != nil || nexp.GetCapacityBytes() != 512<<20 {
			t.Fatalf("NodeExpandVolume = %v, %v", nexp, err)
		}
		if got := fsBytes(t, mnt); got < size0+180<<20 {
			t.Errorf("filesystem holds %d bytes after expansion, %d before: want 192 MiB more", got, size0)
		}
		stats, err := r.nodes["node-a"].NodeGetVolumeStats(ctx, &csi.NodeGetVolumeStatsRequest{VolumeId: id, VolumePath: mnt})
		if err != nil || stats.GetUsage()[0].GetTotal() < size0+180<<20 {
			t.Errorf("NodeGetVolumeStats = %v, %v", stats, err)
		}
		sameFile(t, filepath.Join(mnt, "before"), before)
	})

	t.Run("moves to another node intact, attached to one at a time", func(t *testing.T) {
		_, err := r.tryUse(t, id, "node-b", mountCap("", ""))
		wantCode(t, err, codes.FailedPrecondition, "attaching a volume attached elsewhere")
		r.release(t, id, "node-a")
		mb := r.use(t, id, "node-b", mountCap("", ""))
		sameFile(t, filepath.Join(mb, "before"), before)
		sameFile(t, filepath.Join(mb, "after"), after)
		_, err = r.ctrl.DeleteVolume(ctx, &csi.DeleteVolumeRequest{VolumeId: id})
		wantCode(t, err, codes.FailedPrecondition, "deleting a volume in use")
	})
}

// ext4 grows offline: a restore to a larger size is grown before mounting.
func TestExt4RestoreGrows(t *testing.T) {
	r := newRig(t, nil)
	v := r.mustCreate(t, volumeSpec{name: "pvc-ext4", fs: "ext4", mode: ModeShared, size: 64 << 20})
	mnt := r.use(t, v.GetVolumeId(), "node-a", mountCap("ext4", ""))
	size0 := fsBytes(t, mnt)
	data := writeRandom(t, filepath.Join(mnt, "data"), 1<<20)
	snap := r.snapshot(t, "snap-ext4", v.GetVolumeId())
	rv := r.mustCreate(t, volumeSpec{name: "pvc-ext4-restored", fs: "ext4", mode: ModeShared, size: 96 << 20, source: fromSnapshot(snap.GetSnapshotId())})
	rm := r.use(t, rv.GetVolumeId(), "node-b", mountCap("ext4", ""))
	sameFile(t, filepath.Join(rm, "data"), data)
	if got := fsBytes(t, rm); got < size0+28<<20 {
		t.Errorf("restored ext4 holds %d bytes, its source %d: want 32 MiB more", got, size0)
	}
}

func TestBlockVolume(t *testing.T) {
	r := newRig(t, nil)
	v := r.mustCreate(t, volumeSpec{name: "pvc-block", mode: ModeShared, size: 32 << 20, block: true})
	dev := r.use(t, v.GetVolumeId(), "node-a", blockCap())
	data := make([]byte, 1<<20)
	rand.Read(data)
	writeAt(t, dev, data, 8<<20)
	snap := r.snapshot(t, "snap-block", v.GetVolumeId())
	writeAt(t, dev, make([]byte, 1<<20), 8<<20) // zeroes after the snapshot
	rv := r.mustCreate(t, volumeSpec{name: "pvc-block-restored", mode: ModeShared, size: 48 << 20, block: true, source: fromSnapshot(snap.GetSnapshotId())})
	rdev := r.use(t, rv.GetVolumeId(), "node-b", blockCap())
	if got := readAt(t, rdev, 1<<20, 8<<20); !bytes.Equal(got, data) {
		t.Error("restored block volume does not hold the snapshot's bytes")
	}
	if size := deviceSize(t, rdev); size != 48<<20 {
		t.Errorf("restored device is %d bytes, want %d", size, 48<<20)
	}
	exp, err := r.ctrl.ControllerExpandVolume(context.Background(), &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 40 << 20}})
	if err != nil || exp.GetNodeExpansionRequired() {
		t.Fatalf("ControllerExpandVolume = %v, %v", exp, err)
	}
	if size := deviceSize(t, dev); size != 40<<20 {
		t.Errorf("device is %d bytes after expansion, want %d", size, 40<<20)
	}
	_, err = r.createVolume(t, volumeSpec{name: "pvc-wrong-kind", mode: ModeShared, size: 64 << 20, source: fromSnapshot(snap.GetSnapshotId())})
	wantCode(t, err, codes.InvalidArgument, "restoring a block snapshot as a filesystem")
}

func writeAt(t *testing.T, path string, data []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
}

func readAt(t *testing.T, path string, n int, off int64) []byte {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_DIRECT, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, off); err != nil {
		t.Fatal(err)
	}
	return buf
}

func deviceSize(t *testing.T, path string) int64 {
	t.Helper()
	out, err := exec.Command("blockdev", "--getsize64", path).Output()
	if err != nil {
		t.Fatal(err)
	}
	var n int64
	for _, c := range strings.TrimSpace(string(out)) {
		n = n*10 + int64(c-'0')
	}
	return n
}

func TestLocalVolumeStaysOnItsNode(t *testing.T) {
	r := newRig(t, nil)
	_, err := r.createVolume(t, volumeSpec{name: "pvc-nowhere", mode: ModeLocal, size: 32 << 20})
	wantCode(t, err, codes.InvalidArgument, "a local volume without a node")
	v := r.mustCreate(t, volumeSpec{name: "pvc-local", mode: ModeLocal, size: 32 << 20, node: "node-a"})
	top := v.GetAccessibleTopology()
	if len(top) != 1 || top[0].GetSegments()[TopologyKey] != "node-a" {
		t.Fatalf("topology = %v, want node-a only", top)
	}
	_, err = r.tryUse(t, v.GetVolumeId(), "node-b", mountCap("", ""))
	wantCode(t, err, codes.FailedPrecondition, "attaching a local volume on another node")
	staging, _ := r.paths("node-b", v.GetVolumeId())
	_, err = r.nodes["node-b"].NodeStageVolume(context.Background(), &csi.NodeStageVolumeRequest{VolumeId: v.GetVolumeId(), StagingTargetPath: staging, VolumeCapability: mountCap("", "")})
	wantCode(t, err, codes.FailedPrecondition, "staging a local volume on another node")
	mnt := r.use(t, v.GetVolumeId(), "node-a", mountCap("", ""))
	writeRandom(t, filepath.Join(mnt, "x"), 4096)
}

func TestLimits(t *testing.T) {
	r := newRig(t, func(c *Config) { c.CapacityBytes = 256 << 20 })
	cap0, err := r.ctrl.GetCapacity(context.Background(), &csi.GetCapacityRequest{})
	if err != nil || cap0.GetAvailableCapacity() != 256<<20 {
		t.Fatalf("GetCapacity = %v, %v", cap0, err)
	}
	_, err = r.createVolume(t, volumeSpec{name: "pvc-huge", fs: "ext4", mode: ModeShared, size: 300 << 20})
	wantCode(t, err, codes.ResourceExhausted, "a volume beyond the capacity")
	var ids []string
	for _, n := range []string{"pvc-1", "pvc-2", "pvc-3", "pvc-4"} {
		ids = append(ids, r.mustCreate(t, volumeSpec{name: n, fs: "ext4", mode: ModeShared, size: 16 << 20}).GetVolumeId())
	}
	for _, id := range ids[:3] {
		r.use(t, id, "node-a", mountCap("ext4", ""))
	}
	_, err = r.tryUse(t, ids[3], "node-a", mountCap("ext4", ""))
	wantCode(t, err, codes.ResourceExhausted, "a fourth volume on a node of three")
}

// bad-snapshot: the restore holds data written after the snapshot.
func TestBadSnapshotModeRestoresCurrentData(t *testing.T) {
	r := newRig(t, nil)
	v := r.mustCreate(t, volumeSpec{name: "pvc-bad", mode: ModeBadSnapshot, size: 32 << 20})
	mnt := r.use(t, v.GetVolumeId(), "node-a", mountCap("", ""))
	writeRandom(t, filepath.Join(mnt, "before"), 4096)
	snap := r.snapshot(t, "snap-bad", v.GetVolumeId())
	after := writeRandom(t, filepath.Join(mnt, "after"), 4096)
	rv := r.mustCreate(t, volumeSpec{name: "pvc-bad-restored", mode: ModeBadSnapshot, size: 32 << 20, source: fromSnapshot(snap.GetSnapshotId())})
	rm := r.use(t, rv.GetVolumeId(), "node-b", mountCap("", ""))
	sameFile(t, filepath.Join(rm, "after"), after) // the broken promise, visible
}

// stuck-expand: the controller expansion never succeeds and the image
// keeps its size.
func TestStuckExpandModeNeverCompletes(t *testing.T) {
	testenv.Measures(t)
	r := newRig(t, func(c *Config) { c.StuckExpandWait = time.Second })
	v := r.mustCreate(t, volumeSpec{name: "pvc-stuck", mode: ModeStuckExpand, size: 32 << 20})
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err := r.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20}})
	wantCode(t, err, codes.Unavailable, "expanding without a deadline")
	ctx, cancel = context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = r.ctrl.ControllerExpandVolume(ctx, &csi.ControllerExpandVolumeRequest{VolumeId: v.GetVolumeId(), CapacityRange: &csi.CapacityRange{RequiredBytes: 64 << 20}})
	wantCode(t, err, codes.DeadlineExceeded, "expanding with a deadline")
	if fi, err := os.Stat(filepath.Join(r.state, "volumes", v.GetVolumeId()+".img")); err != nil || fi.Size() != v.GetCapacityBytes() {
		t.Errorf("image = %v, %v: want it still %d bytes", fi, err, v.GetCapacityBytes())
	}
}

// fsGroup: a non-root writer in the volume's group can write to a shared
// volume and not to a root-only one.
func TestRootOnlyModeIgnoresFSGroup(t *testing.T) {
	r := newRig(t, nil)
	for _, c := range []struct {
		mode      Mode
		wantWrite bool
	}{{ModeShared, true}, {ModeRootOnly, false}} {
		t.Run(string(c.mode), func(t *testing.T) {
			v := r.mustCreate(t, volumeSpec{name: "pvc-group-" + string(c.mode), mode: c.mode, size: 32 << 20})
			mnt := r.use(t, v.GetVolumeId(), "node-a", mountCap("", "2000"))
			// The writer must reach the mount point: open the test's
			// directories to others for the moment.
			for p := filepath.Dir(mnt); p != os.TempDir() && p != "/"; p = filepath.Dir(p) {
				if err := os.Chmod(p, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			out, err := exec.Command("setpriv", "--reuid=1000", "--regid=3000", "--groups=2000", "--",
				"sh", "-c", "echo hello > "+filepath.Join(mnt, "by-non-root")).CombinedOutput()
			if wrote := err == nil; wrote != c.wantWrite {
				t.Errorf("non-root write with fsGroup 2000: wrote=%v, want %v (%v %s)", wrote, c.wantWrite, err, out)
			}
		})
	}
}

// A node that died with a volume staged: once the controller has
// force-detached it, another node takes the volume over, but never while
// the dead node's mount is still there.
func TestDeadNodesVolumeMovesAfterForceDetach(t *testing.T) {
	r := newRig(t, nil)
	ctx := context.Background()
	v := r.mustCreate(t, volumeSpec{name: "pvc-failover", mode: ModeShared, size: 300 << 20})
	id := v.GetVolumeId()
	staging, target := r.paths("node-a", id)
	c := mountCap("", "")
	if _, err := r.ctrl.ControllerPublishVolume(ctx, &csi.ControllerPublishVolumeRequest{VolumeId: id, NodeId: "node-a", VolumeCapability: c}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nodes["node-a"].NodeStageVolume(ctx, &csi.NodeStageVolumeRequest{VolumeId: id, StagingTargetPath: staging, VolumeCapability: c}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.nodes["node-a"].NodePublishVolume(ctx, &csi.NodePublishVolumeRequest{VolumeId: id, StagingTargetPath: staging, TargetPath: target, VolumeCapability: c}); err != nil {
		t.Fatal(err)
	}
	data := writeRandom(t, filepath.Join(target, "records"), 64<<10)
	// The attach-detach controller's force detach of the dead node.
	if _, err := r.ctrl.ControllerUnpublishVolume(ctx, &csi.ControllerUnpublishVolumeRequest{VolumeId: id, NodeId: "node-a"}); err != nil {
		t.Fatal(err)
	}
	_, err := r.tryUse(t, id, "node-b", c)
	wantCode(t, err, codes.FailedPrecondition, "taking over a volume still mounted on the dead node")
	// The dead machine's mounts go with it.
	for _, p := range []string{target, staging} {
		if out, err := exec.Command("umount", p).CombinedOutput(); err != nil {
			t.Fatalf("umount %s: %v %s", p, err, out)
		}
	}
	mb := r.use(t, id, "node-b", c)
	sameFile(t, filepath.Join(mb, "records"), data)
	if _, err := os.Stat(filepath.Join(r.state, "nodes", "node-a", id+".json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("node-a's staging record is still there: %v", err)
	}
}
