package kube

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/kubekit"
)

// TestVolumeLabelsFindTheServerNode: a claim bound to an NFS PV whose
// server is a node's address gets that node as the one serving the data,
// with where that was read; one the user labelled is left alone.
func TestVolumeLabelsFindTheServerNode(t *testing.T) {
	pvc := &corev1.PersistentVolumeClaim{}
	pvc.Namespace, pvc.Name, pvc.Spec.VolumeName = "storbench", "claim", "pv-nfs"
	pv := &corev1.PersistentVolume{}
	pv.Name = "pv-nfs"
	pv.Spec.NFS = &corev1.NFSVolumeSource{Server: "10.98.0.13", Path: "/export"}
	n3 := &corev1.Node{}
	n3.Name, n3.Status.Addresses = "kube-3", []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "10.98.0.13"}}
	o := &objects{cluster: &kubekit.Cluster{Client: fake.NewClientset(pvc, pv, n3)}, ns: "storbench", name: "claim"}

	labels := map[string]string{}
	if err := o.volumeLabels(context.Background(), labels); err != nil {
		t.Fatal(err)
	}
	if labels["volume_server"] != "10.98.0.13" || labels["replica_nodes"] != "kube-3" ||
		labels["replica_nodes_source"] != "the PV's server 10.98.0.13 is node kube-3's InternalIP" {
		t.Errorf("labels %v", labels)
	}

	given := map[string]string{"replica_nodes": "kube-2"}
	if err := o.volumeLabels(context.Background(), given); err != nil {
		t.Fatal(err)
	}
	if given["replica_nodes"] != "kube-2" || given["replica_nodes_source"] != "" {
		t.Errorf("a user's replica nodes replaced: %v", given)
	}
}

// A PV whose server is not a node (a NAS) is labelled a single server, for
// the server breakdown (analysis.ServerBreakdowns).
func TestVolumeLabelsServerOutsideTheCluster(t *testing.T) {
	pv := &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
		NFS: &corev1.NFSVolumeSource{Server: "192.168.1.20", Path: "/volume1/k8s"}}}}
	pv.Name = "pv-nas"
	pvc := &corev1.PersistentVolumeClaim{Spec: corev1.PersistentVolumeClaimSpec{VolumeName: pv.Name}}
	pvc.Namespace, pvc.Name = "storbench", "claim"
	n1 := &corev1.Node{Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: "192.168.1.11"}}}}
	n1.Name = "kube-1"
	o := &objects{cluster: &kubekit.Cluster{Client: fake.NewClientset(pvc, pv, n1)}, ns: "storbench", name: "claim"}
	labels := map[string]string{}
	if err := o.volumeLabels(context.Background(), labels); err != nil {
		t.Fatal(err)
	}
	if labels["volume_server"] != "192.168.1.20" || labels["replica_nodes"] != "" || labels["replication_model"] != "server" {
		t.Errorf("labels %v", labels)
	}
}
