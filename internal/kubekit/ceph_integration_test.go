package kubekit_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/test/kubetest"
)

// TestClusterCephPoolSizeThroughTheAPIServer installs Rook's CephBlockPool CRD
// on the test cluster's API server (a CRD and an object suffice: no Ceph
// runs), makes a pool of size 3 and a Rook RBD class naming it, and reads
// the class's replication factor through the dynamic client.
func TestClusterCephPoolSizeThroughTheAPIServer(t *testing.T) {
	client, kubeconfig := kubetest.Cluster(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: kubeconfig})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	ns := namespace(t, client, "rook-ceph")
	kubetest.RookBlockPool(t, ctx, c, ns, "replicapool", map[string]any{"failureDomain": "host", "replicated": map[string]any{"size": int64(3)}})
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: uniqueName("ceph-rbd")}, Provisioner: "rook-ceph.rbd.csi.ceph.com",
		Parameters: map[string]string{"clusterID": ns, "pool": "replicapool", "imageFormat": "2"}}
	if _, err := client.StorageV1().StorageClasses().Create(ctx, sc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.StorageV1().StorageClasses().Delete(context.Background(), sc.Name, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	read, err := client.StorageV1().StorageClasses().Get(ctx, sc.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	size, source, err := kubekit.CephReplicas(ctx, c.Dynamic, read)
	t.Logf("%s: size %d from %s (%v)", sc.Name, size, source, err)
	if err != nil || size != 3 || !strings.Contains(source, "CephBlockPool "+ns+"/replicapool") {
		t.Errorf("size %d from %q (%v), want 3 from CephBlockPool %s/replicapool", size, source, err, ns)
	}
	read.Parameters["pool"] = "missing"
	if _, _, err := kubekit.CephReplicas(ctx, c.Dynamic, read); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("a pool that does not exist: %v, want not found", err)
	}
}

// namespace creates a namespace of a name no earlier run used, deleted
// when the test ends.
func namespace(t *testing.T, client kubernetes.Interface, prefix string) string {
	t.Helper()
	ns := uniqueName(prefix)
	if _, err := client.CoreV1().Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := client.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Error(err)
		}
	})
	return ns
}

// uniqueName makes a name no earlier run used.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%x", prefix, time.Now().UnixNano()&0xffffff)
}
