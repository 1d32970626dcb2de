package kubekit

import (
	"context"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	"github.com/storbench/storbench/internal/result"
)

func TestVolumeServer(t *testing.T) {
	csi := func(attrs map[string]string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			CSI: &corev1.CSIPersistentVolumeSource{Driver: "x", VolumeAttributes: attrs}}}}
	}
	for _, c := range []struct {
		name string
		pv   *corev1.PersistentVolume
		want string
	}{
		{"in-tree NFS", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			NFS: &corev1.NFSVolumeSource{Server: "192.168.1.20", Path: "/export"}}}}, "192.168.1.20"},
		{"in-tree iSCSI portal with port", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			ISCSI: &corev1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.5:3260"}}}}, "10.0.0.5"},
		{"csi-driver-nfs", csi(map[string]string{"server": "nas.lan", "share": "/k8s"}), "nas.lan"},
		{"an sshfs driver's server with its port", csi(map[string]string{"mode": "netfs", "server": "10.97.0.13:2222", "share": "/srv/share"}), "10.97.0.13"},
		{"iSCSI CSI, IPv6 portal", csi(map[string]string{"targetPortal": "[fd00::5]:3260"}), "fd00::5"},
		{"SMB CSI share", csi(map[string]string{"source": "//smb-server.lan/share"}), "smb-server.lan"},
		{"a local CSI volume", csi(map[string]string{"storage.kubernetes.io/csiProvisionerIdentity": "x"}), ""},
		{"hostPath", &corev1.PersistentVolume{Spec: corev1.PersistentVolumeSpec{PersistentVolumeSource: corev1.PersistentVolumeSource{
			HostPath: &corev1.HostPathVolumeSource{Path: "/x"}}}}, ""},
	} {
		if got := VolumeServer(c.pv); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

func TestNodeWithAddress(t *testing.T) {
	node := func(name string, addrs ...corev1.NodeAddress) corev1.Node {
		n := corev1.Node{}
		n.Name, n.Status.Addresses = name, addrs
		return n
	}
	ip := func(a string) corev1.NodeAddress { return corev1.NodeAddress{Type: corev1.NodeInternalIP, Address: a} }
	nodes := []corev1.Node{
		node("pi-1", ip("10.98.0.11"), corev1.NodeAddress{Type: corev1.NodeHostName, Address: "pi-1"}),
		node("pi-2", ip("10.98.0.12"), corev1.NodeAddress{Type: corev1.NodeExternalIP, Address: "203.0.113.7"}),
		node("pi-3", ip("10.98.0.13"), corev1.NodeAddress{Type: corev1.NodeHostName, Address: "NAS.lan"}),
		node("pi-4", ip("10.98.0.99")), node("pi-5", ip("10.98.0.99")),
	}
	for _, c := range []struct {
		addr, name string
		kind       corev1.NodeAddressType
	}{
		{"10.98.0.12", "pi-2", corev1.NodeInternalIP},
		{"203.0.113.7", "pi-2", corev1.NodeExternalIP},
		{"nas.lan", "pi-3", corev1.NodeHostName},
		{"192.168.1.20", "", ""}, // a NAS outside the cluster
		{"10.98.0.99", "", ""},   // two nodes claim it: no answer rather than a guess
	} {
		if name, kind := NodeWithAddress(nodes, c.addr); name != c.name || kind != c.kind {
			t.Errorf("%s: %q %q, want %q %q", c.addr, name, kind, c.name, c.kind)
		}
	}
}

// TestServersNodeLabels: a volume's servers that are nodes become its
// replica nodes, the others named in the source; nothing when none is a
// node or replica nodes are known already.
func TestServersNodeLabels(t *testing.T) {
	node := func(name, ip string) *corev1.Node {
		return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name},
			Status: corev1.NodeStatus{Addresses: []corev1.NodeAddress{{Type: corev1.NodeInternalIP, Address: ip}}}}
	}
	client := fake.NewSimpleClientset(node("n1", "127.0.0.1"), node("n2", "10.0.0.2"), node("n3", "10.0.0.3"))
	tests := []struct {
		name       string
		servers    []string
		labels     map[string]string
		want, srcs string
	}{
		{"bricks, one not a node", []string{"10.0.0.9:24007", "10.0.0.2:24007", "10.0.0.3:24007"}, map[string]string{},
			"n2,n3", "the volume's servers by node address: 10.0.0.2 is n2, 10.0.0.3 is n3; not a node storbench can name: 10.0.0.9"},
		{"no node", []string{"192.168.1.5:24007", ""}, map[string]string{}, "", ""},
		{"known already", []string{"10.0.0.2:24007"}, map[string]string{string(result.LabelReplicaNodes): "x"}, "x", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ServersNodeLabels(context.Background(), client, tt.servers, tt.labels)
			if got := result.LabelReplicaNodes.Of(tt.labels); got != tt.want {
				t.Errorf("replica nodes %q, want %q", got, tt.want)
			}
			if got := result.LabelReplicaNodesSource.Of(tt.labels); got != tt.srcs {
				t.Errorf("source %q, want %q", got, tt.srcs)
			}
		})
	}
}
