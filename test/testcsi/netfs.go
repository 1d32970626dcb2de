package testcsi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/container-storage-interface/spec/lib/go/csi"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The StorageClass parameters of a netfs volume: where its share is.
const (
	// ServerParameter is the SFTP server's HOST:PORT, reached directly
	// (sshfs's directport, no ssh), from each node's own network.
	ServerParameter = "server"
	// ShareParameter is the shared directory's absolute path: the same on
	// the server and on the controller's host, which makes and removes
	// each volume's directory in it (the test cluster's server exports a
	// directory of the machine the controller runs on).
	ShareParameter = "share"
)

// fsNetfs is a netfs volume's filesystem, as /proc/self/mountinfo names it.
const fsNetfs = "fuse.sshfs"

// netfsCapabilities accepts mount access from one node or many (a netfs
// volume is a directory of a network filesystem: no block access, no
// filesystem to choose).
func netfsCapabilities(mode Mode, caps []*csi.VolumeCapability) error {
	if len(caps) == 0 {
		return status.Error(codes.InvalidArgument, "no volume capabilities")
	}
	for _, c := range caps {
		if c.GetMount() == nil {
			return status.Errorf(codes.InvalidArgument, "%s volumes are directories of a network filesystem: mount access only, block is not supported", mode)
		}
		if fs := c.GetMount().GetFsType(); fs != "" && fs != fsOf(mode) && fs != fsXFS {
			// fstype xfs is csi-provisioner's --default-fstype, not the user's choice.
			return status.Errorf(codes.InvalidArgument, "filesystem %q is not supported: %s volumes are %s", fs, mode, fsOf(mode))
		}
		if c.GetAccessMode().GetMode() == csi.VolumeCapability_AccessMode_UNKNOWN {
			return status.Error(codes.InvalidArgument, "access mode missing")
		}
	}
	return nil
}

// netfsShare reads a netfs class's server and share parameters, or refuses
// them for any other mode.
func netfsShare(mode Mode, params map[string]string) (server, share string, err error) {
	server, share = params[ServerParameter], params[ShareParameter]
	if mode != ModeNetfs {
		if server != "" || share != "" {
			return "", "", status.Errorf(codes.InvalidArgument, "parameters %q and %q are for mode %s only", ServerParameter, ShareParameter, ModeNetfs)
		}
		return "", "", nil
	}
	if _, _, err := net.SplitHostPort(server); err != nil {
		return "", "", status.Errorf(codes.InvalidArgument, "parameter %q: %q is not HOST:PORT: %v", ServerParameter, server, err)
	}
	if !filepath.IsAbs(share) || filepath.Clean(share) != share {
		return "", "", status.Errorf(codes.InvalidArgument, "parameter %q: %q is not a clean absolute path", ShareParameter, share)
	}
	if fi, err := os.Stat(share); err != nil || !fi.IsDir() {
		return "", "", status.Errorf(codes.FailedPrecondition, "share %s is not a directory on the controller's host: %v", share, err)
	}
	return server, share, nil
}

// netfsDir is a netfs volume's directory: its own in the share of a
// provisioned volume, the share itself for a static PV's.
func netfsDir(v volume) string {
	if v.Static {
		return v.Share
	}
	return filepath.Join(v.Share, v.ID)
}

// staticNetfs is the volume of a static PV (one an administrator made,
// with no record of the controller's): a netfs volume whose directory is
// the share its volume attributes name, on the server they name, e.g.
//
//	csi: {driver: testcsi.storbench.io, volumeHandle: nas-1,
//	      volumeAttributes: {server: 10.98.0.200:2022, share: /srv/export/nas-1}}
//
// The share is the server's path: unlike a class's, it need not exist on
// the controller's host. ok is false unless both attributes are there.
func staticNetfs(id string, attrs map[string]string) (v volume, ok bool, err error) {
	server, share := attrs[ServerParameter], attrs[ShareParameter]
	if server == "" && share == "" {
		return volume{}, false, nil
	}
	if _, _, err := net.SplitHostPort(server); err != nil {
		return volume{}, false, status.Errorf(codes.InvalidArgument, "static volume %s: attribute %q: %q is not HOST:PORT: %v", id, ServerParameter, server, err)
	}
	if !filepath.IsAbs(share) || filepath.Clean(share) != share {
		return volume{}, false, status.Errorf(codes.InvalidArgument, "static volume %s: attribute %q: %q is not a clean absolute path", id, ShareParameter, share)
	}
	return volume{ID: id, Name: id, Mode: ModeNetfs, Server: server, Share: share, Static: true}, true, nil
}

// makeNetfsDir creates a netfs volume's directory, writable by any user
// (the pods' users are not the server's).
func makeNetfsDir(v volume) error {
	if err := os.Mkdir(netfsDir(v), 0o777); err != nil && !errors.Is(err, fs.ErrExist) {
		return errStatus(err, "create the directory of volume %s", v.ID)
	}
	return errStatus(os.Chmod(netfsDir(v), 0o777), "open the directory of volume %s", v.ID)
}

// deleteNetfs removes a netfs volume no node holds: its directory, then
// its record.
func (c controller) deleteNetfs(v volume) error {
	if len(v.Published) > 0 {
		return status.Errorf(codes.FailedPrecondition, "volume %s is in use (attached to %v)", v.ID, v.Published)
	}
	if err := os.RemoveAll(netfsDir(v)); err != nil {
		return errStatus(err, "remove the directory of volume %s", v.ID)
	}
	return errStatus(c.d.state.removeVolume(v.ID), "remove volume")
}

// mountShare is a netfs volume's NodeStage: this node's own sshfs mount of
// the volume's directory at the staging path. The node plugin runs in its
// node's network namespace and cgroup, so sshfs does too: its traffic
// crosses the node's link, and it dies with the node. Two nodes hold two
// mounts (two FUSE filesystems, each its own locks) of one directory.
func (d disk) mountShare(ctx context.Context, v volume, path string, flags []string) error {
	mounted, err := isMountPoint(path)
	if err != nil || mounted {
		return errStatus(err, "read mounts")
	}
	host, port, err := net.SplitHostPort(v.Server)
	if err != nil {
		return errStatus(err, "volume %s's server", v.ID)
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if err := os.MkdirAll(path, 0o750); err != nil {
		return errStatus(err, "staging path")
	}
	// allow_other: the pods' users are not the node plugin's; idmap=none:
	// owners pass through as numbers, as on the test cluster's netfs class.
	opts := append([]string{"directport=" + port, "allow_other", "idmap=none"}, flags...)
	if _, err := d.run(ctx, "sshfs", "-o", strings.Join(opts, ","), host+":"+netfsDir(v), path); err != nil {
		return errStatus(fmt.Errorf("sshfs %s:%s: %w", v.Server, netfsDir(v), err), "mount volume %s", v.ID)
	}
	return nil
}
