// Package kubekittest is a Kubernetes cluster for unit tests of code that
// uses kubekit: a fake clientset with a simulated control plane and
// kubelet, and an executor that runs a pod's commands as local processes.
package kubekittest

import (
	"context"
	"errors"
	"io"
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

	"github.com/storbench/storbench/internal/kubekit"
)

// Fake is a fake clientset with a simulated control plane and
// kubelet: PVCs bind, pods land on their node and run, unless a test says
// otherwise. Exec runs commands as local processes in a per-pod directory,
// and, like kwok's exec, a cancelled stream does not stop the process.
type Fake struct {
	t      *testing.T
	Client *fake.Clientset
	Exec   *LocalExec
	// NoBind leaves PVCs Pending; NoSchedule leaves pods unscheduled.
	NoBind, NoSchedule bool
	// MutatePod, when set, has the last word on a created pod's state.
	MutatePod func(*corev1.Pod)
}

// NewFake makes a Fake holding a StorageClass "fast" and nodes node-a and
// node-b, besides objs.
func NewFake(t *testing.T, objs ...runtime.Object) *Fake {
	t.Helper()
	reclaim := corev1.PersistentVolumeReclaimRetain
	base := []runtime.Object{
		&storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Provisioner: "driver.example.com",
			Parameters: map[string]string{"numberOfReplicas": "3"}, ReclaimPolicy: &reclaim},
		Node("node-a", map[string]string{"storage": "nvme"}),
		Node("node-b", map[string]string{"storage": "sd"}),
	}
	f := &Fake{t: t, Client: fake.NewClientset(append(base, objs...)...), Exec: &LocalExec{Root: t.TempDir()}}
	f.Client.PrependReactor("create", "persistentvolumeclaims", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pvc := a.(k8stesting.CreateAction).GetObject().(*corev1.PersistentVolumeClaim)
		if !f.NoBind {
			pv := &corev1.PersistentVolume{ObjectMeta: metav1.ObjectMeta{Name: "pv-" + pvc.Name},
				Spec: corev1.PersistentVolumeSpec{PersistentVolumeReclaimPolicy: reclaim,
					ClaimRef: &corev1.ObjectReference{Namespace: pvc.Namespace, Name: pvc.Name}}}
			if err := f.Client.Tracker().Add(pv); err != nil {
				t.Error(err)
			}
			pvc.Spec.VolumeName = pv.Name
			pvc.Status.Phase = corev1.ClaimBound
		}
		return false, nil, nil
	})
	f.Client.PrependReactor("create", "pods", func(a k8stesting.Action) (bool, runtime.Object, error) {
		pod := a.(k8stesting.CreateAction).GetObject().(*corev1.Pod)
		if f.NoSchedule {
			pod.Status.Phase = corev1.PodPending
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodScheduled, Status: corev1.ConditionFalse,
				Reason: "Unschedulable", Message: "0/10 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }"}}
			return false, nil, nil
		}
		pod.Spec.NodeName = pod.Spec.NodeSelector["kubernetes.io/hostname"]
		if !f.NoBind {
			pod.Status.Phase = corev1.PodRunning
			pod.Status.Conditions = []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue}}
		}
		if f.MutatePod != nil {
			f.MutatePod(pod)
		}
		return false, nil, nil
	})
	return f
}

// Node is a ready arm64 node with 8 GiB of memory, labelled with its
// hostname and labels.
func Node(name string, labels map[string]string) *corev1.Node {
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

// Cluster is a kubekit.Cluster on the fake, working in namespace "bench".
func (f *Fake) Cluster() *kubekit.Cluster {
	return kubekit.NewClusterForClient(f.Client, f.Exec, "bench")
}

// Labelled counts the pods and PVCs that carry storbench's label.
func (f *Fake) Labelled() int {
	f.t.Helper()
	objs, err := kubekit.FindLeftovers(context.Background(), f.Client, "", "")
	if err != nil {
		f.t.Fatal(err)
	}
	return len(objs)
}

// LocalExec runs commands on this host in <root>/<namespace>/<pod>.
type LocalExec struct {
	Root string
	mu   sync.Mutex
	// Fail, when set, is returned by every exec.
	Fail error
	// calls records every command's argv.
	calls [][]string
	// outlived are processes whose stream was cancelled; each channel
	// closes when its process exits.
	outlived []chan struct{}
}

// Exec runs req.Command in the pod's directory.
func (l *LocalExec) Exec(ctx context.Context, req kubekit.ExecRequest) error {
	l.mu.Lock()
	l.calls = append(l.calls, req.Command)
	fail := l.Fail
	l.mu.Unlock()
	if fail != nil {
		return fail
	}
	dir := filepath.Join(l.Root, req.Namespace, req.Pod)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	c := exec.Command(req.Command[0], req.Command[1:]...)
	// A cancelled stream delivers nothing more, as a kubelet's closed exec
	// stream does, though the process runs on.
	stdout, stderr := &streamEnd{w: req.Stdout}, &streamEnd{w: req.Stderr}
	c.Dir, c.Stdin, c.Stdout, c.Stderr = dir, req.Stdin, stdout, stderr
	if req.Stdout == nil {
		c.Stdout = nil
	}
	if req.Stderr == nil {
		c.Stderr = nil
	}
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
		stdout.end()
		stderr.end()
		l.mu.Lock()
		l.outlived = append(l.outlived, exited)
		l.mu.Unlock()
		return ctx.Err()
	}
}

// Commands returns the argv of every command run so far.
func (l *LocalExec) Commands() [][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([][]string(nil), l.calls...)
}

// Alive reports processes that outlived their stream and still run.
func (l *LocalExec) Alive() int {
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

// streamEnd passes writes on until end, then drops them.
type streamEnd struct {
	mu    sync.Mutex
	w     io.Writer
	ended bool
}

func (s *streamEnd) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ended {
		return len(p), nil
	}
	return s.w.Write(p)
}

func (s *streamEnd) end() {
	s.mu.Lock()
	s.ended = true
	s.mu.Unlock()
}
