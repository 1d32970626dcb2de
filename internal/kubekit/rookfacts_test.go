package kubekit

import (
	"context"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	dynfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/result"
)

// rookOSDPod is one of Rook's OSD pods as Rook labels it.
func rookOSDPod(name, id, host, class, node string, phase corev1.PodPhase) *corev1.Pod {
	l := map[string]string{"app": "rook-ceph-osd", "ceph-osd-id": id}
	if host != "" {
		l["topology-location-host"] = host
	}
	if class != "" {
		l["device-class"] = class
	}
	return &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "rook-ceph", Labels: l},
		Spec: corev1.PodSpec{NodeName: node}, Status: corev1.PodStatus{Phase: phase}}
}

// TestRookPoolLabels reads a pool's facts from Rook's objects alone: the
// size from its CephBlockPool (found by spec.name too), the OSDs of its
// device class from Rook's running OSD pods with their crush hosts (the
// node where a pod has no host label), and says what it could not read
// and why: a pod not running, no OSD of the class, a pool with no size,
// an erasure-coded pool (no copies), a pool Rook does not know.
func TestRookPoolLabels(t *testing.T) {
	objs := []runtime.Object{
		cephObject("CephBlockPool", "rook-ceph", "replicapool", map[string]any{"replicated": map[string]any{"size": int64(3)}}),
		cephObject("CephBlockPool", "rook-ceph", "fast", map[string]any{"name": "fast-pool", "deviceClass": "nvme", "replicated": map[string]any{"size": int64(2)}}),
		cephObject("CephBlockPool", "rook-ceph", "tape", map[string]any{"deviceClass": "tape", "replicated": map[string]any{"size": int64(2)}}),
		cephObject("CephBlockPool", "rook-ceph", "ec", map[string]any{"erasureCoded": map[string]any{"dataChunks": int64(2), "codingChunks": int64(1)}}),
		cephObject("CephBlockPool", "rook-ceph", "nosize", map[string]any{"failureDomain": "host"}),
	}
	dyn := dynfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(), map[schema.GroupVersionResource]string{
		CephBlockPools: "CephBlockPoolList", CephFilesystems: "CephFilesystemList"}, objs...)
	pods := fake.NewClientset(
		rookOSDPod("rook-ceph-osd-2-abc", "2", "pi-3", "hdd", "pi-3", corev1.PodRunning),
		rookOSDPod("rook-ceph-osd-0-abc", "0", "pi-1", "hdd", "pi-1", corev1.PodRunning),
		rookOSDPod("rook-ceph-osd-1-abc", "1", "", "hdd", "pi-2", corev1.PodRunning),
		rookOSDPod("rook-ceph-osd-3-abc", "3", "pi-1", "nvme", "pi-1", corev1.PodRunning),
		rookOSDPod("rook-ceph-osd-4-abc", "4", "pi-2", "nvme", "pi-2", corev1.PodPending),
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-mon-a", Namespace: "rook-ceph", Labels: map[string]string{"app": "rook-ceph-mon"}}},
	)
	c := &Cluster{Client: pods, Dynamic: dyn}
	ctx := context.Background()

	l, where, err := RookPoolLabels(ctx, c, "rook-ceph", "replicapool")
	if err != nil {
		t.Fatal(err)
	}
	if result.LabelReplicas.Of(l) != "3" || result.LabelCephOSDs.Of(l) != "osd.0,osd.1,osd.2,osd.3" || result.LabelReplicaNodes.Of(l) != "pi-1,pi-2,pi-3" ||
		result.LabelReplicationModel.Of(l) != result.ReplicationPrimary || result.LabelCephPool.Of(l) != "replicapool" {
		t.Errorf("replicapool: labels %v", l)
	}
	if s := result.LabelReplicasSource.Of(l); s != "CephBlockPool rook-ceph/replicapool spec.replicated.size" {
		t.Errorf("replicapool: size source %q", s)
	}
	if s := result.LabelReplicaNodesSource.Of(l); !strings.Contains(s, "Ceph's placement groups not read") || !strings.Contains(s, "not running: osd.4 (pod rook-ceph-osd-4-abc, Pending)") {
		t.Errorf("replicapool: hosts source %q", s)
	}
	if where != "Rook's CephBlockPool rook-ceph/replicapool and Rook's running OSD pods in rook-ceph (app=rook-ceph-osd)" {
		t.Errorf("replicapool: where %q", where)
	}

	l, where, err = RookPoolLabels(ctx, c, "rook-ceph", "fast-pool")
	if err != nil {
		t.Fatal(err)
	}
	if result.LabelReplicas.Of(l) != "2" || result.LabelCephOSDs.Of(l) != "osd.3" || result.LabelReplicaNodes.Of(l) != "pi-1" || !strings.Contains(where, "device class nvme") {
		t.Errorf("fast-pool (device class nvme): labels %v, where %q", l, where)
	}

	l, _, err = RookPoolLabels(ctx, c, "rook-ceph", "ec")
	if err != nil || result.LabelReplicas.Of(l) != "" || !strings.Contains(result.LabelReplicasSource.Of(l), "erasure-coded") {
		t.Errorf("ec: labels %v, %v", l, err)
	}
	for pool, want := range map[string]string{
		"tape":   "no running pod labelled app=rook-ceph-osd of device class tape (other classes: ",
		"nosize": "CephBlockPool rook-ceph/nosize: the pool has no spec.replicated.size",
		"absent": "CephBlockPool rook-ceph/absent not found",
	} {
		if _, _, err := RookPoolLabels(ctx, c, "rook-ceph", pool); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: error %v, want one saying %q", pool, err, want)
		}
	}
	bad := &Cluster{Client: fake.NewClientset(rookOSDPod("rook-ceph-osd-x", "x", "pi-1", "", "pi-1", corev1.PodRunning)), Dynamic: dyn}
	if _, _, err := RookPoolLabels(ctx, bad, "rook-ceph", "replicapool"); err == nil || !strings.Contains(err.Error(), `label ceph-osd-id="x" is not an OSD id`) {
		t.Errorf("an OSD pod with no id: %v", err)
	}
	if _, _, err := RookPoolLabels(ctx, &Cluster{Client: pods}, "rook-ceph", "replicapool"); err == nil {
		t.Error("no client for custom resources: no error")
	}
}
