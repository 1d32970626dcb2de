package incluster

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/storbench/storbench/test/kubetest"
	"github.com/storbench/storbench/test/testcsi"
)

// image is the real nodes' locally built image (sh, coreutils, fio).
const image = "localhost/kreal/fio:3.33"

var snapshotGVR = schema.GroupVersionResource{Group: "snapshot.storage.k8s.io", Version: "v1", Resource: "volumesnapshots"}

type env struct {
	c     kubernetes.Interface
	dyn   dynamic.Interface
	ns    string
	nodes []string // real nodes, sorted by name (the host's own first)
}

func setup(t *testing.T) *env {
	t.Helper()
	c, kc := kubetest.Cluster(t)
	cfg, err := clientcmd.BuildConfigFromFlags("", kc)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.StorageV1().CSIDrivers().Get(ctx, testcsi.DefaultName, metav1.GetOptions{}); err != nil {
		t.Fatalf("CSIDriver %s: %v (test/cluster/csi.sh up did not run with this cluster)", testcsi.DefaultName, err)
	}
	e := &env{c: c, dyn: dyn}
	nodes, err := c.CoreV1().Nodes().List(ctx, metav1.ListOptions{LabelSelector: "kreal.local/real=true"})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range nodes.Items {
		e.nodes = append(e.nodes, n.Name)
	}
	if len(e.nodes) == 0 {
		t.Fatal("no real node (label kreal.local/real=true)")
	}
	name := "testcsi-" + strings.ToLower(regexp.MustCompile(`[^a-zA-Z0-9]+`).ReplaceAllString(t.Name(), "-"))
	if len(name) > 60 {
		name = name[:60]
	}
	e.ns = strings.TrimRight(name, "-")
	if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: e.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.teardown(t) })
	return e
}

// teardown deletes pods, snapshots and claims, and waits until the driver
// has deleted the volumes behind them, so no loop device outlives a test.
// The pods go first, with a grace period of a second (not 0: that removes
// the pod object at once, while the kubelet still unmounts its volume, and
// the driver refuses to delete a volume in use until the provisioner's
// backoff has grown to a minute); the kubelet removes a pod once its
// volumes are unmounted.
func (e *env) teardown(t *testing.T) {
	ctx := context.Background()
	bg := metav1.DeletePropagationBackground
	one := int64(1)
	if err := e.c.CoreV1().Pods(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{GracePeriodSeconds: &one, PropagationPolicy: &bg}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete pods: %v", err)
	}
	if err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		pods, err := e.c.CoreV1().Pods(e.ns).List(ctx, metav1.ListOptions{})
		return err == nil && len(pods.Items) == 0, err
	}); err != nil {
		t.Errorf("pods of namespace %s still there: %v", e.ns, err)
	}
	if err := e.dyn.Resource(snapshotGVR).Namespace(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete snapshots: %v", err)
	}
	if err := e.c.CoreV1().PersistentVolumeClaims(e.ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{}); err != nil {
		t.Errorf("delete claims: %v", err)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
		pvs, err := e.c.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{})
		if err != nil {
			return false, err
		}
		for _, pv := range pvs.Items {
			if ref := pv.Spec.ClaimRef; ref != nil && ref.Namespace == e.ns {
				return false, nil
			}
		}
		return true, nil
	})
	if err != nil {
		t.Errorf("volumes of namespace %s still there: %v", e.ns, err)
	}
	if err := e.c.CoreV1().Namespaces().Delete(ctx, e.ns, metav1.DeleteOptions{}); err != nil {
		t.Errorf("delete namespace: %v", err)
	}
}

type claimSpec struct {
	name, class, size string
	block             bool
	from              *corev1.TypedObjectReference // a snapshot or a claim
}

func (e *env) claim(t *testing.T, s claimSpec) {
	t.Helper()
	pvc := &corev1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Name: s.name},
		Spec: corev1.PersistentVolumeClaimSpec{
			StorageClassName: &s.class,
			AccessModes:      []corev1.PersistentVolumeAccessMode{corev1.ReadWriteOnce},
			Resources:        corev1.VolumeResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceStorage: resource.MustParse(s.size)}},
			DataSourceRef:    s.from,
		},
	}
	if s.block {
		m := corev1.PersistentVolumeBlock
		pvc.Spec.VolumeMode = &m
	}
	if _, err := e.c.CoreV1().PersistentVolumeClaims(e.ns).Create(context.Background(), pvc, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

type podSpec struct {
	name, node, claim, script string
	nonRoot                   bool // uid 1000 with fsGroup 2000
	block                     bool // the claim as /dev/xvda instead of /data
}

// pod runs script (sh) in a pod on node with the claim at /data.
func (e *env) pod(t *testing.T, s podSpec) {
	t.Helper()
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: s.name},
		Spec: corev1.PodSpec{
			RestartPolicy:                 corev1.RestartPolicyNever,
			NodeSelector:                  map[string]string{"kubernetes.io/hostname": s.node},
			TerminationGracePeriodSeconds: new(int64),
			Tolerations:                   []corev1.Toleration{{Operator: corev1.TolerationOpExists}},
			Containers: []corev1.Container{{
				Name: "c", Image: image, ImagePullPolicy: corev1.PullNever,
				Command: []string{"/bin/sh", "-c", s.script},
			}},
			Volumes: []corev1.Volume{{Name: "v", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: s.claim}}}},
		},
	}
	if s.block {
		p.Spec.Containers[0].VolumeDevices = []corev1.VolumeDevice{{Name: "v", DevicePath: "/dev/xvda"}}
	} else {
		p.Spec.Containers[0].VolumeMounts = []corev1.VolumeMount{{Name: "v", MountPath: "/data"}}
	}
	if s.nonRoot {
		uid, gid, fsGroup := int64(1000), int64(3000), int64(2000)
		p.Spec.SecurityContext = &corev1.PodSecurityContext{RunAsUser: &uid, RunAsGroup: &gid, FSGroup: &fsGroup}
	}
	if _, err := e.c.CoreV1().Pods(e.ns).Create(context.Background(), p, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// finished waits for a pod to end and returns its phase and log.
func (e *env) finished(t *testing.T, name string, timeout time.Duration) (corev1.PodPhase, string) {
	t.Helper()
	ctx := context.Background()
	var phase corev1.PodPhase
	err := wait.PollUntilContextTimeout(ctx, time.Second, timeout, true, func(ctx context.Context) (bool, error) {
		p, err := e.c.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		phase = p.Status.Phase
		return phase == corev1.PodSucceeded || phase == corev1.PodFailed, nil
	})
	if err != nil {
		t.Fatalf("pod %s did not finish within %s (phase %q): %v; events: %s", name, timeout, phase, err, e.events(t, "Pod", name))
	}
	return phase, e.log(t, name)
}

func (e *env) log(t *testing.T, name string) string {
	t.Helper()
	out, err := e.c.CoreV1().Pods(e.ns).GetLogs(name, &corev1.PodLogOptions{}).DoRaw(context.Background())
	if err != nil {
		t.Fatalf("log of %s: %v", name, err)
	}
	return string(out)
}

// succeeded waits for a pod to succeed and returns its log.
func (e *env) succeeded(t *testing.T, name string) string {
	t.Helper()
	phase, log := e.finished(t, name, 3*time.Minute)
	if phase != corev1.PodSucceeded {
		t.Fatalf("pod %s %s: %s", name, phase, log)
	}
	return log
}

func (e *env) deletePod(t *testing.T, name string) {
	t.Helper()
	ctx := context.Background()
	if err := e.c.CoreV1().Pods(e.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		_, err := e.c.CoreV1().Pods(e.ns).Get(ctx, name, metav1.GetOptions{})
		return apierrors.IsNotFound(err), nil
	})
	if err != nil {
		t.Fatalf("pod %s not gone: %v", name, err)
	}
}

func (e *env) events(t *testing.T, kind, name string) string {
	t.Helper()
	evs, err := e.c.CoreV1().Events(e.ns).List(context.Background(), metav1.ListOptions{
		FieldSelector: "involvedObject.kind=" + kind + ",involvedObject.name=" + name,
	})
	if err != nil {
		return err.Error()
	}
	var b strings.Builder
	for _, ev := range evs.Items {
		fmt.Fprintf(&b, "%s %s: %s; ", ev.Type, ev.Reason, ev.Message)
	}
	return b.String()
}

var shaLine = regexp.MustCompile(`(?m)^sha ([0-9a-f]{64})$`)

// sha returns the checksum a pod printed as "sha HEX".
func sha(t *testing.T, log string) string {
	t.Helper()
	m := shaLine.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no checksum in the pod's log: %q", log)
	}
	return m[1]
}

// The scripts pods run: write random data and print its checksum, or print
// the checksum of what is there.
const (
	writeData = `set -e; dd if=/dev/urandom of=/data/data bs=1M count=4 2>/dev/null; sync /data/data; echo sha $(sha256sum /data/data | cut -d' ' -f1)`
	readData  = `set -e; echo sha $(sha256sum /data/data | cut -d' ' -f1)`
)

// Every class provisions a volume that a pod on a real node can write as
// root, and as a non-root user with fsGroup everywhere except root-only.
func TestClusterEveryClassProvisionsAndAPodWrites(t *testing.T) {
	e := setup(t)
	node := e.nodes[0]
	// VolumeAttachments are watched from the start: once a pod has
	// finished, the attach-detach controller may detach its volume before
	// a list at the end would see it attached.
	seen := watchAttached(t, e.c, node)
	// class cephfs is ceph.sh's (CEPH_FS=1), tested with Ceph up:
	// TestClusterCeph/CephFSFromEveryNode
	modes := slices.DeleteFunc(slices.Clone(testcsi.Modes), func(m testcsi.Mode) bool { return m == testcsi.ModeCephFS })
	for _, m := range modes {
		e.claim(t, claimSpec{name: "c-" + string(m), class: "testcsi-" + string(m), size: "300Mi"})
		e.pod(t, podSpec{name: "root-" + string(m), node: node, claim: "c-" + string(m), script: writeData})
	}
	for _, m := range modes {
		log := e.succeeded(t, "root-"+string(m))
		sha(t, log)
		e.deletePod(t, "root-"+string(m))
	}
	for _, m := range modes {
		e.pod(t, podSpec{name: "user-" + string(m), node: node, claim: "c-" + string(m), nonRoot: true,
			script: `id; echo hello > /data/by-user && echo wrote`})
	}
	for _, m := range modes {
		phase, log := e.finished(t, "user-"+string(m), 3*time.Minute)
		wrote := phase == corev1.PodSucceeded && strings.Contains(log, "wrote")
		if want := m != testcsi.ModeRootOnly; wrote != want {
			t.Errorf("class testcsi-%s: a non-root writer with fsGroup wrote=%v, want %v (%s: %s)", m, wrote, want, phase, log)
		}
	}
	// The attacher made VolumeAttachments for the node.
	if n := seen(); n < len(modes) {
		t.Errorf("%d VolumeAttachments of %s on %s were seen attached, want %d", n, testcsi.DefaultName, node, len(modes))
	}
}

// watchAttached watches VolumeAttachments until the test ends; count says
// how many distinct volumes of the driver were seen attached to node.
func watchAttached(t *testing.T, c kubernetes.Interface, node string) (count func() int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	w, err := c.StorageV1().VolumeAttachments().Watch(ctx, metav1.ListOptions{})
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	var mu sync.Mutex
	pvs := map[string]bool{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range w.ResultChan() {
			va, ok := ev.Object.(*storagev1.VolumeAttachment)
			if ok && va.Spec.Attacher == testcsi.DefaultName && va.Spec.NodeName == node && va.Status.Attached && va.Spec.Source.PersistentVolumeName != nil {
				mu.Lock()
				pvs[*va.Spec.Source.PersistentVolumeName] = true
				mu.Unlock()
			}
		}
	}()
	t.Cleanup(func() { w.Stop(); cancel(); <-done })
	return func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(pvs)
	}
}

// A shared volume written on one real node is read back intact on another
// after the first pod is gone; a local one is refused there by the
// scheduler.
func TestClusterVolumeMovesBetweenNodesOnlyWhenShared(t *testing.T) {
	kubetest.Shared(t) // two volumes a node at most, its own namespace: shares the cluster
	e := setup(t)
	if len(e.nodes) < 2 {
		t.Fatalf("needs two real nodes, the cluster has %v", e.nodes)
	}
	a, b := e.nodes[0], e.nodes[1]
	e.claim(t, claimSpec{name: "shared", class: "testcsi-shared", size: "300Mi"})
	e.claim(t, claimSpec{name: "local", class: "testcsi-local", size: "300Mi"})
	e.pod(t, podSpec{name: "write-shared", node: a, claim: "shared", script: writeData})
	e.pod(t, podSpec{name: "write-local", node: a, claim: "local", script: writeData})
	written := sha(t, e.succeeded(t, "write-shared"))
	e.succeeded(t, "write-local")
	e.deletePod(t, "write-shared")
	e.deletePod(t, "write-local")

	e.pod(t, podSpec{name: "read-shared", node: b, claim: "shared", script: readData})
	if got := sha(t, e.succeeded(t, "read-shared")); got != written {
		t.Errorf("read on %s: sha256 %s, written on %s: %s", b, got, a, written)
	}

	e.pod(t, podSpec{name: "read-local", node: b, claim: "local", script: readData})
	// The scheduler's reason; older releases said "volume node affinity conflict".
	reason := regexp.MustCompile(`didn't match PersistentVolume's node affinity|volume node affinity conflict`)
	err := wait.PollUntilContextTimeout(context.Background(), time.Second, time.Minute, true, func(ctx context.Context) (bool, error) {
		return reason.MatchString(e.events(t, "Pod", "read-local")), nil
	})
	if err != nil {
		t.Errorf("the local volume's reader on %s: no FailedScheduling with the volume node affinity reason: %s", b, e.events(t, "Pod", "read-local"))
	}
	p, err := e.c.CoreV1().Pods(e.ns).Get(context.Background(), "read-local", metav1.GetOptions{})
	if err != nil || p.Status.Phase != corev1.PodPending || p.Spec.NodeName != "" {
		t.Errorf("the local volume's reader on %s: %v, want it Pending and unscheduled", b, err)
	}
}

// Snapshot restore (to a larger size) and clone: the capable class gives the
// snapshot's data; bad-snapshot visibly gives the source's current data.
func TestClusterSnapshotRestoreAndClone(t *testing.T) {
	kubetest.Shared(t) // its own namespace and claims: shares the cluster
	e := setup(t)
	node := e.nodes[len(e.nodes)-1]
	for _, m := range []testcsi.Mode{testcsi.ModeShared, testcsi.ModeBadSnapshot} {
		t.Run(string(m), func(t *testing.T) {
			t.Parallel()
			src := "src-" + string(m)
			e.claim(t, claimSpec{name: src, class: "testcsi-" + string(m), size: "300Mi"})
			e.pod(t, podSpec{name: src + "-1", node: node, claim: src, script: writeData})
			before := sha(t, e.succeeded(t, src+"-1"))
			e.deletePod(t, src+"-1")
			snap := e.snapshot(t, "snap-"+string(m), src)
			e.pod(t, podSpec{name: src + "-2", node: node, claim: src, script: writeData})
			after := sha(t, e.succeeded(t, src+"-2"))
			e.deletePod(t, src+"-2")

			group := "snapshot.storage.k8s.io"
			e.claim(t, claimSpec{name: "restored-" + string(m), class: "testcsi-" + string(m), size: "400Mi",
				from: &corev1.TypedObjectReference{APIGroup: &group, Kind: "VolumeSnapshot", Name: snap}})
			e.pod(t, podSpec{name: "restored-" + string(m), node: node, claim: "restored-" + string(m),
				script: readData + `; df -k /data | tail -1`})
			log := e.succeeded(t, "restored-"+string(m))
			got := sha(t, log)
			switch m {
			case testcsi.ModeShared:
				if got != before {
					t.Errorf("restore holds sha256 %s, the snapshot's data %s (after it: %s)", got, before, after)
				}
				if kib := dfKiB(t, log); kib < 300<<10 { // the 300 MiB source holds about 236 MiB of xfs, 400 MiB about 336
					t.Errorf("restored filesystem is %d KiB, want the larger 400 MiB claim's", kib)
				}
			case testcsi.ModeBadSnapshot:
				if got != after {
					t.Errorf("bad-snapshot restore holds sha256 %s, want the source's current %s (the broken promise)", got, after)
				}
			}

			e.claim(t, claimSpec{name: "clone-" + string(m), class: "testcsi-" + string(m), size: "300Mi",
				from: &corev1.TypedObjectReference{Kind: "PersistentVolumeClaim", Name: src}})
			e.pod(t, podSpec{name: "clone-" + string(m), node: node, claim: "clone-" + string(m), script: readData})
			if got := sha(t, e.succeeded(t, "clone-"+string(m))); got != after {
				t.Errorf("clone holds sha256 %s, its source %s", got, after)
			}
		})
	}
}

func (e *env) snapshot(t *testing.T, name, claim string) string {
	t.Helper()
	ctx := context.Background()
	obj := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "snapshot.storage.k8s.io/v1",
		"kind":       "VolumeSnapshot",
		"metadata":   map[string]any{"name": name},
		"spec": map[string]any{
			"volumeSnapshotClassName": "testcsi",
			"source":                  map[string]any{"persistentVolumeClaimName": claim},
		},
	}}
	if _, err := e.dyn.Resource(snapshotGVR).Namespace(e.ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	err := wait.PollUntilContextTimeout(ctx, time.Second, 2*time.Minute, true, func(ctx context.Context) (bool, error) {
		s, err := e.dyn.Resource(snapshotGVR).Namespace(e.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return false, err
		}
		ready, _, _ := unstructured.NestedBool(s.Object, "status", "readyToUse")
		return ready, nil
	})
	if err != nil {
		t.Fatalf("snapshot %s not ready: %v; events: %s", name, err, e.events(t, "VolumeSnapshot", name))
	}
	return name
}

var dfRow = regexp.MustCompile(`(?m)^\S+\s+(\d+)\s+\d+\s+\d+\s+\d+%\s+/data$`)

func dfKiB(t *testing.T, log string) int64 {
	t.Helper()
	m := dfRow.FindStringSubmatch(log)
	if m == nil {
		t.Fatalf("no df row for /data in %q", log)
	}
	n, _ := strconv.ParseInt(m[1], 10, 64)
	return n
}

// Online expansion: a running pod sees its filesystem grow on the capable
// class; on stuck-expand the claim never grows.
func TestClusterOnlineExpansion(t *testing.T) {
	kubetest.Shared(t) // its own namespace and claims: shares the cluster
	e := setup(t)
	node := e.nodes[0]
	watchDF := `while true; do df -k /data | tail -1; sleep 1; done`
	for _, m := range []testcsi.Mode{testcsi.ModeShared, testcsi.ModeStuckExpand} {
		e.claim(t, claimSpec{name: string(m), class: "testcsi-" + string(m), size: "300Mi"})
		e.pod(t, podSpec{name: string(m), node: node, claim: string(m), script: watchDF})
	}
	ctx := context.Background()
	for _, m := range []testcsi.Mode{testcsi.ModeShared, testcsi.ModeStuckExpand} {
		err := wait.PollUntilContextTimeout(ctx, time.Second, 3*time.Minute, true, func(ctx context.Context) (bool, error) {
			p, err := e.c.CoreV1().Pods(e.ns).Get(ctx, string(m), metav1.GetOptions{})
			return err == nil && p.Status.Phase == corev1.PodRunning, err
		})
		if err != nil {
			t.Fatalf("pod %s not running: %v; %s", m, err, e.events(t, "Pod", string(m)))
		}
		patch := []byte(`{"spec":{"resources":{"requests":{"storage":"512Mi"}}}}`)
		if _, err := e.c.CoreV1().PersistentVolumeClaims(e.ns).Patch(ctx, string(m), types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	start := time.Now()
	var grown time.Duration
	nudged := false
	err := wait.PollUntilContextTimeout(ctx, 2*time.Second, 4*time.Minute, true, func(ctx context.Context) (bool, error) {
		if !nudged {
			var err error
			if nudged, err = e.nudgeOnceResized(ctx, string(testcsi.ModeShared), resource.MustParse("512Mi")); err != nil {
				return false, err
			}
		}
		log := e.log(t, string(testcsi.ModeShared))
		rows := dfRow.FindAllStringSubmatch(log, -1)
		if len(rows) == 0 {
			return false, nil
		}
		kib, _ := strconv.ParseInt(rows[len(rows)-1][1], 10, 64)
		grown = time.Since(start)
		return kib > 400<<10, nil
	})
	if err != nil {
		t.Fatalf("the shared volume's filesystem did not grow in the running pod: %v; claim events: %s", err, e.events(t, "PersistentVolumeClaim", string(testcsi.ModeShared)))
	}
	t.Logf("online expansion seen in the pod after %s (pod annotated after the controller's resize: %v)", grown.Round(time.Second), nudged)
	pvc, err := e.c.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, string(testcsi.ModeStuckExpand), metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := pvc.Status.Capacity[corev1.ResourceStorage]; got.Cmp(resource.MustParse("512Mi")) >= 0 {
		t.Errorf("stuck-expand claim grew to %s", got.String())
	}
	if events := e.events(t, "PersistentVolumeClaim", string(testcsi.ModeStuckExpand)); !strings.Contains(events, "VolumeResizeFailed") && !hasResizing(pvc) {
		t.Errorf("stuck-expand claim shows no failing or pending resize: %s", events)
	}
}

// nudgeOnceResized annotates the claim's pod (of the same name) once the
// controller has grown its volume to size, and says whether it did. The
// kubelet grows a mounted volume when it next syncs the pod: within its
// sync period (a minute) on its own, at once on a pod update. The driver's
// node expansion is what the test checks, not the kubelet's timer.
func (e *env) nudgeOnceResized(ctx context.Context, name string, size resource.Quantity) (bool, error) {
	pvc, err := e.c.CoreV1().PersistentVolumeClaims(e.ns).Get(ctx, name, metav1.GetOptions{})
	if err != nil || pvc.Spec.VolumeName == "" {
		return false, nil
	}
	pv, err := e.c.CoreV1().PersistentVolumes().Get(ctx, pvc.Spec.VolumeName, metav1.GetOptions{})
	if err != nil {
		return false, nil
	}
	if got := pv.Spec.Capacity[corev1.ResourceStorage]; got.Cmp(size) < 0 {
		return false, nil
	}
	patch := fmt.Sprintf(`{"metadata":{"annotations":{"storbench.io/test-resized":%q}}}`, time.Now().UTC().Format(time.RFC3339Nano))
	if _, err := e.c.CoreV1().Pods(e.ns).Patch(ctx, name, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return false, fmt.Errorf("annotating pod %s: %w", name, err)
	}
	return true, nil
}

func hasResizing(pvc *corev1.PersistentVolumeClaim) bool {
	for _, c := range pvc.Status.Conditions {
		if c.Type == corev1.PersistentVolumeClaimResizing && c.Status == corev1.ConditionTrue {
			return true
		}
	}
	return false
}

// A raw block volume: bytes written on one node read back on another.
func TestClusterBlockVolumeMoves(t *testing.T) {
	kubetest.Shared(t) // one volume, its own namespace: shares the cluster
	e := setup(t)
	a, b := e.nodes[0], e.nodes[len(e.nodes)-1]
	e.claim(t, claimSpec{name: "block", class: "testcsi-shared", size: "64Mi", block: true})
	e.pod(t, podSpec{name: "write", node: a, claim: "block", block: true,
		script: `set -e; dd if=/dev/urandom of=/tmp/d bs=1M count=4 2>/dev/null; dd if=/tmp/d of=/dev/xvda bs=1M conv=fsync 2>/dev/null; echo sha $(sha256sum /tmp/d | cut -d' ' -f1)`})
	written := sha(t, e.succeeded(t, "write"))
	e.deletePod(t, "write")
	e.pod(t, podSpec{name: "read", node: b, claim: "block", block: true,
		script: `set -e; dd if=/dev/xvda of=/tmp/d bs=1M count=4 2>/dev/null; echo sha $(sha256sum /tmp/d | cut -d' ' -f1)`})
	if got := sha(t, e.succeeded(t, "read")); got != written {
		t.Errorf("block bytes read on %s: sha256 %s, written on %s: %s", b, got, a, written)
	}
}
