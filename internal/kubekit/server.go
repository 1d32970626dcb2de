package kubekit

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/result"
)

// VolumeServer is the address of the server behind a network volume, as
// its PV names it: an in-tree NFS volume's server, the csi-driver-nfs
// "server" attribute (or an sshfs driver's, HOST:PORT, such as storbench's
// test CSI driver's netfs mode), an iSCSI target portal (in-tree or the iSCSI CSI
// driver's "targetPortal"), the SMB CSI driver's "source" share host.
// Empty for any other volume.
func VolumeServer(pv *corev1.PersistentVolume) string {
	switch {
	case pv.Spec.NFS != nil:
		return pv.Spec.NFS.Server
	case pv.Spec.ISCSI != nil:
		return hostOf(pv.Spec.ISCSI.TargetPortal)
	case pv.Spec.CSI != nil:
		a := pv.Spec.CSI.VolumeAttributes
		switch {
		case a["server"] != "": // csi-driver-nfs: a host; sshfs drivers: HOST:PORT
			return hostOf(a["server"])
		case a["targetPortal"] != "":
			return hostOf(a["targetPortal"])
		case strings.HasPrefix(a["source"], "//"): // smb://-less UNC form: //host/share
			if u, err := url.Parse("smb:" + a["source"]); err == nil {
				return u.Hostname()
			}
		}
	}
	return ""
}

// hostOf drops a port: "10.0.0.5:3260" and "[fd00::5]:3260" give the host.
func hostOf(addr string) string {
	if h, _, err := net.SplitHostPort(addr); err == nil {
		return h
	}
	return addr
}

// ServerNodeLabels finds the node whose address (InternalIP, ExternalIP or
// Hostname) is a network volume's server, and, unless the user named the
// replica nodes, records it as the node serving the data: its telemetry
// is then sampled with the run, and the breakdown measures the link to
// it. A server outside the cluster is labelled a single server
// (replication model "server"); nodes storbench may not list leave only
// the address.
func ServerNodeLabels(ctx context.Context, client kubernetes.Interface, addr string, labels map[string]string) {
	if result.LabelReplicaNodes.Of(labels) != "" {
		return
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	if name, kind := NodeWithAddress(nodes.Items, addr); name != "" {
		result.LabelReplicaNodes.Set(labels, name)
		result.LabelReplicaNodesSource.Set(labels, fmt.Sprintf("the PV's server %s is node %s's %s", addr, name, kind))
		return
	}
	// A server outside the cluster (a NAS): one server, its copies its
	// own business; the breakdown takes the node's link and the server's
	// (analysis.ServerBreakdowns).
	if result.LabelReplicationModel.Of(labels) == "" {
		result.LabelReplicationModel.Set(labels, result.ReplicationServer)
	}
}

// NodeWithAddress returns the node one of whose addresses is addr, and
// the kind of that address; "" when none or more than one node has it.
func NodeWithAddress(nodes []corev1.Node, addr string) (name string, kind corev1.NodeAddressType) {
	found := 0
	for _, n := range nodes {
		for _, a := range n.Status.Addresses {
			if strings.EqualFold(a.Address, addr) {
				if name != n.Name {
					found++
				}
				name, kind = n.Name, a.Type
				break
			}
		}
	}
	if found != 1 {
		return "", ""
	}
	return name, kind
}

// ServersNodeLabels labels the cluster nodes among a volume's servers
// (HOST:PORT or HOST, as result.LabelVolumeServers lists them: a
// GlusterFS volume's bricks) as its replica nodes, saying which servers
// are not nodes; nothing when labels name replica nodes already, when
// none is a node, or when storbench may not list nodes.
func ServersNodeLabels(ctx context.Context, client kubernetes.Interface, servers []string, labels map[string]string) {
	if result.LabelReplicaNodes.Of(labels) != "" || len(servers) == 0 {
		return
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return
	}
	var names, found, other []string
	for _, s := range servers {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		host := s
		if h, _, err := net.SplitHostPort(s); err == nil {
			host = h
		}
		if name, _ := NodeWithAddress(nodes.Items, host); name != "" {
			if !slices.Contains(names, name) {
				names = append(names, name)
			}
			found = append(found, host+" is "+name)
		} else {
			other = append(other, host)
		}
	}
	if len(names) == 0 {
		return
	}
	src := "the volume's servers by node address: " + strings.Join(found, ", ")
	if len(other) > 0 {
		src += "; not a node storbench can name: " + strings.Join(other, ", ")
	}
	result.LabelReplicaNodes.Set(labels, strings.Join(names, ","))
	result.LabelReplicaNodesSource.Set(labels, src)
}
