package kubetest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/kubekit"
)

var crds = schema.GroupVersionResource{Group: "apiextensions.k8s.io", Version: "v1", Resource: "customresourcedefinitions"}

// RookBlockPool makes Rook's CephBlockPool object name in namespace ns
// with spec, after installing Rook's CephBlockPool CRD when the API
// server has none (and removing it at the end then). Only the object is
// made: no Rook operator acts on it.
func RookBlockPool(t *testing.T, ctx context.Context, c *kubekit.Cluster, ns, name string, spec map[string]any) {
	t.Helper()
	crd := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
		"metadata": map[string]any{"name": "cephblockpools.ceph.rook.io"},
		"spec": map[string]any{
			"group": "ceph.rook.io", "scope": "Namespaced",
			"names": map[string]any{"kind": "CephBlockPool", "listKind": "CephBlockPoolList", "plural": "cephblockpools", "singular": "cephblockpool"},
			"versions": []any{map[string]any{"name": "v1", "served": true, "storage": true,
				"schema": map[string]any{"openAPIV3Schema": map[string]any{"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
		},
	}}
	_, err := c.Dynamic.Resource(crds).Create(ctx, crd, metav1.CreateOptions{})
	switch {
	case err == nil:
		t.Cleanup(func() {
			if err := c.Dynamic.Resource(crds).Delete(context.Background(), crd.GetName(), metav1.DeleteOptions{}); err != nil {
				t.Errorf("deleting CRD %s: %v", crd.GetName(), err)
			}
		})
	case !apierrors.IsAlreadyExists(err):
		t.Fatalf("installing CRD %s: %v", crd.GetName(), err)
	}
	pool := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "ceph.rook.io/v1", "kind": "CephBlockPool",
		"metadata": map[string]any{"name": name, "namespace": ns},
		"spec":     spec,
	}}
	deadline := time.Now().Add(30 * time.Second)
	for { // the CRD is served once established
		_, err := c.Dynamic.Resource(kubekit.CephBlockPools).Namespace(ns).Create(ctx, pool, metav1.CreateOptions{})
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("creating CephBlockPool %s/%s: %v", ns, name, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// RookOSDPods starts a pod for each OSD in namespace ns that stands for
// Rook's OSD pod (its Deployment's), labelled as Rook labels them
// (app=rook-ceph-osd, ceph-osd-id, topology-location-host with the OSD's
// crush host, device-class), on the node named after that host. The
// OSDs themselves run outside Kubernetes (test/cluster/ceph.sh); the pod
// runs image, sleeping. It waits until every pod runs; they go with the
// namespace, or at the end.
func RookOSDPods(t *testing.T, ctx context.Context, c *kubekit.Cluster, ns, image string, osds []ceph.OSD) {
	t.Helper()
	core := c.Client.CoreV1()
	var names []string
	for _, o := range osds {
		id := strconv.Itoa(o.ID)
		pod := &corev1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-osd-" + id + "-test", Namespace: ns, Labels: map[string]string{
				"app": "rook-ceph-osd", "ceph-osd-id": id, "topology-location-host": o.Host, "device-class": o.DeviceClass}},
			Spec: corev1.PodSpec{NodeName: o.Host, TerminationGracePeriodSeconds: new(int64),
				Containers: []corev1.Container{{Name: "osd", Image: image, ImagePullPolicy: corev1.PullNever, Command: []string{"sleep", "3600"}}}},
		}
		if _, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
			t.Fatalf("creating pod %s/%s: %v", ns, pod.Name, err)
		}
		names = append(names, pod.Name)
	}
	t.Cleanup(func() {
		for _, n := range names {
			err := core.Pods(ns).Delete(context.Background(), n, metav1.DeleteOptions{GracePeriodSeconds: new(int64)})
			if err != nil && !apierrors.IsNotFound(err) {
				t.Errorf("deleting pod %s/%s: %v", ns, n, err)
			}
		}
	})
	deadline := time.Now().Add(time.Minute)
	for _, n := range names {
		for {
			p, err := core.Pods(ns).Get(ctx, n, metav1.GetOptions{})
			if err == nil && p.Status.Phase == corev1.PodRunning {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("pod %s/%s is not running after a minute: %v", ns, n, podState(p, err))
			}
			time.Sleep(300 * time.Millisecond)
		}
	}
}

// podState is a pod's phase and its containers' waiting reasons, or err.
func podState(p *corev1.Pod, err error) string {
	if err != nil {
		return err.Error()
	}
	s := string(p.Status.Phase)
	for _, cs := range p.Status.ContainerStatuses {
		if w := cs.State.Waiting; w != nil {
			s += fmt.Sprintf("; %s: %s %s", cs.Name, w.Reason, w.Message)
		}
	}
	return s
}
