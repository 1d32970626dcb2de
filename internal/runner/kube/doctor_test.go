package kube

import (
	"context"
	"strings"
	"testing"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	k8stesting "k8s.io/client-go/testing"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/result"
)

func TestDoctor(t *testing.T) {
	tainted := kubekittest.Node("cp", nil)
	tainted.Spec.Taints = []corev1.Taint{{Key: "node-role.kubernetes.io/control-plane", Effect: corev1.TaintEffectNoSchedule}}
	lh := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "longhorn",
		Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "driver.longhorn.io"}
	mgr := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "lh-a", Namespace: "longhorn-system", Labels: map[string]string{"app": "longhorn-manager"}},
		Spec: corev1.PodSpec{NodeName: "node-a"}, Status: corev1.PodStatus{Phase: corev1.PodRunning}}
	iscsi := &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e1", Namespace: "longhorn-system"},
		InvolvedObject: corev1.ObjectReference{Kind: "Pod", Name: "instance-manager-b"}, Reason: "FailedMount",
		Message: "failed to execute: executable file not found: iscsiadm"}
	f := kubekittest.NewFake(t, tainted, lh, mgr, iscsi)
	f.Client.PrependReactor("create", "selfsubjectaccessreviews", func(a k8stesting.Action) (bool, runtime.Object, error) {
		r := a.(k8stesting.CreateAction).GetObject().(*authv1.SelfSubjectAccessReview)
		attr := r.Spec.ResourceAttributes
		r.Status.Allowed = !(attr.Verb == "delete" && attr.Resource == "persistentvolumeclaims") && attr.Resource != "namespaces"
		return true, r, nil
	})
	block := kubekit.RBACFeature{Name: "another feature's block", Unlocks: "its checks", Grant: "apply its.yaml",
		Permissions: []kubekit.Permission{{Verb: "delete", Resource: "persistentvolumeclaims", Namespaced: true}}}
	checks := Doctor(context.Background(), f.Cluster(), DoctorOptions{Image: kubekit.DefaultImage, RBAC: []kubekit.RBACFeature{block}})
	text := func(c result.Check) string {
		return string(c.Status) + " " + c.Name + ": " + c.Detail + " fix: " + c.Fix
	}
	want := map[string]bool{
		"fail may delete persistentvolumeclaims: missing permission: delete persistentvolumeclaims in namespace bench": false,
		"info may create namespaces":                                        false,
		"info node cp":                                                      false,
		"warn Longhorn manager on node-b":                                   false,
		"fail iSCSI initiator: Pod instance-manager-b":                      false,
		"ok StorageClass longhorn: default; provisioner driver.longhorn.io": false,
		// The blocks a feature hands the doctor, then telemetry's own.
		"info another feature's block: not granted (missing delete persistentvolumeclaims)": false,
		"ok kubelet stats (opt-in): granted (1 permissions)":                                false,
	}
	for _, c := range checks {
		for w := range want {
			if strings.HasPrefix(text(c), w) {
				want[w] = true
			}
		}
		if c.Status == result.CheckFail && c.Fix == "" {
			t.Errorf("failure without a fix: %s", text(c))
		}
	}
	for w, seen := range want {
		if !seen {
			t.Errorf("no check %q among:", w)
			for _, c := range checks {
				t.Log(text(c))
			}
		}
	}
}

func TestFailover(t *testing.T) {
	cases := []struct {
		provisioner string
		params      map[string]string
		want        string
	}{
		{"driver.longhorn.io", nil, "yes"},
		{"driver.longhorn.io", map[string]string{"numberOfReplicas": "1"}, "no"},
		{"rook-ceph.rbd.csi.ceph.com", nil, "yes"},
		{"nfs.csi.k8s.io", nil, "yes"},
		{"cluster.local/nfs-subdir-external-provisioner", nil, "yes"},
		{"org.democratic-csi.iscsi", nil, "yes"},
		{"rancher.io/local-path", nil, "no"},
		{"kubernetes.io/no-provisioner", nil, "no"},
		{"topolvm.io", nil, "no"},
		{"zfs.csi.openebs.io", nil, "no"},
		{"io.openebs.csi-mayastor", map[string]string{"repl": "3"}, "yes"},
		{"example.com/mystery", nil, "unknown"},
	}
	for _, tc := range cases {
		if got, why := kubekit.Failover(tc.provisioner, tc.params); got != tc.want || why == "" {
			t.Errorf("Failover(%s, %v) = %s (%s), want %s", tc.provisioner, tc.params, got, why, tc.want)
		}
	}
}

func TestClasses(t *testing.T) {
	yes := true
	f := kubekittest.NewFake(t, &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "local"}, Provisioner: kubekit.NoProvisioner, AllowVolumeExpansion: &yes})
	got, err := kubekit.Classes(context.Background(), f.Client, map[string][]string{"driver.example.com": {"fast-snap"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d classes", len(got))
	}
	fast, local := got[0], got[1]
	if fast.Name != "fast" || !fast.Dynamic || fast.Snapshots != "yes: fast-snap" || fast.Reclaim != "Retain" {
		t.Errorf("fast: %+v", fast)
	}
	if local.Dynamic || local.Failover != "no" || !local.Expansion || local.Snapshots != "no" || local.BindingMode != "Immediate" {
		t.Errorf("local: %+v", local)
	}
}

func TestLeftoversAndReleasedVolumes(t *testing.T) {
	labels := func(run string) map[string]string {
		return map[string]string{kubekit.LabelManagedBy: kubekit.ManagedBy, kubekit.LabelRunID: run}
	}
	released := func(name, claim string) *corev1.PersistentVolume {
		return &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: name},
			Spec:   corev1.PersistentVolumeSpec{ClaimRef: &corev1.ObjectReference{Namespace: "bench", Name: claim}, StorageClassName: "fast"},
			Status: corev1.PersistentVolumeStatus{Phase: corev1.VolumeReleased}}
	}
	f := kubekittest.NewFake(t,
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "storbench-20261122-010101-aaaa-1", Namespace: "bench", Labels: labels("20261122-010101-aaaa")}},
		&corev1.PersistentVolumeClaim{ObjectMeta: metav1.ObjectMeta{Name: "storbench-20261122-020202-bbbb-1", Namespace: "other", Labels: labels("20261122-020202-bbbb")}},
		&corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "someone-elses", Namespace: "bench"}},
		released("pv-ours", "storbench-20261122-010101-aaaa-1"),
		released("pv-theirs", "storbench-results"),
	)
	ctx := context.Background()
	one, err := kubekit.FindLeftovers(ctx, f.Client, "", "20261122-010101-aaaa")
	if err != nil || len(one) != 1 || one[0].Kind != "pod" {
		t.Fatalf("one run: %v %v", one, err)
	}
	all, err := kubekit.FindLeftovers(ctx, f.Client, "", "")
	if err != nil || len(all) != 2 {
		t.Fatalf("all runs: %v %v", all, err)
	}
	if res := kubekit.DeleteObjects(ctx, f.Client, all, time.Second); res.Err() != nil || len(res.Deleted) != 2 {
		t.Fatalf("delete: %+v", res)
	}
	if _, err := f.Client.CoreV1().Pods("bench").Get(ctx, "someone-elses", metav1.GetOptions{}); err != nil {
		t.Errorf("an unlabelled pod was touched: %v", err)
	}
	vols, err := kubekit.FindReleasedVolumes(ctx, f.Client)
	if err != nil || len(vols) != 1 || vols[0].Name != "pv-ours" || vols[0].Command != "kubectl delete pv pv-ours" {
		t.Errorf("released volumes: %+v %v", vols, err)
	}
}

// k8s:default is the cluster's default StorageClass (the newest of
// several), a class really named default itself, and a cluster without a
// default a refusal saying how to mark one.
func TestResolveClass(t *testing.T) {
	ctx := context.Background()
	def := func(name string, at time.Time) *storagev1.StorageClass {
		return &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name, CreationTimestamp: metav1.NewTime(at),
			Annotations: map[string]string{"storageclass.kubernetes.io/is-default-class": "true"}}, Provisioner: "p"}
	}
	now := time.Now()
	f := kubekittest.NewFake(t, def("local-path", now.Add(-time.Hour)), def("longhorn", now))
	if name, note, err := kubekit.ResolveClass(ctx, f.Client, "default"); err != nil || name != "longhorn" || !strings.Contains(note, "longhorn, the cluster's default") {
		t.Errorf("default: %q %q %v", name, note, err)
	}
	if name, _, err := kubekit.ResolveClass(ctx, f.Client, "fast"); err != nil || name != "fast" {
		t.Errorf("a named class: %q %v", name, err)
	}
	named := kubekittest.NewFake(t, def("local-path", now), &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "default"}, Provisioner: "p"})
	if name, note, err := kubekit.ResolveClass(ctx, named.Client, "default"); err != nil || name != "default" || note != "" {
		t.Errorf("a class named default: %q %q %v", name, note, err)
	}
	if _, _, err := kubekit.ResolveClass(ctx, kubekittest.NewFake(t).Client, "default"); err == nil || !strings.Contains(err.Error(), "no default StorageClass") {
		t.Errorf("no default: %v", err)
	}
}
