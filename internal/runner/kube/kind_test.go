package kube

import (
	"testing"

	"github.com/storbench/storbench/internal/runner/runnertest"
)

// The k8s kind's entry into the kind conformance suite: parsing, doctor
// and the refusal of Spec.Target. Opening a class needs a cluster: the
// cluster tier runs storbench's own runs on k8s: targets.
func TestKindConformance(t *testing.T) {
	runnertest.KindConformance(t, runnertest.KindSuite{
		Kind:  Kind{},
		Valid: []string{"k8s:longhorn", "k8s:default", "k8s:gluster://127.0.0.1/vol1"},
		Malformed: []runnertest.Malformed{
			{Target: "k8s:", Want: "write k8s:STORAGECLASS"},
			{Target: "k8s:a@node1", Want: "Kube.Nodes or Kube.NodeSelector"},
			{Target: "k8s:a/b", Want: "write k8s:STORAGECLASS"},
			{Target: "k8s:gluster://127.0.0.1", Want: "write k8s:gluster://SERVER/VOLUME"},
			{Target: "k8s:gluster:///vol", Want: "write k8s:gluster://SERVER/VOLUME"},
		},
		Foreign: []string{"/srv/bench", "ssh://pi01/srv", "rbd:bench", "gluster://server/vol"},
	})
}
