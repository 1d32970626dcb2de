package testcsi

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// The StorageClass parameters of a cephfs volume (beside ShareParameter,
// the controller's host directory where CephFS's CephPathParameter is
// mounted: the controller makes and removes each volume's directory in it).
const (
	// CephConfParameter is the ceph.conf every node's ceph-fuse reads
	// (monitor addresses, auth): a path on the nodes' shared filesystem.
	CephConfParameter = "cephConf"
	// CephPathParameter is the directory of CephFS that holds the class's
	// volumes, e.g. /volumes: volume ID is CephPathParameter/ID, the root
	// (client_mountpoint) of each node's ceph-fuse mount of it.
	CephPathParameter = "cephPath"
)

// fsCephFS is a cephfs volume's filesystem, as /proc/self/mountinfo names it.
const fsCephFS = "fuse.ceph-fuse"

// dirs reports whether m's volumes are directories of a network
// filesystem (netfs, cephfs) rather than images.
func (m Mode) dirs() bool { return m == ModeNetfs || m == ModeCephFS }

// fsOf is the filesystem a directory volume of mode m is mounted as.
func fsOf(m Mode) string {
	if m == ModeCephFS {
		return fsCephFS
	}
	return fsNetfs
}

// cephfsParams reads a cephfs class's parameters, or refuses them for any
// other mode.
func cephfsParams(mode Mode, params map[string]string) (conf, cephPath, share string, err error) {
	conf, cephPath, share = params[CephConfParameter], params[CephPathParameter], params[ShareParameter]
	if mode != ModeCephFS {
		if conf != "" || cephPath != "" {
			return "", "", "", status.Errorf(codes.InvalidArgument, "parameters %q and %q are for mode %s only", CephConfParameter, CephPathParameter, ModeCephFS)
		}
		return "", "", "", nil
	}
	if params[ServerParameter] != "" {
		return "", "", "", status.Errorf(codes.InvalidArgument, "parameter %q is for mode %s only: a cephfs volume's servers are its ceph.conf's monitors", ServerParameter, ModeNetfs)
	}
	for _, p := range []struct{ name, value string }{{CephConfParameter, conf}, {CephPathParameter, cephPath}, {ShareParameter, share}} {
		if !filepath.IsAbs(p.value) || filepath.Clean(p.value) != p.value {
			return "", "", "", status.Errorf(codes.InvalidArgument, "parameter %q: %q is not a clean absolute path", p.name, p.value)
		}
	}
	if fi, err := os.Stat(conf); err != nil || !fi.Mode().IsRegular() {
		return "", "", "", status.Errorf(codes.FailedPrecondition, "ceph.conf %s is not a file on the controller's host: %v", conf, err)
	}
	if fi, err := os.Stat(share); err != nil || !fi.IsDir() {
		return "", "", "", status.Errorf(codes.FailedPrecondition, "share %s is not a directory on the controller's host: %v", share, err)
	}
	return conf, cephPath, share, nil
}

// cephfsRoot is a cephfs volume's directory in CephFS: the root of every
// node's mount of it.
func cephfsRoot(v volume) string { return path.Join(v.CephPath, v.ID) }

// mountCephFS is a cephfs volume's NodeStage: this node's own ceph-fuse
// client, rooted at the volume's directory, mounted at the staging path.
// The node plugin runs in its node's network namespace and cgroup, so
// ceph-fuse does too: the node's traffic to the MDS and OSDs crosses its
// own link, and the client dies with the node. A mount whose client died
// (the node was stopped and started) is unmounted and made again.
func (d disk) mountCephFS(ctx context.Context, v volume, target string, flags []string) error {
	mounted, err := isMountPoint(target)
	if err != nil {
		return errStatus(err, "read mounts")
	}
	if mounted {
		if _, err := os.Stat(target); !errors.Is(err, syscall.ENOTCONN) {
			return nil
		}
		if _, err := d.run(ctx, "umount", "-l", target); err != nil {
			return errStatus(err, "unmount the dead ceph-fuse mount of volume %s", v.ID)
		}
	}
	if err := os.MkdirAll(target, 0o750); err != nil {
		return errStatus(err, "staging path")
	}
	// allow_other: the pods' users are not the node plugin's. ceph-fuse
	// returns once mounted, its client left running in the background.
	opts := append([]string{"allow_other"}, flags...)
	if _, err := d.run(ctx, "ceph-fuse", "--conf", v.CephConf, "-r", cephfsRoot(v), "-o", strings.Join(opts, ","), target); err != nil {
		return errStatus(fmt.Errorf("ceph-fuse %s: %w", cephfsRoot(v), err), "mount volume %s", v.ID)
	}
	return nil
}

// classParameters are the StorageClass parameters the driver knows (beside
// csi.storage.k8s.io/ ones).
var classParameters = []string{ModeParameter, ServerParameter, ShareParameter, CephConfParameter, CephPathParameter}
