package kubekit

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"

	"github.com/storbench/storbench/internal/result"
)

// Rook's custom resources that hold a Ceph pool's replication factor.
var (
	CephBlockPools  = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephblockpools"}
	CephFilesystems = schema.GroupVersionResource{Group: "ceph.rook.io", Version: "v1", Resource: "cephfilesystems"}
)

// CephReplicas reads a Rook-Ceph StorageClass's replication factor: the
// class's parameters name the Ceph cluster's namespace (clusterID) and
// the pool (pool, or dataPool where an RBD image's data lives apart; for
// CephFS, fsName and the data pool), and Rook's CephBlockPool or
// CephFilesystem holds spec.replicated.size. It returns 0 and no error
// for a class that is not Rook-Ceph's; source names the field read.
func CephReplicas(ctx context.Context, dyn dynamic.Interface, sc *storagev1.StorageClass) (size int, source string, err error) {
	rbd, cephfs := strings.HasSuffix(sc.Provisioner, ".rbd.csi.ceph.com"), strings.HasSuffix(sc.Provisioner, ".cephfs.csi.ceph.com")
	if !rbd && !cephfs {
		return 0, "", nil
	}
	p := sc.Parameters
	ns := p["clusterID"]
	if ns == "" {
		return 0, "", fmt.Errorf("class %s has no clusterID parameter naming the Ceph cluster's namespace", sc.Name)
	}
	if dyn == nil {
		return 0, "", errors.New("no client for custom resources")
	}
	if rbd {
		pool := p["pool"]
		if p["dataPool"] != "" {
			pool = p["dataPool"]
		}
		if pool == "" {
			return 0, "", fmt.Errorf("class %s has no pool parameter", sc.Name)
		}
		obj, err := cephPool(ctx, dyn, ns, pool)
		if err != nil {
			return 0, "", err
		}
		size, err := replicatedSize(obj.Object, "spec")
		return size, fmt.Sprintf("CephBlockPool %s/%s spec.replicated.size", ns, obj.GetName()), err
	}
	fs := p["fsName"]
	if fs == "" {
		return 0, "", fmt.Errorf("class %s has no fsName parameter", sc.Name)
	}
	obj, err := dyn.Resource(CephFilesystems).Namespace(ns).Get(ctx, fs, metav1.GetOptions{})
	if err != nil {
		return 0, "", crError("CephFilesystem", ns, fs, "cephfilesystems", err)
	}
	pools, _, _ := unstructured.NestedSlice(obj.Object, "spec", "dataPools")
	for i, dp := range pools {
		m, ok := dp.(map[string]any)
		if !ok {
			continue
		}
		// Rook names a data pool's Ceph pool FS-NAME, or FS-dataN unnamed.
		name, _ := m["name"].(string)
		cephName := fmt.Sprintf("%s-data%d", fs, i)
		if name != "" {
			cephName = fs + "-" + name
		}
		if p["pool"] == "" || p["pool"] == cephName {
			size, err := replicatedSize(m)
			return size, fmt.Sprintf("CephFilesystem %s/%s spec.dataPools[%d].replicated.size", ns, fs, i), err
		}
	}
	return 0, "", fmt.Errorf("CephFilesystem %s/%s has no data pool %q", ns, fs, p["pool"])
}

// cephPool finds a CephBlockPool by its Ceph pool name: the object's
// name, or spec.name where Rook's pool is named apart from its object.
func cephPool(ctx context.Context, dyn dynamic.Interface, ns, pool string) (*unstructured.Unstructured, error) {
	r := dyn.Resource(CephBlockPools).Namespace(ns)
	obj, err := r.Get(ctx, pool, metav1.GetOptions{})
	if err == nil {
		return obj, nil
	}
	if !apierrors.IsNotFound(err) {
		return nil, crError("CephBlockPool", ns, pool, "cephblockpools", err)
	}
	list, lerr := r.List(ctx, metav1.ListOptions{})
	if lerr == nil {
		for i := range list.Items {
			if n, _, _ := unstructured.NestedString(list.Items[i].Object, "spec", "name"); n == pool {
				return &list.Items[i], nil
			}
		}
	}
	return nil, crError("CephBlockPool", ns, pool, "cephblockpools", err)
}

// replicatedSize reads replicated.size under fields of m; an
// erasure-coded pool has none, and says so.
func replicatedSize(m map[string]any, fields ...string) (int, error) {
	size, found, err := unstructured.NestedInt64(m, append(fields, "replicated", "size")...)
	if err != nil || !found || size <= 0 {
		if _, ec, _ := unstructured.NestedMap(m, append(fields, "erasureCoded")...); ec {
			return 0, errors.New("the pool is erasure-coded: it keeps no copies to count (give --label replicas=N for the breakdown)")
		}
		return 0, errors.New("the pool has no spec.replicated.size")
	}
	return int(size), nil
}

// crError says why a Rook resource could not be read, with the
// permission that would allow it.
func crError(kind, ns, name, resource string, err error) error {
	switch {
	case apierrors.IsForbidden(err):
		return fmt.Errorf("reading %s %s/%s is forbidden (RBAC: get %s.ceph.rook.io)", kind, ns, name, resource)
	case apierrors.IsNotFound(err):
		return fmt.Errorf("%s %s/%s not found (is Rook's CRD installed, is clusterID the Ceph cluster's namespace?)", kind, ns, name)
	}
	return fmt.Errorf("reading %s %s/%s: %w", kind, ns, name, err)
}

// CephLabels labels a Rook-Ceph class's replication factor and where it
// was read; a pool that cannot be read is a notice, not a failure.
// Ceph's own figures (cephPlacementLabels, ceph_live.go) follow where
// Ceph can be reached from this host.
func CephLabels(ctx context.Context, dyn dynamic.Interface, sc *storagev1.StorageClass, labels map[string]string) string {
	if sc == nil {
		return ""
	}
	var notices []string
	if result.LabelReplicas.Of(labels) == "" {
		size, source, err := CephReplicas(ctx, dyn, sc)
		switch {
		case err != nil:
			notices = append(notices, "Ceph pool size not read: "+err.Error())
		case size > 0:
			result.LabelReplicas.Set(labels, fmt.Sprint(size))
			result.LabelReplicasSource.Set(labels, source)
		}
	}
	if n := cephPlacementLabels(ctx, sc, labels); n != "" {
		notices = append(notices, n)
	}
	return strings.Join(notices, "; ")
}

// LonghornReplicas is Longhorn's resource of one volume's replica.
var LonghornReplicas = schema.GroupVersionResource{Group: "longhorn.io", Version: "v1beta2", Resource: "replicas"}

// LonghornReplicaNodes reads the nodes that hold a Longhorn volume's
// replicas (its Replica resources in namespace ns, labelled with the
// volume's name, which is its PV's; spec.nodeID), sorted, without
// repeats. source names what was read.
func LonghornReplicaNodes(ctx context.Context, dyn dynamic.Interface, ns, volume string) (nodes []string, source string, err error) {
	if dyn == nil {
		return nil, "", errors.New("no client for custom resources")
	}
	list, err := dyn.Resource(LonghornReplicas).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: "longhornvolume=" + volume})
	switch {
	case apierrors.IsForbidden(err):
		return nil, "", fmt.Errorf("listing Longhorn replicas in %s is forbidden (RBAC: list replicas.longhorn.io)", ns)
	case err != nil:
		return nil, "", fmt.Errorf("listing Longhorn replicas of %s in %s: %w", volume, ns, err)
	}
	seen := map[string]bool{}
	for _, r := range list.Items {
		if n, _, _ := unstructured.NestedString(r.Object, "spec", "nodeID"); n != "" && !seen[n] {
			seen[n] = true
			nodes = append(nodes, n)
		}
	}
	if len(nodes) == 0 {
		return nil, "", fmt.Errorf("Longhorn volume %s has no replica with a node in %s", volume, ns)
	}
	slices.Sort(nodes)
	return nodes, fmt.Sprintf("Longhorn replicas.longhorn.io of volume %s (spec.nodeID)", volume), nil
}

// LonghornLabels names a Longhorn volume's replica nodes where the user
// has not; a volume whose replicas cannot be read is a notice.
func LonghornLabels(ctx context.Context, dyn dynamic.Interface, labels map[string]string) string {
	if result.LabelCSIDriver.Of(labels) != "driver.longhorn.io" || result.LabelReplicaNodes.Of(labels) != "" || result.LabelPV.Of(labels) == "" {
		return ""
	}
	nodes, source, err := LonghornReplicaNodes(ctx, dyn, "longhorn-system", result.LabelPV.Of(labels))
	if err != nil {
		return "Longhorn replica nodes not read: " + err.Error()
	}
	result.LabelReplicaNodes.Set(labels, strings.Join(nodes, ","))
	result.LabelReplicaNodesSource.Set(labels, source)
	return ""
}
