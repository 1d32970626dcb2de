package kube

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/runner"
)

// TestClientsGrowReuseAndRelease: a step's clients are the target's own
// pod and pods made beside it (each with a PVC, or sharing the target's
// ReadWriteMany one); a smaller step makes none, a larger one only the
// missing; ReleaseClients leaves the target's own pod and PVC, and its
// cleanup the rest.
func TestClientsGrowReuseAndRelease(t *testing.T) {
	tests := []struct {
		name string
		mode corev1.PersistentVolumeAccessMode
		// perClient is the objects each client beyond the first adds.
		perClient int
	}{
		{name: "a volume each", mode: corev1.ReadWriteOnce, perClient: 2},
		{name: "one shared volume", mode: corev1.ReadWriteMany, perClient: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := kubekittest.NewFake(t)
			tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 5 * time.Second, AccessMode: tc.mode})
			if g := tg.ClientGroup(); g != "k8s:fast" {
				t.Errorf("group %q", g)
			}
			p, err := tg.Prepare(context.Background(), need())
			if err != nil {
				t.Fatal(err)
			}
			for _, step := range []struct{ n, objects int }{{3, 2 + 2*tc.perClient}, {2, 2 + 2*tc.perClient}, {4, 2 + 3*tc.perClient}} {
				cs, err := tg.Clients(context.Background(), p, need(), step.n)
				if err != nil {
					t.Fatal(err)
				}
				seen := map[string]bool{}
				for _, c := range cs {
					seen[c.Name] = true
				}
				if len(cs) != step.n || len(seen) != step.n || cs[0].Cmder != p.Cmder {
					t.Errorf("%d clients asked: %d, %d names, the first the target's own pod %v", step.n, len(cs), len(seen), cs[0].Cmder == p.Cmder)
				}
				if got := f.Labelled(); got != step.objects {
					t.Errorf("after a step of %d: %d labelled objects, want %d", step.n, got, step.objects)
				}
			}
			if err := tg.ReleaseClients(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := f.Labelled(); got != 2 {
				t.Errorf("after ReleaseClients: %d labelled objects, want the target's pod and PVC", got)
			}
			if err := p.Cleanup(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := f.Labelled(); got != 0 {
				t.Errorf("after cleanup: %d labelled objects", got)
			}
		})
	}
}

func TestClientsRefuse(t *testing.T) {
	tests := []struct {
		name string
		opts TargetOptions
		need runner.Need
		want string
	}{
		{name: "block volume", opts: TargetOptions{VolumeMode: corev1.PersistentVolumeBlock}, need: need(), want: "Kube.VolumeMode"},
		{name: "file beyond the PVC", opts: TargetOptions{Size: 1 << 30}, need: runner.Need{RunID: testRunID, FileSize: 1 << 30},
			want: "holds at most 921.6 MiB"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := kubekittest.NewFake(t)
			tg := NewTarget(f.Cluster(), "fast", "node-a", 1, tc.opts)
			p := &runner.Prepared{Cmder: &kubekit.PodCmder{Namespace: "bench", Pod: objectName(testRunID, 1)}}
			_, err := tg.Clients(context.Background(), p, tc.need, 2)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Clients = %v, want %q", err, tc.want)
			}
			if f.Labelled() != 0 {
				t.Errorf("a refusal created %d objects", f.Labelled())
			}
		})
	}
}

func TestAccessModeHint(t *testing.T) {
	failed := errors.New("target k8s:local-path@n: PVC x not bound: its provisioner failed: NodePath only supports ReadWriteOnce")
	tests := []struct {
		name string
		mode corev1.PersistentVolumeAccessMode
		err  error
		hint bool
	}{
		{name: "RWX refused", mode: corev1.ReadWriteMany, err: failed, hint: true},
		{name: "RWO refused", mode: corev1.ReadWriteOnce, err: failed},
		{name: "RWX, another failure", mode: corev1.ReadWriteMany, err: errors.New("pod not running with fio ready within 2m")},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tg := &Target{class: "local-path", opts: TargetOptions{AccessMode: tc.mode}}
			got := tg.accessModeHint(tc.err)
			if hint := strings.Contains(got.Error(), "does not provide ReadWriteMany volumes; leave out Kube.AccessMode ReadWriteMany"); hint != tc.hint || !errors.Is(got, tc.err) {
				t.Errorf("%v: hint %v, want %v", got, hint, tc.hint)
			}
		})
	}
}

// TestClientsRefuseBeyondThePodLimit: a node that can run 3 pods takes
// the target's own and 2 clients; a step of 4 is refused at once,
// creating nothing more.
func TestClientsRefuseBeyondThePodLimit(t *testing.T) {
	f := kubekittest.NewFake(t)
	n, err := f.Client.CoreV1().Nodes().Get(context.Background(), "node-a", metav1.GetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n.Status.Allocatable = corev1.ResourceList{corev1.ResourcePods: resource.MustParse("3")}
	if _, err := f.Client.CoreV1().Nodes().UpdateStatus(context.Background(), n, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	tg := NewTarget(f.Cluster(), "fast", "node-a", 1, TargetOptions{Timeout: 5 * time.Second})
	p, err := tg.Prepare(context.Background(), need())
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := errors.Join(tg.ReleaseClients(context.Background()), p.Cleanup(context.Background())); err != nil {
			t.Error(err)
		}
	}()
	if _, err := tg.Clients(context.Background(), p, need(), 3); err != nil {
		t.Fatal(err)
	}
	before := f.Labelled()
	_, err = tg.Clients(context.Background(), p, need(), 4)
	if err == nil || !strings.Contains(err.Error(), "node node-a runs 3 of its 3 pods: the step's 1 more clients do not fit") {
		t.Errorf("a fourth client: %v", err)
	}
	if f.Labelled() != before {
		t.Errorf("the refused step made objects: %d, was %d", f.Labelled(), before)
	}
}
