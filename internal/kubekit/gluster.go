package kubekit

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	storagev1 "k8s.io/api/storage/v1"

	"github.com/storbench/storbench/internal/result"
)

// Class parameters in which a StorageClass states its own replication,
// for storage whose copies no API storbench reads describes: a class
// over a GlusterFS FUSE mount on every node (local-path-provisioner
// pointed at the mounts, as test/cluster/gluster.sh makes class
// "gluster"), whose PVs are host paths on the mount.
const (
	// ClassReplicas is the number of copies of each write ("3").
	ClassReplicas = "replicas"
	// ClassReplicationModel is how the copies travel: "client"
	// (GlusterFS, Longhorn), "primary" (Ceph) or "server" (result.Replication*).
	ClassReplicationModel = "replicationModel"
	// ClassReplicaNodes are the nodes holding the copies (the nodes of
	// the Gluster bricks), comma separated.
	ClassReplicaNodes = "replicaNodes"
)

// ClassReplication labels what a class's parameters state of its
// replication (ClassReplicas, ClassReplicationModel, ClassReplicaNodes),
// each with the class as its source, where neither the user nor the
// storage's own resources gave it. A parameter storbench cannot read is
// a notice, not a failure.
func ClassReplication(sc *storagev1.StorageClass, labels map[string]string) []string {
	if sc == nil {
		return nil
	}
	var notices []string
	from := func(p string) string { return fmt.Sprintf("StorageClass %s parameter %s", sc.Name, p) }
	if v, ok := sc.Parameters[ClassReplicas]; ok && result.LabelReplicas.Of(labels) == "" {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n > 0 {
			result.LabelReplicas.Set(labels, strconv.Itoa(n))
			result.LabelReplicasSource.Set(labels, from(ClassReplicas))
		} else {
			notices = append(notices, fmt.Sprintf("%s %q is not a number of copies: not used", from(ClassReplicas), v))
		}
	}
	if v, ok := sc.Parameters[ClassReplicationModel]; ok && result.LabelReplicationModel.Of(labels) == "" {
		if m := strings.ToLower(strings.TrimSpace(v)); slices.Contains([]string{result.ReplicationClient, result.ReplicationPrimary, result.ReplicationServer}, m) {
			result.LabelReplicationModel.Set(labels, m)
		} else {
			notices = append(notices, fmt.Sprintf("%s %q is not client, primary or server: not used", from(ClassReplicationModel), v))
		}
	}
	if v, ok := sc.Parameters[ClassReplicaNodes]; ok && result.LabelReplicaNodes.Of(labels) == "" {
		var nodes []string
		for _, n := range strings.Split(v, ",") {
			if n = strings.TrimSpace(n); n != "" && !slices.Contains(nodes, n) {
				nodes = append(nodes, n)
			}
		}
		if len(nodes) > 0 {
			result.LabelReplicaNodes.Set(labels, strings.Join(nodes, ","))
			result.LabelReplicaNodesSource.Set(labels, from(ClassReplicaNodes))
		}
	}
	return notices
}
