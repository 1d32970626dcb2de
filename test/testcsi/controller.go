package testcsi

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/timestamppb"
)

const (
	mib              = 1 << 20
	defaultSizeBytes = 1 << 30
	// minBlockBytes is the smallest raw block volume.
	minBlockBytes = mib
)

type controller struct {
	csi.UnimplementedControllerServer
	d *Driver
}

func (c controller) ControllerGetCapabilities(context.Context, *csi.ControllerGetCapabilitiesRequest) (*csi.ControllerGetCapabilitiesResponse, error) {
	var caps []*csi.ControllerServiceCapability
	for _, t := range []csi.ControllerServiceCapability_RPC_Type{
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_VOLUME,
		csi.ControllerServiceCapability_RPC_PUBLISH_UNPUBLISH_VOLUME,
		csi.ControllerServiceCapability_RPC_CREATE_DELETE_SNAPSHOT,
		csi.ControllerServiceCapability_RPC_LIST_SNAPSHOTS,
		csi.ControllerServiceCapability_RPC_CLONE_VOLUME,
		csi.ControllerServiceCapability_RPC_EXPAND_VOLUME,
		csi.ControllerServiceCapability_RPC_GET_CAPACITY,
	} {
		caps = append(caps, &csi.ControllerServiceCapability{Type: &csi.ControllerServiceCapability_Rpc{Rpc: &csi.ControllerServiceCapability_RPC{Type: t}}})
	}
	return &csi.ControllerGetCapabilitiesResponse{Capabilities: caps}, nil
}

// checkCapabilities accepts single-node access, block or mount (xfs, the
// default, or ext4); it returns the filesystem, "" for a raw block volume.
// One filesystem cannot be mounted on two nodes at once, so multi-node
// access is refused.
func checkCapabilities(caps []*csi.VolumeCapability) (fsType string, err error) {
	if len(caps) == 0 {
		return "", status.Error(codes.InvalidArgument, "no volume capabilities")
	}
	var block bool
	for i, c := range caps {
		switch c.GetAccessMode().GetMode() {
		case csi.VolumeCapability_AccessMode_SINGLE_NODE_WRITER,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_READER_ONLY,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_SINGLE_WRITER,
			csi.VolumeCapability_AccessMode_SINGLE_NODE_MULTI_WRITER:
		default:
			return "", status.Errorf(codes.InvalidArgument, "access mode %v is not supported: volumes attach to one node at a time", c.GetAccessMode().GetMode())
		}
		isBlock := c.GetBlock() != nil
		if !isBlock && c.GetMount() == nil {
			return "", status.Error(codes.InvalidArgument, "capability is neither block nor mount")
		}
		if i > 0 && isBlock != block {
			return "", status.Error(codes.InvalidArgument, "capabilities mix block and mount")
		}
		block = isBlock
		if isBlock {
			continue
		}
		fs := c.GetMount().GetFsType()
		if fs == "" {
			fs = fsXFS
		}
		if _, ok := minFSBytes[fs]; !ok {
			return "", status.Errorf(codes.InvalidArgument, "filesystem %q is not supported (xfs or ext4)", fs)
		}
		if fsType != "" && fs != fsType {
			return "", status.Error(codes.InvalidArgument, "capabilities name two filesystems")
		}
		fsType = fs
	}
	return fsType, nil
}

// capabilities checks a volume's capabilities for its mode and returns
// its filesystem ("" for a raw block volume) and least size.
func (c controller) capabilities(mode Mode, caps []*csi.VolumeCapability) (fsType string, minBytes int64, err error) {
	if mode.dirs() {
		return fsOf(mode), mib, netfsCapabilities(mode, caps)
	}
	if fsType, err = checkCapabilities(caps); err != nil || fsType == "" {
		return fsType, minBlockBytes, err
	}
	return fsType, minFSBytes[fsType], nil
}

// sizeFor picks a volume's size from its capacity range: the required
// bytes (or 1 GiB) rounded up to a MiB, at least minBytes.
func sizeFor(r *csi.CapacityRange, minBytes int64) (int64, error) {
	size := r.GetRequiredBytes()
	if size == 0 {
		size = defaultSizeBytes
		if l := r.GetLimitBytes(); l > 0 && l < size {
			size = l
		}
	}
	size = max(size, minBytes)
	size = (size + mib - 1) / mib * mib
	if l := r.GetLimitBytes(); l > 0 && size > l {
		return 0, status.Errorf(codes.OutOfRange, "capacity range %d..%d bytes leaves no size of whole MiB of at least %d bytes", r.GetRequiredBytes(), l, minBytes)
	}
	return size, nil
}

// localNode returns the node a local volume is made for: the first
// preferred, else the first requisite topology's node.
func localNode(req *csi.TopologyRequirement) string {
	for _, list := range [][]*csi.Topology{req.GetPreferred(), req.GetRequisite()} {
		for _, t := range list {
			if n := t.GetSegments()[TopologyKey]; n != "" {
				return n
			}
		}
	}
	return ""
}

func (c controller) CreateVolume(ctx context.Context, req *csi.CreateVolumeRequest) (*csi.CreateVolumeResponse, error) {
	d := c.d
	if req.GetName() == "" || idFor(req.GetName()) == "" {
		return nil, status.Error(codes.InvalidArgument, "volume name missing")
	}
	mode := d.cfg.DefaultMode
	if m, ok := req.GetParameters()[ModeParameter]; ok {
		var err error
		if mode, err = ParseMode(m); err != nil {
			return nil, status.Error(codes.InvalidArgument, err.Error())
		}
	}
	for k := range req.GetParameters() {
		if !slices.Contains(classParameters, k) && !strings.HasPrefix(k, "csi.storage.k8s.io/") {
			return nil, status.Errorf(codes.InvalidArgument, "unknown parameter %q (only %q)", k, classParameters)
		}
	}
	conf, cephPath, cephShare, err := cephfsParams(mode, req.GetParameters())
	if err != nil {
		return nil, err
	}
	var server, share string
	if mode == ModeCephFS {
		share = cephShare
	} else if server, share, err = netfsShare(mode, req.GetParameters()); err != nil {
		return nil, err
	}
	fsType, minBytes, err := c.capabilities(mode, req.GetVolumeCapabilities())
	if err != nil {
		return nil, err
	}
	block := fsType == ""
	size, err := sizeFor(req.GetCapacityRange(), minBytes)
	if err != nil {
		return nil, err
	}
	v := volume{ID: idFor(req.GetName()), Name: req.GetName(), Mode: mode, SizeBytes: size, Block: block, FsType: fsType, Created: time.Now().UTC(),
		Server: server, Share: share, CephConf: conf, CephPath: cephPath}
	if mode.dirs() && req.GetVolumeContentSource() != nil {
		return nil, status.Errorf(codes.InvalidArgument, "%s volumes from a snapshot or a volume are not supported", mode)
	}
	if mode == ModeLocal {
		if v.Node = localNode(req.GetAccessibilityRequirements()); v.Node == "" {
			return nil, status.Errorf(codes.InvalidArgument, "a local volume needs a node: no topology segment %s in the request", TopologyKey)
		}
	}
	switch src := req.GetVolumeContentSource(); {
	case src.GetSnapshot() != nil:
		v.Source = "snapshot/" + src.GetSnapshot().GetSnapshotId()
	case src.GetVolume() != nil:
		v.Source = "volume/" + src.GetVolume().GetVolumeId()
	}

	d.mu.Lock()
	defer d.mu.Unlock()
	if old, err := d.state.volume(v.ID); err == nil {
		if old.SizeBytes < size || old.Block != block || old.Mode != mode || old.Source != v.Source {
			return nil, status.Errorf(codes.AlreadyExists, "volume %s exists with other parameters", v.ID)
		}
		return &csi.CreateVolumeResponse{Volume: c.response(old, req.GetVolumeContentSource())}, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, errStatus(err, "read volume %s", v.ID)
	}
	if err := c.checkCapacity(size); err != nil {
		return nil, err
	}
	if err := c.fill(ctx, &v); err != nil {
		return nil, err
	}
	if err := d.state.putVolume(v); err != nil {
		d.state.removeVolume(v.ID)
		return nil, errStatus(err, "record volume %s", v.ID)
	}
	return &csi.CreateVolumeResponse{Volume: c.response(v, req.GetVolumeContentSource())}, nil
}

// fill makes v's image: blank, or a copy of its source grown to v's size.
func (c controller) fill(ctx context.Context, v *volume) error {
	d := c.d
	if v.Mode.dirs() {
		return makeNetfsDir(*v)
	}
	img := d.state.volumeImage(v.ID)
	kind, id, _ := strings.Cut(v.Source, "/")
	var from string
	switch kind {
	case "":
		return errStatus(createImage(img, v.SizeBytes), "create image")
	case "snapshot":
		sn, err := d.state.snapshot(id)
		if err := fits(v, "snapshot", id, sn.Block, sn.SizeBytes, err); err != nil {
			return err
		}
		from = d.state.snapshotImage(id)
		v.FsType = sn.FsType
		if src, err := d.state.volume(sn.SourceVolume); err == nil && src.Mode == ModeBadSnapshot {
			// The broken promise: the source's data as it is now.
			from = d.state.volumeImage(src.ID)
		}
	case "volume":
		src, err := d.state.volume(id)
		if err := fits(v, "source volume", id, src.Block, src.SizeBytes, err); err != nil {
			return err
		}
		from = d.state.volumeImage(id)
		v.FsType = src.FsType
	}
	if err := d.disk.copyImage(ctx, from, img); err != nil {
		return errStatus(err, "copy %s", v.Source)
	}
	if err := growImage(img, v.SizeBytes); err != nil {
		d.state.removeVolume(v.ID)
		return errStatus(err, "grow image")
	}
	return nil
}

// fits refuses a source (a snapshot or a volume, read with readErr) that
// is missing or does not fit v: another mode, or larger than v.
func fits(v *volume, what, id string, block bool, size int64, readErr error) error {
	if readErr != nil {
		return status.Errorf(codes.NotFound, "%s %q: %v", what, id, readErr)
	}
	if block != v.Block || size > v.SizeBytes {
		return status.Errorf(codes.InvalidArgument, "%s %s (%d bytes, block %v) does not fit a volume of %d bytes, block %v", what, id, size, block, v.SizeBytes, v.Block)
	}
	return nil
}

func (c controller) response(v volume, src *csi.VolumeContentSource) *csi.Volume {
	out := &csi.Volume{
		VolumeId:      v.ID,
		CapacityBytes: v.SizeBytes,
		VolumeContext: map[string]string{ModeParameter: string(v.Mode)},
		ContentSource: src,
	}
	if v.Server != "" {
		// As csi-driver-nfs does: the PV names its server (storbench reads
		// it to find the node or NAS that serves the data) and share.
		out.VolumeContext[ServerParameter], out.VolumeContext[ShareParameter] = v.Server, v.Share
	}
	if v.CephPath != "" {
		// what each node's ceph-fuse mounts: no server (Ceph's placement
		// labels come from the class's annotation, not a serving node)
		out.VolumeContext[CephConfParameter], out.VolumeContext[CephPathParameter] = v.CephConf, cephfsRoot(v)
	}
	if v.Node != "" {
		out.AccessibleTopology = []*csi.Topology{{Segments: map[string]string{TopologyKey: v.Node}}}
	}
	return out
}

// checkCapacity refuses a volume that would take the driver past its
// capacity; callers hold d.mu.
func (c controller) checkCapacity(add int64) error {
	free, err := c.free()
	if err != nil {
		return err
	}
	if add > free {
		return status.Errorf(codes.ResourceExhausted, "%d bytes requested, %d bytes free of %d", add, free, c.d.cfg.CapacityBytes)
	}
	return nil
}

func (c controller) free() (int64, error) {
	vols, err := c.d.state.volumes()
	if err != nil {
		return 0, errStatus(err, "list volumes")
	}
	free := c.d.cfg.CapacityBytes
	for _, v := range vols {
		free -= v.SizeBytes
	}
	return max(free, 0), nil
}

// lockExisting checks a request's volume ID, takes the driver's lock
// (unlock releases it, also on error) and reads the volume; ok is false
// for one already gone, which deletes and detaches treat as done.
func (c controller) lockExisting(id string) (v volume, ok bool, unlock func(), err error) {
	if id == "" {
		return v, false, func() {}, status.Error(codes.InvalidArgument, "volume ID missing")
	}
	c.d.mu.Lock()
	v, ok, err = c.d.state.existingVolume(id)
	return v, ok, c.d.mu.Unlock, err
}

func (c controller) DeleteVolume(ctx context.Context, req *csi.DeleteVolumeRequest) (*csi.DeleteVolumeResponse, error) {
	d := c.d
	v, ok, unlock, err := c.lockExisting(req.GetVolumeId())
	defer unlock()
	if !ok || err != nil {
		return &csi.DeleteVolumeResponse{}, err
	}
	if v.Mode.dirs() {
		return &csi.DeleteVolumeResponse{}, c.deleteNetfs(v)
	}
	devs, err := d.disk.loopDevices(ctx, d.state.volumeImage(v.ID))
	if err != nil {
		return nil, errStatus(err, "loop devices")
	}
	if len(devs) > 0 || len(v.Published) > 0 {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is in use (attached to %v, loop devices %v)", v.ID, v.Published, devs)
	}
	if err := d.state.removeVolume(v.ID); err != nil {
		return nil, errStatus(err, "remove volume")
	}
	return &csi.DeleteVolumeResponse{}, nil
}

func (c controller) ControllerPublishVolume(ctx context.Context, req *csi.ControllerPublishVolumeRequest) (*csi.ControllerPublishVolumeResponse, error) {
	d := c.d
	if req.GetVolumeId() == "" || req.GetNodeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume or node ID missing")
	}
	if req.GetVolumeCapability() == nil {
		return nil, status.Error(codes.InvalidArgument, "volume capability missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	v, err := d.state.volume(req.GetVolumeId())
	if errors.Is(err, fs.ErrNotExist) {
		// a static PV's netfs volume: every node mounts the share itself,
		// nothing to attach or record
		if _, ok, serr := staticNetfs(req.GetVolumeId(), req.GetVolumeContext()); ok || serr != nil {
			return &csi.ControllerPublishVolumeResponse{}, serr
		}
	}
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q: %v", req.GetVolumeId(), err)
	}
	if v.Mode == ModeLocal && v.Node != req.GetNodeId() {
		return nil, status.Errorf(codes.FailedPrecondition, "local volume %s lives on node %s, not %s", v.ID, v.Node, req.GetNodeId())
	}
	ctxOut := map[string]string{"image": d.state.volumeImage(v.ID)}
	if slices.Contains(v.Published, req.GetNodeId()) {
		return &csi.ControllerPublishVolumeResponse{PublishContext: ctxOut}, nil
	}
	if len(v.Published) > 0 && !v.Mode.dirs() {
		return nil, status.Errorf(codes.FailedPrecondition, "volume %s is attached to node %s", v.ID, v.Published[0])
	}
	v.Published = append(v.Published, req.GetNodeId())
	if err := d.state.putVolume(v); err != nil {
		return nil, errStatus(err, "record attachment")
	}
	return &csi.ControllerPublishVolumeResponse{PublishContext: ctxOut}, nil
}

func (c controller) ControllerUnpublishVolume(ctx context.Context, req *csi.ControllerUnpublishVolumeRequest) (*csi.ControllerUnpublishVolumeResponse, error) {
	d := c.d
	v, ok, unlock, err := c.lockExisting(req.GetVolumeId())
	defer unlock()
	if !ok || err != nil {
		return &csi.ControllerUnpublishVolumeResponse{}, err
	}
	kept := slices.DeleteFunc(slices.Clone(v.Published), func(n string) bool {
		return req.GetNodeId() == "" || n == req.GetNodeId()
	})
	if len(kept) != len(v.Published) {
		v.Published = kept
		if err := d.state.putVolume(v); err != nil {
			return nil, errStatus(err, "record detachment")
		}
	}
	return &csi.ControllerUnpublishVolumeResponse{}, nil
}

func (c controller) ValidateVolumeCapabilities(ctx context.Context, req *csi.ValidateVolumeCapabilitiesRequest) (*csi.ValidateVolumeCapabilitiesResponse, error) {
	v, err := c.d.state.volume(req.GetVolumeId())
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q: %v", req.GetVolumeId(), err)
	}
	fsType, _, err := c.capabilities(v.Mode, req.GetVolumeCapabilities())
	if err != nil || (fsType == "") != v.Block {
		msg := "block and mount differ from the volume's"
		if err != nil {
			msg = err.Error()
		}
		return &csi.ValidateVolumeCapabilitiesResponse{Message: msg}, nil
	}
	return &csi.ValidateVolumeCapabilitiesResponse{Confirmed: &csi.ValidateVolumeCapabilitiesResponse_Confirmed{
		VolumeContext: req.GetVolumeContext(), VolumeCapabilities: req.GetVolumeCapabilities(), Parameters: req.GetParameters(),
	}}, nil
}

func (c controller) GetCapacity(ctx context.Context, req *csi.GetCapacityRequest) (*csi.GetCapacityResponse, error) {
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	free, err := c.free()
	if err != nil {
		return nil, err
	}
	return &csi.GetCapacityResponse{AvailableCapacity: free}, nil
}

func (c controller) CreateSnapshot(ctx context.Context, req *csi.CreateSnapshotRequest) (*csi.CreateSnapshotResponse, error) {
	d := c.d
	if req.GetName() == "" || idFor(req.GetName()) == "" || req.GetSourceVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot name or source volume missing")
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	id := idFor(req.GetName())
	if old, err := d.state.snapshot(id); err == nil {
		if old.SourceVolume != req.GetSourceVolumeId() {
			return nil, status.Errorf(codes.AlreadyExists, "snapshot %s exists for volume %s", id, old.SourceVolume)
		}
		return &csi.CreateSnapshotResponse{Snapshot: snapshotResponse(old)}, nil
	}
	v, err := d.state.volume(req.GetSourceVolumeId())
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q: %v", req.GetSourceVolumeId(), err)
	}
	if v.Mode.dirs() {
		return nil, status.Errorf(codes.InvalidArgument, "snapshots of %s volume %s are not supported", v.Mode, v.ID)
	}
	sn := snapshot{ID: id, Name: req.GetName(), SourceVolume: v.ID, SizeBytes: v.SizeBytes, Block: v.Block, FsType: v.FsType, Created: time.Now().UTC()}
	if err := d.disk.copyImage(ctx, d.state.volumeImage(v.ID), d.state.snapshotImage(id)); err != nil {
		return nil, errStatus(err, "copy volume %s", v.ID)
	}
	if err := d.state.putSnapshot(sn); err != nil {
		d.state.removeSnapshot(id)
		return nil, errStatus(err, "record snapshot")
	}
	return &csi.CreateSnapshotResponse{Snapshot: snapshotResponse(sn)}, nil
}

func snapshotResponse(sn snapshot) *csi.Snapshot {
	return &csi.Snapshot{
		SnapshotId:     sn.ID,
		SourceVolumeId: sn.SourceVolume,
		SizeBytes:      sn.SizeBytes,
		CreationTime:   timestamppb.New(sn.Created),
		ReadyToUse:     true,
	}
}

func (c controller) DeleteSnapshot(ctx context.Context, req *csi.DeleteSnapshotRequest) (*csi.DeleteSnapshotResponse, error) {
	if req.GetSnapshotId() == "" {
		return nil, status.Error(codes.InvalidArgument, "snapshot ID missing")
	}
	c.d.mu.Lock()
	defer c.d.mu.Unlock()
	if idFor(req.GetSnapshotId()) != req.GetSnapshotId() {
		return &csi.DeleteSnapshotResponse{}, nil
	}
	if err := c.d.state.removeSnapshot(req.GetSnapshotId()); err != nil {
		return nil, errStatus(err, "remove snapshot")
	}
	return &csi.DeleteSnapshotResponse{}, nil
}

func (c controller) ListSnapshots(ctx context.Context, req *csi.ListSnapshotsRequest) (*csi.ListSnapshotsResponse, error) {
	all, err := c.d.state.snapshots()
	if err != nil {
		return nil, errStatus(err, "list snapshots")
	}
	var out []*csi.ListSnapshotsResponse_Entry
	for _, sn := range all {
		if (req.GetSnapshotId() != "" && sn.ID != req.GetSnapshotId()) ||
			(req.GetSourceVolumeId() != "" && sn.SourceVolume != req.GetSourceVolumeId()) {
			continue
		}
		out = append(out, &csi.ListSnapshotsResponse_Entry{Snapshot: snapshotResponse(sn)})
	}
	return &csi.ListSnapshotsResponse{Entries: out}, nil
}

func (c controller) ControllerExpandVolume(ctx context.Context, req *csi.ControllerExpandVolumeRequest) (*csi.ControllerExpandVolumeResponse, error) {
	d := c.d
	if req.GetVolumeId() == "" {
		return nil, status.Error(codes.InvalidArgument, "volume ID missing")
	}
	size, err := sizeFor(req.GetCapacityRange(), minBlockBytes)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	v, err := d.state.volume(req.GetVolumeId())
	d.mu.Unlock()
	if err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q: %v", req.GetVolumeId(), err)
	}
	if v.Mode == ModeStuckExpand {
		// The broken promise: the request is held and never succeeds.
		wait := time.NewTimer(d.cfg.StuckExpandWait)
		defer wait.Stop()
		select {
		case <-ctx.Done():
			return nil, status.Errorf(codes.DeadlineExceeded, "expanding volume %s: still in progress", v.ID)
		case <-wait.C:
			return nil, status.Errorf(codes.Unavailable, "expanding volume %s: still in progress", v.ID)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if v, err = d.state.volume(v.ID); err != nil {
		return nil, status.Errorf(codes.NotFound, "volume %q: %v", req.GetVolumeId(), err)
	}
	if size > v.SizeBytes {
		if err := c.checkCapacity(size - v.SizeBytes); err != nil {
			return nil, err
		}
		if v.Mode.dirs() { // a directory: its size is only a number
			v.SizeBytes = size
			return &csi.ControllerExpandVolumeResponse{CapacityBytes: size}, errStatus(d.state.putVolume(v), "record size")
		}
		if err := growImage(d.state.volumeImage(v.ID), size); err != nil {
			return nil, errStatus(err, "grow image")
		}
		devs, err := d.disk.loopDevices(ctx, d.state.volumeImage(v.ID))
		if err != nil {
			return nil, errStatus(err, "loop devices")
		}
		for _, dev := range devs {
			if err := d.disk.refresh(ctx, dev); err != nil {
				return nil, errStatus(err, "refresh %s", dev)
			}
		}
		v.SizeBytes = size
		if err := d.state.putVolume(v); err != nil {
			return nil, errStatus(err, "record size")
		}
	}
	return &csi.ControllerExpandVolumeResponse{CapacityBytes: v.SizeBytes, NodeExpansionRequired: !v.Block}, nil
}
