package kubekit

import (
	"context"
	"strings"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
)

func cephObject(kind, ns, name string, spec map[string]any) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1", "kind": kind,
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
}

// TestCephReplicas maps Rook-Ceph classes to their pools' replication
// factor as Rook names them: an RBD class's pool (or its dataPool), a
// pool whose Ceph name is set apart in spec.name, a CephFS class's data
// pool (FS-NAME, or FS-dataN unnamed), and says why where it cannot.
func TestCephReplicas(t *testing.T) {
	objs := []runtime.Object{
		cephObject("CephBlockPool", "rook-ceph", "replicapool", map[string]any{"replicated": map[string]any{"size": int64(3)}}),
		cephObject("CephBlockPool", "rook-ceph", "builtin-mgr", map[string]any{"name": ".mgr", "replicated": map[string]any{"size": int64(2)}}),
		cephObject("CephBlockPool", "rook-ceph", "ec-data", map[string]any{"erasureCoded": map[string]any{"dataChunks": int64(2), "codingChunks": int64(1)}}),
		cephObject("CephFilesystem", "rook-ceph", "myfs", map[string]any{"dataPools": []any{
			map[string]any{"replicated": map[string]any{"size": int64(2)}},
			map[string]any{"name": "replicated", "replicated": map[string]any{"size": int64(3)}}}}),
	}
	scheme := runtime.NewScheme()
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(scheme, map[schema.GroupVersionResource]string{
		CephBlockPools: "CephBlockPoolList", CephFilesystems: "CephFilesystemList"}, objs...)
	class := func(prov string, params map[string]string) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "c"}, Provisioner: prov, Parameters: params}
	}
	const rbd, fs = "rook-ceph.rbd.csi.ceph.com", "rook-ceph.cephfs.csi.ceph.com"
	for _, c := range []struct {
		name   string
		sc     *storagev1.StorageClass
		size   int
		source string
		err    string
	}{
		{"not Ceph", class("driver.longhorn.io", nil), 0, "", ""},
		{"rbd", class(rbd, map[string]string{"clusterID": "rook-ceph", "pool": "replicapool"}), 3, "CephBlockPool rook-ceph/replicapool spec.replicated.size", ""},
		{"rbd spec.name", class(rbd, map[string]string{"clusterID": "rook-ceph", "pool": ".mgr"}), 2, "CephBlockPool rook-ceph/builtin-mgr spec.replicated.size", ""},
		{"rbd erasure-coded data pool", class(rbd, map[string]string{"clusterID": "rook-ceph", "pool": "replicapool", "dataPool": "ec-data"}), 0, "", "erasure-coded"},
		{"rbd missing pool", class(rbd, map[string]string{"clusterID": "rook-ceph", "pool": "nope"}), 0, "", "not found"},
		{"rbd no clusterID", class(rbd, map[string]string{"pool": "replicapool"}), 0, "", "no clusterID"},
		{"cephfs unnamed data pool", class(fs, map[string]string{"clusterID": "rook-ceph", "fsName": "myfs", "pool": "myfs-data0"}), 2, "CephFilesystem rook-ceph/myfs spec.dataPools[0].replicated.size", ""},
		{"cephfs named data pool", class(fs, map[string]string{"clusterID": "rook-ceph", "fsName": "myfs", "pool": "myfs-replicated"}), 3, "CephFilesystem rook-ceph/myfs spec.dataPools[1].replicated.size", ""},
		{"cephfs default data pool", class(fs, map[string]string{"clusterID": "rook-ceph", "fsName": "myfs"}), 2, "CephFilesystem rook-ceph/myfs spec.dataPools[0].replicated.size", ""},
	} {
		size, source, err := CephReplicas(context.Background(), dyn, c.sc)
		if size != c.size || (c.err == "" && source != c.source) || (err == nil) != (c.err == "") || (err != nil && !strings.Contains(err.Error(), c.err)) {
			t.Errorf("%s: %d %q %v, want %d %q error %q", c.name, size, source, err, c.size, c.source, c.err)
		}
	}
}

// TestLonghornReplicaNodes reads a Longhorn volume's replica nodes from
// its Replica resources, by the volume's label, without repeats.
func TestLonghornReplicaNodes(t *testing.T) {
	replica := func(name, vol, node string) runtime.Object {
		return &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "longhorn.io/v1beta2", "kind": "Replica",
			"metadata": map[string]any{"name": name, "namespace": "longhorn-system", "labels": map[string]any{"longhornvolume": vol}},
			"spec":     map[string]any{"nodeID": node, "volumeName": vol},
		}}
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		LonghornReplicas: "ReplicaList"},
		replica("r1", "pvc-a", "node-3"), replica("r2", "pvc-a", "node-1"), replica("r3", "pvc-a", "node-3"), replica("r4", "pvc-b", "node-2"))
	nodes, source, err := LonghornReplicaNodes(context.Background(), dyn, "longhorn-system", "pvc-a")
	if err != nil || strings.Join(nodes, ",") != "node-1,node-3" || !strings.Contains(source, "pvc-a") {
		t.Errorf("replica nodes %v from %q (%v), want node-1,node-3", nodes, source, err)
	}
	if _, _, err := LonghornReplicaNodes(context.Background(), dyn, "longhorn-system", "pvc-c"); err == nil {
		t.Error("a volume without replicas: no error")
	}
}
