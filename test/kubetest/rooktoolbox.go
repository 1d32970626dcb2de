package kubetest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
)

// toolboxCeph is the toolbox's ceph: this host's ceph CLI, run in the
// host's root from the pod (its network is the pod's), with the test
// Ceph's configuration (CEPH_CONF, which names client.admin's keyring).
const toolboxCeph = "#!/bin/sh\nexec /toolbox/chroot /host /usr/bin/ceph \"$@\"\n"

// RookToolbox starts a pod that stands for Rook's toolbox in namespace ns
// on node: labelled app=rook-ceph-tools, container rook-ceph-tools, whose
// ceph CLI reaches the test Ceph as client.admin. Rook's own toolbox runs
// Ceph's image with the configuration it writes from Rook's objects; the
// test cluster has no image with the ceph CLI (Python), so this one runs
// image (the test cluster's fio image) with this host's ceph CLI under
// chroot (the host's root and its chroot binary mounted). It is removed
// at the end. It returns the pod's name.
func RookToolbox(t *testing.T, ctx context.Context, c *kubekit.Cluster, ns, node, image string) string {
	t.Helper()
	core := c.Client.CoreV1()
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "test-toolbox-bin", Namespace: ns}, Data: map[string]string{"ceph": toolboxCeph}}
	if _, err := core.ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	exe, file, dir := int32(0o755), corev1.HostPathFile, corev1.HostPathDirectory
	pod := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "rook-ceph-tools-test", Namespace: ns, Labels: map[string]string{"app": "rook-ceph-tools"}},
		Spec: corev1.PodSpec{
			NodeName:                      node,
			TerminationGracePeriodSeconds: new(int64),
			Containers: []corev1.Container{{Name: kubekit.RookToolboxContainer, Image: image, ImagePullPolicy: corev1.PullNever,
				Env: []corev1.EnvVar{{Name: "PATH", Value: "/toolbox/bin:/usr/bin:/bin"}, {Name: "CEPH_CONF", Value: os.Getenv("CEPH_CONF")}},
				VolumeMounts: []corev1.VolumeMount{{Name: "bin", MountPath: "/toolbox/bin"}, {Name: "chroot", MountPath: "/toolbox/chroot"},
					{Name: "host", MountPath: "/host"}}}},
			Volumes: []corev1.Volume{
				{Name: "bin", VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{
					LocalObjectReference: corev1.LocalObjectReference{Name: cm.Name}, DefaultMode: &exe}}},
				{Name: "chroot", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/usr/sbin/chroot", Type: &file}}},
				{Name: "host", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/", Type: &dir}}},
			},
		},
	}
	// A new namespace's default ServiceAccount comes a moment after it.
	for i := 0; ; i++ {
		_, err := core.Pods(ns).Create(ctx, pod, metav1.CreateOptions{})
		if err == nil {
			break
		}
		if i == 20 || !strings.Contains(err.Error(), "serviceaccount") {
			t.Fatal(err)
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Cleanup(func() {
		ctx := context.Background()
		if err := core.Pods(ns).Delete(ctx, pod.Name, metav1.DeleteOptions{GracePeriodSeconds: new(int64)}); err != nil {
			t.Errorf("deleting the toolbox pod: %v", err)
		}
		if err := core.ConfigMaps(ns).Delete(ctx, cm.Name, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting the toolbox's ConfigMap: %v", err)
		}
	})
	deadline := time.Now().Add(time.Minute)
	for {
		p, err := core.Pods(ns).Get(ctx, pod.Name, metav1.GetOptions{})
		if err == nil && p.Status.Phase == corev1.PodRunning {
			for _, cond := range p.Status.Conditions {
				if cond.Type == corev1.PodReady && cond.Status == corev1.ConditionTrue {
					return pod.Name
				}
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the toolbox pod %s/%s is not ready after a minute: %v %+v", ns, pod.Name, err, p)
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// Namespace makes a namespace named after prefix, deleted at the end.
func Namespace(t *testing.T, c *kubekit.Cluster, prefix string) string {
	t.Helper()
	ns := fmt.Sprintf("%s-%x", prefix, time.Now().UnixNano()&0xffffff)
	core := c.Client.CoreV1()
	if _, err := core.Namespaces().Create(context.Background(), &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := core.Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{}); err != nil {
			t.Errorf("deleting namespace %s: %v", ns, err)
		}
	})
	return ns
}
