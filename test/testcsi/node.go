package testcsi

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"golang.org/x/sys/unix"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

type node struct {
	csi.UnimplementedNodeServer
	d *Driver
}

func (n node) NodeGetInfo(context.Context, *csi.NodeGetInfoRequest) (*csi.NodeGetInfoResponse, error) {
	return &csi.NodeGetInfoResponse{
		NodeId:             n.d.cfg.NodeID,
		MaxVolumesPerNode:  n.d.cfg.MaxVolumesPerNode,
		AccessibleTopology: &csi.Topology{Segments: map[string]string{TopologyKey: n.d.cfg.NodeID}},
	}, nil
}

func (n node) NodeGetCapabilities(context.Context, *csi.NodeGetCapabilitiesRequest) (*csi.NodeGetCapabilitiesResponse, error) {
	var caps []*csi.NodeServiceCapability
	for _, t := range []csi.NodeServiceCapability_RPC_Type{
		csi.NodeServiceCapability_RPC_STAGE_UNSTAGE_VOLUME,
		csi.NodeServiceCapability_RPC_EXPAND_VOLUME,
		csi.NodeServiceCapability_RPC_GET_VOLUME_STATS,
		// The kubelet then hands fsGroup to the driver instead of
		// changing ownership itself: what lets root-only mode ignore it.
		csi.NodeServiceCapability_RPC_VOLUME_MOUNT_GROUP,
	} {
		caps = append(caps, &csi.NodeServiceCapability{Type: &csi.NodeServiceCapability_Rpc{Rpc: &csi.NodeServiceCapability_RPC{Type: t}}})
	}
	return &csi.NodeGetCapabilitiesResponse{Capabilities: caps}, nil
}

// volumeFor reads a volume's record, refusing one this node may not use;
// without a record, the static netfs volume attrs (the PV's volume
// attributes) describe, if any.
func (n node) volumeFor(id string, attrs map[string]string) (volume, error) {
	v, err := n.d.state.volume(id)
	if errors.Is(err, fs.ErrNotExist) {
		if sv, ok, err := staticNetfs(id, attrs); ok || err != nil {
			return sv, err
		}
		return v, status.Errorf(codes.NotFound, "volume %q not found", id)
	}
	if err != nil {
		return v, errStatus(err, "read volume")
	}
	if v.Mode == ModeLocal && v.Node != n.d.cfg.NodeID {
		return v, status.Errorf(codes.FailedPrecondition, "local volume %s lives on node %s, not %s", v.ID, v.Node, n.d.cfg.NodeID)
	}
	return v, nil
}

func (n node) NodeStageVolume(ctx context.Context, req *csi.NodeStageVolumeRequest) (*csi.NodeStageVolumeResponse, error) {
	d := n.d
	if req.GetVolumeId() == "" || req.GetStagingTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume ID, staging path or capability missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, err := n.volumeFor(req.GetVolumeId(), req.GetVolumeContext())
	if err != nil {
		return nil, err
	}
	if (req.GetVolumeCapability().GetBlock() != nil) != v.Block {
		return nil, status.Errorf(codes.InvalidArgument, "volume %s is block=%v", v.ID, v.Block)
	}
	if v.Mode.dirs() {
		mount := d.disk.mountShare
		if v.Mode == ModeCephFS {
			mount = d.disk.mountCephFS
		}
		if err := mount(ctx, v, req.GetStagingTargetPath(), req.GetVolumeCapability().GetMount().GetMountFlags()); err != nil {
			return nil, err
		}
		return &csi.NodeStageVolumeResponse{}, applyGroup(v, req.GetStagingTargetPath(), req.GetVolumeCapability().GetMount().GetVolumeMountGroup())
	}
	st, err := n.staged(ctx, v)
	if err != nil {
		return nil, err
	}
	if st.Device == "" {
		if st, err = n.attach(ctx, v, req.GetStagingTargetPath()); err != nil {
			return nil, err
		}
	}
	if v.Block {
		return &csi.NodeStageVolumeResponse{}, nil
	}
	if err := n.mountStaged(ctx, v, st, req.GetVolumeCapability().GetMount().GetMountFlags()); err != nil {
		return nil, err
	}
	if err := applyGroup(v, req.GetStagingTargetPath(), req.GetVolumeCapability().GetMount().GetVolumeMountGroup()); err != nil {
		return nil, err
	}
	return &csi.NodeStageVolumeResponse{}, nil
}

// staged returns this node's staging record of v (Device empty when there
// is none). One image must never carry two mounted filesystems, so a
// volume staged on another node is refused while the controller still has
// it attached there; once detached (a dead node's volume force-detached),
// the stale loop device is released here, as network storage fences an
// old client, unless something still has it mounted.
func (n node) staged(ctx context.Context, v volume) (staging, error) {
	d := n.d
	all, err := d.state.stagings(v.ID)
	if err != nil {
		return staging{}, errStatus(err, "read staging records")
	}
	devs, err := d.disk.loopDevices(ctx, d.state.volumeImage(v.ID))
	if err != nil {
		return staging{}, errStatus(err, "loop devices")
	}
	mine := staging{}
	for _, st := range all {
		if st.Node == d.cfg.NodeID {
			if slices.Contains(devs, st.Device) {
				mine = st
			}
			continue
		}
		if slices.Contains(v.Published, st.Node) {
			return staging{}, status.Errorf(codes.FailedPrecondition, "volume %s is staged on node %s", v.ID, st.Node)
		}
		if slices.Contains(devs, st.Device) {
			if mps, err := mountPoints(st.Device); err != nil || len(mps) > 0 {
				if err == nil {
					err = status.Errorf(codes.FailedPrecondition, "volume %s is detached from node %s but still mounted there at %v", v.ID, st.Node, mps)
				}
				return staging{}, errStatus(err, "read mounts")
			}
			if err := d.disk.detach(ctx, st.Device); err != nil {
				return staging{}, errStatus(err, "release %s of node %s", st.Device, st.Node)
			}
		}
		if err := removeIfExists(d.state.stagingFile(st.Node, v.ID)); err != nil {
			return staging{}, errStatus(err, "remove node %s's staging record", st.Node)
		}
	}
	return mine, nil
}

// attach makes v's image a loop device on this node and records it,
// within the node's volume limit.
func (n node) attach(ctx context.Context, v volume, path string) (staging, error) {
	d := n.d
	mine, err := d.state.nodeStagings(d.cfg.NodeID)
	if err != nil {
		return staging{}, errStatus(err, "read staging records")
	}
	mine = slices.DeleteFunc(mine, func(st staging) bool { return st.VolumeID == v.ID })
	if int64(len(mine)) >= d.cfg.MaxVolumesPerNode {
		return staging{}, status.Errorf(codes.ResourceExhausted, "node %s already holds %d volumes", d.cfg.NodeID, len(mine))
	}
	dev, err := d.disk.attach(ctx, d.state.volumeImage(v.ID))
	if err != nil {
		return staging{}, errStatus(err, "attach volume %s", v.ID)
	}
	st := staging{VolumeID: v.ID, Node: d.cfg.NodeID, Device: dev, Path: path}
	if err := writeJSON(d.state.stagingFile(d.cfg.NodeID, v.ID), st); err != nil {
		d.disk.detach(context.WithoutCancel(ctx), dev)
		return staging{}, errStatus(err, "record staging")
	}
	return st, nil
}

// mountStaged formats a blank device, mounts it at the staging path and
// grows the filesystem to the device (a restore or clone to a larger size).
func (n node) mountStaged(ctx context.Context, v volume, st staging, flags []string) error {
	d := n.d
	mounted, err := isMountPoint(st.Path)
	if err != nil || mounted {
		return errStatus(err, "read mounts")
	}
	fsType, err := detectFS(st.Device)
	if err != nil {
		return errStatus(err, "read %s", st.Device)
	}
	if fsType == "" {
		if err := d.disk.mkfs(ctx, v.FsType, st.Device); err != nil {
			return errStatus(err, "format %s", st.Device)
		}
		fsType = v.FsType
	}
	if err := d.disk.growOffline(ctx, fsType, st.Device); err != nil {
		return errStatus(err, "grow filesystem on %s", st.Device)
	}
	if err := os.MkdirAll(st.Path, 0o750); err != nil {
		return errStatus(err, "staging path")
	}
	if err := d.disk.mount(ctx, fsType, st.Device, st.Path, flags); err != nil {
		return errStatus(err, "mount %s", st.Device)
	}
	if fsType == fsXFS {
		return errStatus(d.disk.growOnline(ctx, fsType, st.Device, st.Path), "grow filesystem on %s", st.Device)
	}
	return nil
}

// applyGroup gives group gid the volume's files, as the kubelet does for
// fsGroup: root-only volumes ignore it (their broken promise).
func applyGroup(v volume, root, group string) error {
	if group == "" || v.Mode == ModeRootOnly {
		return nil
	}
	gid, err := strconv.Atoi(group)
	if err != nil {
		return status.Errorf(codes.InvalidArgument, "volume mount group %q is not a number", group)
	}
	err = filepath.WalkDir(root, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := e.Info()
		if err != nil {
			return err
		}
		if err := os.Lchown(p, -1, gid); err != nil {
			return err
		}
		if e.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		mode := info.Mode().Perm() | 0o060
		if e.IsDir() {
			mode |= 0o010 | fs.ModeSetgid
		}
		return os.Chmod(p, mode)
	})
	return errStatus(err, "apply group %d", gid)
}

func (n node) NodeUnstageVolume(ctx context.Context, req *csi.NodeUnstageVolumeRequest) (*csi.NodeUnstageVolumeResponse, error) {
	d := n.d
	if req.GetVolumeId() == "" || req.GetStagingTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID or staging path missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.disk.unmount(ctx, req.GetStagingTargetPath()); err != nil {
		return nil, errStatus(err, "unmount")
	}
	if idFor(req.GetVolumeId()) != req.GetVolumeId() {
		return &csi.NodeUnstageVolumeResponse{}, nil
	}
	if err := n.release(ctx, req.GetVolumeId()); err != nil {
		return nil, err
	}
	return &csi.NodeUnstageVolumeResponse{}, nil
}

// release detaches this node's loop device of volume id and forgets it.
func (n node) release(ctx context.Context, id string) error {
	d := n.d
	file := d.state.stagingFile(d.cfg.NodeID, id)
	var st staging
	err := readJSON(file, &st)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errStatus(err, "read staging record")
	}
	devs, err := d.disk.loopDevices(ctx, d.state.volumeImage(id))
	if err != nil {
		return errStatus(err, "loop devices")
	}
	if slices.Contains(devs, st.Device) {
		if mps, err := mountPoints(st.Device); err != nil || len(mps) > 0 {
			if err == nil {
				err = status.Errorf(codes.FailedPrecondition, "%s is still mounted at %v", st.Device, mps)
			}
			return errStatus(err, "read mounts")
		}
		if err := d.disk.detach(ctx, st.Device); err != nil {
			return errStatus(err, "detach %s", st.Device)
		}
	}
	return errStatus(removeIfExists(file), "remove staging record")
}

func removeIfExists(path string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

func (n node) NodePublishVolume(ctx context.Context, req *csi.NodePublishVolumeRequest) (*csi.NodePublishVolumeResponse, error) {
	d := n.d
	target := req.GetTargetPath()
	if req.GetVolumeId() == "" || target == "" || req.GetStagingTargetPath() == "" || req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume ID, target path, staging path or capability missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, err := n.volumeFor(req.GetVolumeId(), req.GetVolumeContext())
	if err != nil {
		return nil, err
	}
	if mounted, err := isMountPoint(target); err != nil || mounted {
		return &csi.NodePublishVolumeResponse{}, errStatus(err, "read mounts")
	}
	if v.Block {
		var st staging
		if err := readJSON(d.state.stagingFile(d.cfg.NodeID, v.ID), &st); err != nil {
			return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged on node %s: %v", v.ID, d.cfg.NodeID, err)
		}
		if err := os.MkdirAll(filepath.Dir(target), 0o750); err != nil {
			return nil, errStatus(err, "target directory")
		}
		f, err := os.OpenFile(target, os.O_CREATE|os.O_RDONLY, 0o660)
		if err != nil {
			return nil, errStatus(err, "target file")
		}
		f.Close()
		return &csi.NodePublishVolumeResponse{}, errStatus(d.disk.bindMount(ctx, st.Device, target, req.GetReadonly()), "bind %s", st.Device)
	}
	if mounted, err := isMountPoint(req.GetStagingTargetPath()); err != nil || !mounted {
		if err == nil {
			err = status.Errorf(codes.FailedPrecondition, "volume %s is not staged at %s", v.ID, req.GetStagingTargetPath())
		}
		return nil, errStatus(err, "read mounts")
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return nil, errStatus(err, "target directory")
	}
	publish := d.disk.bindMount
	if v.Mode == ModeNoFsync {
		publish = d.disk.volatileMount
	}
	if err := publish(ctx, req.GetStagingTargetPath(), target, req.GetReadonly()); err != nil {
		return nil, errStatus(err, "publish mount")
	}
	if req.GetReadonly() {
		return &csi.NodePublishVolumeResponse{}, nil
	}
	return &csi.NodePublishVolumeResponse{}, applyGroup(v, target, req.GetVolumeCapability().GetMount().GetVolumeMountGroup())
}

func (n node) NodeUnpublishVolume(ctx context.Context, req *csi.NodeUnpublishVolumeRequest) (*csi.NodeUnpublishVolumeResponse, error) {
	if req.GetVolumeId() == "" || req.GetTargetPath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID or target path missing")
	}
	n.d.mu.Lock()
	defer n.d.mu.Unlock()
	if err := n.d.disk.unmount(ctx, req.GetTargetPath()); err != nil {
		return nil, errStatus(err, "unmount")
	}
	return &csi.NodeUnpublishVolumeResponse{}, errStatus(removeIfExists(req.GetTargetPath()), "remove target")
}

func (n node) NodeGetVolumeStats(ctx context.Context, req *csi.NodeGetVolumeStatsRequest) (*csi.NodeGetVolumeStatsResponse, error) {
	p := req.GetVolumePath()
	if req.GetVolumeId() == "" || p == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID or path missing")
	}
	fi, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, status.Errorf(codes.NotFound, "%s does not exist", p)
	}
	if err != nil {
		return nil, errStatus(err, "stat")
	}
	if !fi.IsDir() { // a block volume's device
		f, err := os.Open(p)
		if err != nil {
			return nil, errStatus(err, "open")
		}
		defer f.Close()
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return nil, errStatus(err, "size")
		}
		return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{{Unit: csi.VolumeUsage_BYTES, Total: size}}}, nil
	}
	var sfs unix.Statfs_t
	if err := unix.Statfs(p, &sfs); err != nil {
		return nil, errStatus(err, "statfs")
	}
	bs := int64(sfs.Bsize)
	return &csi.NodeGetVolumeStatsResponse{Usage: []*csi.VolumeUsage{
		{Unit: csi.VolumeUsage_BYTES, Total: int64(sfs.Blocks) * bs, Available: int64(sfs.Bavail) * bs, Used: int64(sfs.Blocks-sfs.Bfree) * bs},
		{Unit: csi.VolumeUsage_INODES, Total: int64(sfs.Files), Available: int64(sfs.Ffree), Used: int64(sfs.Files - sfs.Ffree)},
	}}, nil
}

func (n node) NodeExpandVolume(ctx context.Context, req *csi.NodeExpandVolumeRequest) (*csi.NodeExpandVolumeResponse, error) {
	d := n.d
	if req.GetVolumeId() == "" || req.GetVolumePath() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID or path missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, err := n.volumeFor(req.GetVolumeId(), nil)
	if err != nil {
		return nil, err
	}
	if v.Mode.dirs() {
		return &csi.NodeExpandVolumeResponse{CapacityBytes: v.SizeBytes}, nil
	}
	var st staging
	if err := readJSON(d.state.stagingFile(d.cfg.NodeID, v.ID), &st); err != nil {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is not staged on node %s: %v", v.ID, d.cfg.NodeID, err)
	}
	if err := d.disk.refresh(ctx, st.Device); err != nil {
		return nil, errStatus(err, "refresh %s", st.Device)
	}
	if !v.Block {
		fsType, err := detectFS(st.Device)
		if err != nil {
			return nil, errStatus(err, "read %s", st.Device)
		}
		if err := d.disk.growOnline(ctx, fsType, st.Device, st.Path); err != nil {
			return nil, errStatus(err, "grow filesystem on %s", st.Device)
		}
	}
	return &csi.NodeExpandVolumeResponse{CapacityBytes: v.SizeBytes}, nil
}
