package classcheck_test

// Integration tests on the loopback cluster of scripts/k8s-integration.sh
// (one real node, kreal-node, and no dynamic provisioner): a no-provisioner
// class with local PVs on the real node stands for a node-local class.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"

	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/test/kubetest"
)

const (
	realNode  = "kreal-node"
	realImage = "localhost/kreal/fio:3.33"
)

// staticClass creates a no-provisioner WaitForFirstConsumer class with n
// local PVs in directories on the real node; all removed at the end.
func staticClass(t *testing.T, client kubernetes.Interface, n int) string {
	t.Helper()
	ctx := context.Background()
	name := fmt.Sprintf("sbq-static-%x", time.Now().UnixNano()&0xffffff)
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	retain := corev1.PersistentVolumeReclaimRetain
	_, err := client.StorageV1().StorageClasses().Create(ctx, &storagev1.StorageClass{
		ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: kubekit.NoProvisioner, VolumeBindingMode: &wffc, ReclaimPolicy: &retain},
		metav1.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.StorageV1().StorageClasses().Delete(context.Background(), name, metav1.DeleteOptions{}) })
	for i := 0; i < n; i++ {
		dir := filepath.Join(t.TempDir(), "pv")
		if err := os.MkdirAll(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		pv := &corev1.PersistentVolume{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%d", name, i)},
			Spec: corev1.PersistentVolumeSpec{
				StorageClassName:              name,
				Capacity:                      corev1.ResourceList{corev1.ResourceStorage: resource.MustParse("1Gi")},
				AccessModes:                   []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
				PersistentVolumeReclaimPolicy: retain,
				PersistentVolumeSource:        corev1.PersistentVolumeSource{Local: &corev1.LocalVolumeSource{Path: dir}},
				NodeAffinity: &corev1.VolumeNodeAffinity{Required: &corev1.NodeSelector{NodeSelectorTerms: []corev1.NodeSelectorTerm{{
					MatchExpressions: []corev1.NodeSelectorRequirement{{Key: corev1.LabelHostname, Operator: corev1.NodeSelectorOpIn, Values: []string{realNode}}}}}}},
			},
		}
		if _, err := client.CoreV1().PersistentVolumes().Create(ctx, pv, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		pvName := pv.Name
		t.Cleanup(func() {
			client.CoreV1().PersistentVolumes().Delete(context.Background(), pvName, metav1.DeleteOptions{})
		})
	}
	return name
}

func connect(t *testing.T) (*kubekit.Cluster, kubernetes.Interface) {
	t.Helper()
	client, kc := kubetest.Cluster(t)
	c, err := kubekit.Connect(kubekit.ConnectOptions{Kubeconfig: kc})
	if err != nil {
		t.Fatal(err)
	}
	return c, client
}

// nothingLeft fails when any object of the run is still on the cluster.
func nothingLeft(t *testing.T, client kubernetes.Interface, runID string) {
	t.Helper()
	ctx := context.Background()
	objs, err := kubekit.FindLeftovers(ctx, client, "", runID)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range objs {
		t.Errorf("left behind: %s", o)
	}
	// The run's claims are named with its whole ID; their PVs go after
	// the claims (the provisioner deletes them), within a minute.
	prefix := "sbq-" + strings.ToLower(runID) + "-"
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Second) {
		pvs, err := client.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var left []string
		for _, pv := range pvs.Items {
			if pv.Spec.ClaimRef != nil && strings.HasPrefix(pv.Spec.ClaimRef.Name, prefix) {
				left = append(left, fmt.Sprintf("PV %s for claim %s (%s)", pv.Name, pv.Spec.ClaimRef.Name, pv.Status.Phase))
			}
		}
		if len(left) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("left behind: %v", left)
			break
		}
	}
	nodes, err := client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		if n.Spec.Unschedulable {
			t.Errorf("node %s left cordoned", n.Name)
		}
	}
}

// Without the failover check (NoCordon), which cordons a node, the test
// shares the cluster: its class, PVs and checks are its own run's.
func TestClusterQualifyNodeLocalStaticClass(t *testing.T) {
	kubetest.Shared(t)
	c, client := connect(t)
	class := staticClass(t, client, 8)
	runID := fmt.Sprintf("it%06x", time.Now().UnixNano()&0xffffff)
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: class, Claims: 3, Image: realImage, PullPolicy: corev1.PullNever,
		Timeout: time.Minute, RunID: runID, NoCordon: true, Progress: func(m string) { t.Log(m) }})
	if err != nil {
		t.Fatal(err)
	}
	nothingLeft(t, client, runID)
	want := map[string]classcheck.Outcome{
		classcheck.CheckProvisioning:    classcheck.Works,
		classcheck.CheckPersistence:     classcheck.Works,
		classcheck.CheckSnapshot:        classcheck.NotSupportedDeclared,
		classcheck.CheckExpansionOnline: classcheck.NotSupportedDeclared,
		classcheck.CheckBlock:           classcheck.Skipped, // quick profile
		classcheck.CheckCleanup:         classcheck.Works,
	}
	for name, outcome := range want {
		ch := rep.Check(name)
		if ch == nil || ch.Outcome != outcome {
			t.Errorf("%s: %+v, want %s", name, ch, outcome)
		}
	}
	if ch := rep.Check(classcheck.CheckClone); ch == nil || ch.Outcome == classcheck.Works {
		t.Errorf("clone of a static class: %+v, want not supported or failed", ch)
	}
	prov := rep.Check(classcheck.CheckProvisioning)
	stages := map[string]classcheck.Stage{}
	for _, s := range prov.Stages {
		stages[s.Name] = s
	}
	for _, s := range []string{classcheck.StageBound, classcheck.StageMounted, classcheck.StageRunning, classcheck.StageWritten} {
		if len(stages[s].Samples) != 3 {
			t.Errorf("stage %s: %d samples, want 3", s, len(stages[s].Samples))
		}
	}
	// Milestones come in order for every claim.
	for i := 0; i < len(stages[classcheck.StageWritten].Samples) && i < len(stages[classcheck.StageRunning].Samples); i++ {
		r, w := stages[classcheck.StageRunning].Samples[i], stages[classcheck.StageWritten].Samples[i]
		if r <= 0 || w < r {
			t.Errorf("claim %d: running %v, written %v", i, r, w)
		}
	}
	if len(rep.Leaks) != 0 {
		t.Errorf("leaks: %v", rep.Leaks)
	}
	t.Logf("declared: %s; notes: %v", rep.Declared.Summary(), rep.Notes)
}

// Ctrl-C in the middle of provisioning leaves nothing behind. The test
// shares the cluster: its class and PVs are its own, and the failover
// check, which cordons a node, is left out should the cancel come late.
func TestClusterQualifyCancelledDuringProvisioning(t *testing.T) {
	kubetest.Shared(t)
	c, client := connect(t)
	class := staticClass(t, client, 4)
	runID := fmt.Sprintf("ic%06x", time.Now().UnixNano()&0xffffff)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	progress := func(m string) {
		t.Log(m)
		if strings.HasSuffix(m, "provisioning ...") {
			time.AfterFunc(1500*time.Millisecond, cancel)
		}
	}
	rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: class, Claims: 3, Image: realImage, PullPolicy: corev1.PullNever,
		Timeout: time.Minute, RunID: runID, NoCordon: true, Progress: progress})
	if err != nil {
		t.Fatal(err)
	}
	if ch := rep.Check(classcheck.CheckProvisioning); ch == nil || ch.Outcome != classcheck.Skipped {
		t.Errorf("provisioning after Ctrl-C: %+v, want skipped (interrupted)", ch)
	}
	if ch := rep.Check(classcheck.CheckCleanup); ch == nil || ch.Outcome != classcheck.Works {
		t.Errorf("cleanup: %+v", ch)
	}
	nothingLeft(t, client, runID)
}

// The library's entry point stores the qualification as a run that
// `storbench classes` reads back with a pick-two line. Without the
// failover check (NoCordon), the test shares the cluster.
func TestClusterMeasureClassStoredAndShown(t *testing.T) {
	kubetest.Shared(t)
	_, client := connect(t)
	_, kc := kubetest.Cluster(t)
	class := staticClass(t, client, 8)
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "sb.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	req := storbench.MeasureClassRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: kc}, Class: class, Image: realImage,
		PullPolicy: string(corev1.PullNever), WaitTimeout: time.Minute, NoCordon: true}
	m, err := storbench.MeasureClass(ctx, st, req)
	if err != nil {
		t.Fatal(err)
	}
	run, err := st.Run(ctx, m.Report.RunID)
	if err != nil || run.Status != result.StatusComplete {
		t.Fatalf("stored run %+v, %v", run, err)
	}
	classes, err := storbench.Classes(ctx, st, storbench.ClassesRequest{Cluster: kubekit.ConnectOptions{Kubeconfig: kc}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range classes {
		if c.Name != class {
			continue
		}
		if c.Qualification == nil || c.Qualification.RunID != m.Report.RunID {
			t.Fatalf("classes shows %+v, want run %s", c.Qualification, m.Report.RunID)
		}
		if !strings.Contains(c.PickTwo, "p50") || !(strings.Contains(c.PickTwo, "failover: skipped") || strings.Contains(c.PickTwo, "failover: node-pinned")) {
			t.Errorf("pick two %q", c.PickTwo)
		}
		t.Logf("pick two: %s", c.PickTwo)
		return
	}
	t.Fatalf("class %s not listed", class)
}
