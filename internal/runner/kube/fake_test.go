package kube

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	utilexec "k8s.io/client-go/util/exec"
)

// fakeCluster is a fake clientset with a simulated control plane and
// kubelet: PVCs bind, pods land on their node and run, unless a test says
// otherwise. Exec runs commands as local processes in a per-pod directory,
// and, like kwok's exec, a cancelled stream does not stop the process.
type fakeCluster struct {
	t      *testing.T
	client *fake.Clientset
	exec   *localExec
	// noBind leaves PVCs Pending; noSchedule leaves pods unscheduled.
	noBind, noSchedule bool
	// mutatePod, when set, has the last word on a created pod's state.
	mutatePod func(*corev1.Pod)
}

func newFakeCluster(t *testing.T, objs ...runtime.Object) *fakeCluster {
	t.Helper()
	reclaim := corev1.PersistentVolumeReclaimRetain
	base := []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "driver.example.com",
			Parameters: map[string]string{"numberOfReplicas": "3"}, ReclaimPolicy: &reclaim},
		node("node-a", map[string]string{"storage": "nvme"}),
		node("node-b", map[string]string{"storage": "sd"}),
	}
	f := &fakeCluster{t: t, client: fake.NewClientset(append(base, objs...)...), exec: &localExec{root: t.TempDir()}}
	f.client.PrependReactor("create", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pvc := a.(k8stesting.CreateAction).GetObject().(*corev1.PersistentVolumeClaim)
		if !f.noBind {
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + pvc.Name},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: reclaim,
					ClaimRef: &corev1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name}}}
			if err := f.client.Tracker().Add(pv); err != nil {
				t.Error(err)
			}
			pvc.Spec.VolumeName = pv.Name
			pvc.Status.Phase = corev1.ClaimBound
		}
		return false, nil, nil
	})
	f.client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if f.noSchedule {
			pod.Status.Phase = corev1.PodPending
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/10 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"}}
			return false, nil, nil
		}
		pod.Spec.NodeName = pod.Spec.NodeSelector["kubernetes.io/hostname"]
		if !f.noBind {
			pod.Status.Phase = corev1.PodRunning
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if f.mutatePod != nil {
			f.mutatePod(pod)
		}
		return false, nil, nil
	})
	return f
}

func node(name string, labels map[string]string) *corev1.Node {
	l := map[string]string{"kubernetes.io/hostname": name}
	for k, v := range labels {
		l[k] = v
	}
	return &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l},
		Status: corev1.NodeStatus{
			Conditions: []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}},
			NodeInfo:   corev1.NodeSystemInfo{Architecture: "arm64", KernelVersion: "6.6.0"},
			Capacity:   corev1.ResourceList{corev1.ResourceMemory: *resource.NewQuantity(8<<30, resource.BinarySI)},
		}}
}

func (f *fakeCluster) cluster() *Cluster {
	return NewClusterForClient(f.client, f.exec, "bench")
}

// labelled counts the pods and PVCs that carry storbench's label.
func (f *fakeCluster) labelled() int {
	f.t.Helper()
	objs, err := FindLeftovers(context.Background(), f.client, "", "")
	if err != nil {
		f.t.Fatal(err)
	}
	return len(objs)
}

// localExec runs commands on this host in <root>/<namespace>/<pod>.
type localExec struct {
	root string
	mu   sync.Mutex
	// fail, when set, is returned by every exec.
	fail error
	// calls records every command's argv.
	calls [][]string
	// outlived are processes whose stream was cancelled; each channel
	// closes when its process exits.
	outlived []chan struct{}
}

func (l *localExec) Exec(ctx context.Context, req ExecRequest) error {
	l.mu.Lock()
	l.calls = append(l.calls, req.Command)
	fail := l.fail
	l.mu.Unlock()
	if fail != nil {
		return fail
	}
	dir := filepath.Join(l.root, req.Namespace, req.Pod)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := exec.Command(req.Command[0], req.Command[1:]...)
	c.Dir, c.Stdin, c.Stdout, c.Stderr = dir, req.Stdin, req.Stdout, req.Stderr
	if err := c.Start(); err != nil {
		return err
	}
	done := make(chan error, 1)
	exited := make(chan struct{})
	go func() { err := c.Wait(); close(exited); done <- err }()
	select {
	case err := <-done:
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return utilexec.CodeExitError{Err: err, Code: ee.ExitCode()}
		}
		return err
	case <-ctx.Done():
		l.mu.Lock()
		l.outlived = append(l.outlived, exited)
		l.mu.Unlock()
		return ctx.Err()
	}
}

func (l *localExec) commands() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]string(nil), l.calls...)
}

// alive reports processes that outlived their stream and still run.
func (l *localExec) alive() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	n := 0
	for _, ch := range l.outlived {
		select {
		case <-ch:
		default:
			n++
		}
	}
	return n
}
