package kube_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// checkCephFSClientPerNode proves class cephfs is served per node and
// shared: one claim (ReadWriteMany) used at once by a pod on writer, which
// writes a token, and a pod on reader, which reads it back; while both run,
// the MDS (ceph tell mds.a session ls) holds exactly two sessions rooted at
// the volume's directory, one from each node's own address (ceph.env's
// <node>_IP): each node's pods reach CephFS through a ceph-fuse client in
// that node's network namespace, not another node's.
func checkCephFSClientPerNode(t *testing.T, e *env, writer, reader string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	ns := unique("cephfs-clients")
	pods := e.client.CoreV1().Pods(ns)
	if _, err := e.client.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	claim := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: "shared", Namespace: ns},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: ptr("cephfs"),
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteMany},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("64Mi")}},
		},
	}
	if _, err := e.client.CoreV1().PersistentVolumeClaims(ns).Create(ctx, claim, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	// Cleanups run before cephUp's (registered earlier): the volume is gone
	// before Ceph goes down.
	t.Cleanup(func() {
		start := time.Now()
		deleteNamespaceAndPV(t, e, ns)
		t.Logf("pods, claim and volume deleted in %.1f s", time.Since(start).Seconds())
	})
	token := unique("written-on-" + writer)
	scripts := map[string]string{
		writer: "echo " + token + " > /data/token && sync && sleep 600",
		reader: "until [ -s /data/token ]; do sleep 0.2; done; cat /data/token; sleep 600",
	}
	for _, n := range []string{writer, reader} {
		if _, err := pods.Create(ctx, sharedPod(ns, n, scripts[n]), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(ctx, t, "the reader to read the writer's token", func() bool {
		out, err := pods.GetLogs(reader, &corev1.PodLogOptions{}).DoRaw(ctx)
		return err == nil && strings.TrimSpace(string(out)) == token
	})
	pvc, err := e.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, claim.Name, metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	pv, err := e.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil || pv.Spec.CSI == nil {
		t.Fatalf("PV of the claim: %v (%+v)", err, pv)
	}
	root := pv.Spec.CSI.VolumeAttributes["cephPath"]
	want := []string{cephNodeIP(t, writer), cephNodeIP(t, reader)}
	slices.Sort(want)
	got := mdsSessionIPs(t, root)
	t.Logf("volume %s (%s): MDS sessions from %v; writer %s, reader %s", pv.Spec.CSI.VolumeHandle, root, got, writer, reader)
	if !slices.Equal(got, want) {
		t.Errorf("MDS sessions rooted at %s come from %v, want one from each node's own address %v", root, got, want)
	}
}

func ptr[T any](v T) *T { return &v }

// sharedPod is a pod on node running script with claim "shared" at /data.
func sharedPod(ns, node, script string) *corev1.Pod {
	zero := int64(0)
	return &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: node, Namespace: ns},
		// a node selector, not nodeName: the scheduler binds the
		// WaitForFirstConsumer claim
		Spec: corev1.PodSpec{NodeSelector: map[string]string{corev1.LabelHostname: node}, RestartPolicy: corev1.RestartPolicyNever, TerminationGracePeriodSeconds: &zero,
			Containers: []corev1.Container{{Name: "c", Image: realImage, ImagePullPolicy: corev1.PullNever,
				Command:      []string{"/bin/sh", "-c", script},
				VolumeMounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}}}},
			Volumes: []corev1.Volume{{Name: "data", VolumeSource: corev1.VolumeSource{
				PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "shared"}}}},
		},
	}
}

// deleteNamespaceAndPV removes the namespace (pods, claim) and waits for
// the claim's volume to be deleted by the driver.
func deleteNamespaceAndPV(t *testing.T, e *env, ns string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pvc, err := e.client.CoreV1().PersistentVolumeClaims(ns).Get(ctx, "shared", metav1.GetOptions{})
	zero := int64(0)
	if err := e.client.CoreV1().Namespaces().Delete(ctx, ns, metav1.DeleteOptions{GracePeriodSeconds: &zero}); err != nil {
		t.Errorf("delete namespace %s: %v", ns, err)
		return
	}
	if err != nil || pvc.Spec.VolumeName == "" {
		return
	}
	waitFor(ctx, t, "volume "+pvc.Spec.VolumeName+" to be deleted", func() bool {
		_, err := e.client.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
		return err != nil
	})
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timeout waiting for %s", what)
		case <-time.After(300 * time.Millisecond):
		}
	}
}

// cephNodeIP is node's address in the cluster's ceph.env (<node>_IP).
func cephNodeIP(t *testing.T, node string) string {
	t.Helper()
	envFile := filepath.Join(filepath.Dir(os.Getenv("CLUSTER_ENV")), "ceph", "ceph.env")
	v := strings.ReplaceAll(node, "-", "_") + "_IP"
	out, err := exec.Command("bash", "-c", fmt.Sprintf(". %q && echo \"$%s\"", envFile, v)).Output()
	if ip := strings.TrimSpace(string(out)); err == nil && ip != "" {
		return ip
	}
	t.Fatalf("no %s in %s: %v", v, envFile, err)
	return ""
}

// mdsSessionIPs lists the client address of every MDS session rooted at
// root, sorted (Ceph's inst is "client.ID v1:IP:PORT/NONCE").
func mdsSessionIPs(t *testing.T, root string) []string {
	t.Helper()
	var errb bytes.Buffer
	cmd := exec.Command("ceph", "--connect-timeout", "10", "tell", "mds.a", "session", "ls", "--format", "json")
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("ceph tell mds.a session ls: %v: %s", err, errb.String())
	}
	var sessions []struct {
		Inst     string         `json:"inst"`
		Metadata map[string]any `json:"client_metadata"`
	}
	if err := json.Unmarshal(out, &sessions); err != nil {
		t.Fatalf("session ls: %v: %s", err, out)
	}
	var ips []string
	for _, s := range sessions {
		if r, _ := s.Metadata["root"].(string); r != root {
			continue
		}
		addr := s.Inst[strings.LastIndex(s.Inst, " ")+1:]
		addr = strings.TrimPrefix(strings.TrimPrefix(addr, "v1:"), "v2:")
		ips = append(ips, addr[:strings.LastIndex(addr, ":")])
	}
	slices.Sort(ips)
	return ips
}
