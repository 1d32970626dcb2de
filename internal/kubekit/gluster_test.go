package kubekit

import (
	"maps"
	"testing"

	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestClassReplication(t *testing.T) {
	tests := []struct {
		name    string
		params  map[string]string
		given   map[string]string // labels the user or the storage's resources set first
		want    map[string]string
		notices int
	}{
		{name: "the gluster class", params: map[string]string{"replicas": "3", "replicationModel": "client", "replicaNodes": "a, b,,b,c"},
			want: map[string]string{"replicas": "3", "replicas_source": "StorageClass g parameter replicas", "replication_model": "client",
				"replica_nodes": "a,b,c", "replica_nodes_source": "StorageClass g parameter replicaNodes"}},
		{name: "no statement", params: map[string]string{"nodePath": "/x"}, want: map[string]string{}},
		{name: "the user's labels win", params: map[string]string{"replicas": "3", "replicationModel": "client", "replicaNodes": "a"},
			given: map[string]string{"replicas": "2", "replication_model": "primary", "replica_nodes": "z"},
			want:  map[string]string{"replicas": "2", "replication_model": "primary", "replica_nodes": "z"}},
		{name: "unreadable", params: map[string]string{"replicas": "three", "replicationModel": "chain"}, want: map[string]string{}, notices: 2},
		{name: "zero copies", params: map[string]string{"replicas": "0"}, want: map[string]string{}, notices: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			labels := maps.Clone(tc.given)
			if labels == nil {
				labels = map[string]string{}
			}
			sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "g"}, Parameters: tc.params}
			notices := ClassReplication(sc, labels)
			if !maps.Equal(labels, tc.want) || len(notices) != tc.notices {
				t.Errorf("labels %v, notices %q; want %v and %d notices", labels, notices, tc.want, tc.notices)
			}
		})
	}
	if n := ClassReplication(nil, map[string]string{}); n != nil {
		t.Errorf("no class: %v", n)
	}
}
