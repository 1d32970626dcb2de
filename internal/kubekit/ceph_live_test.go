package kubekit_test

import (
	"context"
	"errors"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
)

func TestCephClassPool(t *testing.T) {
	dataPool := func(_ context.Context, fs string) (string, error) {
		if fs == "cephfs" {
			return "cephfs_data", nil
		}
		return "", errors.New("no CephFS " + fs)
	}
	for _, tc := range []struct {
		name        string
		provisioner string
		params      map[string]string
		annotations map[string]string
		want, err   string
	}{
		{name: "rbd pool", provisioner: "rook-ceph.rbd.csi.ceph.com", params: map[string]string{"pool": "replicapool"}, want: "replicapool"},
		{name: "rbd data pool", provisioner: "rbd.csi.ceph.com", params: map[string]string{"pool": "meta", "dataPool": "ec-data"}, want: "ec-data"},
		{name: "cephfs pool named", provisioner: "rook-ceph.cephfs.csi.ceph.com", params: map[string]string{"fsName": "myfs", "pool": "myfs-replicated"}, want: "myfs-replicated"},
		{name: "cephfs first data pool", provisioner: "cephfs.csi.ceph.com", params: map[string]string{"fsName": "cephfs"}, want: "cephfs_data"},
		{name: "annotated cephfs", provisioner: "storbench.local/cephfs", annotations: map[string]string{kubekit.AnnotationCephFS: "cephfs"}, want: "cephfs_data"},
		{name: "annotated pool", provisioner: "example.com/fuse", annotations: map[string]string{kubekit.AnnotationCephPool: "rbd"}, want: "rbd"},
		{name: "annotated fs missing", provisioner: "example.com/fuse", annotations: map[string]string{kubekit.AnnotationCephFS: "gone"}, err: "no CephFS gone"},
		{name: "not Ceph", provisioner: "rancher.io/local-path", params: map[string]string{"pool": "zfs-pool"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "c", Annotations: tc.annotations},
				Provisioner: tc.provisioner, Parameters: tc.params}
			got, err := kubekit.CephClassPool(context.Background(), sc, dataPool)
			if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && err.Error() != tc.err) {
				t.Errorf("CephClassPool = %q, %v; want %q, %q", got, err, tc.want, tc.err)
			}
		})
	}
}
