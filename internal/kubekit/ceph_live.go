package kubekit

import (
	"context"
	"fmt"
	"strings"
	"time"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/execx"
)

// Annotations a StorageClass's owner sets to name the Ceph pool or CephFS
// behind a class whose provisioner is not ceph-csi's (a ceph-fuse mount
// under a local-path provisioner, say): storbench then asks Ceph itself.
const (
	AnnotationCephPool = "storbench.io/ceph-pool"
	AnnotationCephFS   = "storbench.io/ceph-fs"
)

// CephClassPool names the Ceph pool a class's volumes are written to, or
// "" for a class that names none. ceph-csi's classes name it in their
// parameters (pool, or dataPool where an RBD image's data lives apart;
// fsName and an optional pool for CephFS); other classes in the
// annotations above. A CephFS without a pool named writes to its first
// data pool, which fsDataPool reads from Ceph.
func CephClassPool(ctx context.Context, sc *storagev1.StorageClass, fsDataPool func(ctx context.Context, fs string) (string, error)) (string, error) {
	p, a := sc.Parameters, sc.Annotations
	var pool, fs string
	switch {
	case cephCSI(sc.Provisioner, "rbd.csi.ceph.com"):
		pool = p["pool"]
		if p["dataPool"] != "" {
			pool = p["dataPool"]
		}
	case cephCSI(sc.Provisioner, "cephfs.csi.ceph.com"):
		pool, fs = p["pool"], p["fsName"]
	default:
		pool, fs = a[AnnotationCephPool], a[AnnotationCephFS]
	}
	if pool != "" || fs == "" {
		return pool, nil
	}
	return fsDataPool(ctx, fs)
}

// cephCSI reports whether provisioner is ceph-csi's driver name, alone or
// prefixed with the operator's namespace as Rook names it
// ("rook-ceph.rbd.csi.ceph.com").
func cephCSI(provisioner, driver string) bool {
	return provisioner == driver || strings.HasSuffix(provisioner, "."+driver)
}

// cephReadTimeout bounds the ceph CLI's reads: it waits for a monitor
// five minutes by default.
const cephReadTimeout = 30 * time.Second

// cephPlacementLabels labels a class backed by Ceph with what Ceph itself
// reports of its pool: size, the OSDs acting for its PGs and their hosts
// (ceph.Placement). The ceph CLI runs on storbench's host with its own
// configuration (CEPH_CONF, else /etc/ceph/ceph.conf): a Proxmox or
// bare-metal node, an admin host; without one (a laptop beside a Rook
// cluster) a ceph-csi class stays with Rook's figures, silently. Ceph's live size replaces the one read
// from Rook's resources. A Ceph that cannot be reached is a notice.
func cephPlacementLabels(ctx context.Context, sc *storagev1.StorageClass, labels map[string]string) string {
	ctx, cancel := context.WithTimeout(ctx, cephReadTimeout)
	defer cancel()
	c := ceph.Client{Cmder: execx.Local{}}
	pool, err := CephClassPool(ctx, sc, c.FSDataPool)
	if err == nil && pool == "" {
		return ""
	}
	var pl ceph.Placement
	if err == nil {
		pl, err = c.PoolPlacement(ctx, pool)
	}
	named := sc.Annotations[AnnotationCephPool] != "" || sc.Annotations[AnnotationCephFS] != ""
	if err != nil && execx.IsNotFound(err) && !named {
		return "" // no ceph CLI here: Rook's resources are all there is
	}
	if err != nil {
		return fmt.Sprintf("Ceph pool of class %s not read from Ceph (the ceph CLI on this host, CEPH_CONF): %v", sc.Name, err)
	}
	for k, v := range pl.Labels() {
		labels[k] = v
	}
	return ""
}
