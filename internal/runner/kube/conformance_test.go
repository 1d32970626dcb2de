package kube

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/testenv"
)

// kubeSubject is a class on a node of the fake cluster (PVCs bind, pods
// run, exec runs fio on this host). Leftovers are labelled objects and
// exec'd processes that outlived their stream.
func kubeSubject(t *testing.T, f *kubekittest.Fake, class string, opts TargetOptions, fileSize int64) runnertest.Subject {
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	return runnertest.Subject{
		Target: NewTarget(f.Cluster(), class, "node-a", 1, opts),
		Need:   runner.Need{RunID: testRunID, FileSize: fileSize, Writers: []string{"w"}},
		Leftovers: func() []string {
			objs, err := kubekit.FindLeftovers(context.Background(), f.Client, "", "")
			if err != nil {
				t.Fatal(err)
			}
			var left []string
			for _, o := range objs {
				left = append(left, o.Kind+" "+o.Namespace+"/"+o.Name)
			}
			// Like kwok, the fake exec leaves a cancelled process running
			// until the pod cmder's stop exec ends it.
			deadline := time.Now().Add(10 * time.Second)
			for f.Exec.Alive() > 0 && time.Now().Before(deadline) {
				time.Sleep(50 * time.Millisecond)
			}
			if n := f.Exec.Alive(); n > 0 {
				left = append(left, fmt.Sprintf("%d processes in the pod", n))
			}
			return left
		},
	}
}

// TestKubeTargetConformance runs the Target conformance suite on the fake
// cluster (Filesystem volumes; Block volumes holding data are refused in
// TestClusterRealNodeBlockVolumeWithDataIsRefused on a real node).
func TestKubeTargetConformance(t *testing.T) {
	testenv.Fio(t)
	runnertest.TargetConformance(t, runnertest.TargetSuite{
		Safe: func(t *testing.T) runnertest.Subject {
			return kubeSubject(t, kubekittest.NewFake(t), "fast", TargetOptions{}, 8<<20)
		},
		Unsafe: []runnertest.Unsafe{
			{Name: "no such class", Want: `"slow"`, Make: func(t *testing.T) runnertest.Subject {
				return kubeSubject(t, kubekittest.NewFake(t), "slow", TargetOptions{}, 8<<20)
			}},
			{Name: "PVC too small", Want: "pass --size", CheckOnly: true, Make: func(t *testing.T) runnertest.Subject {
				return kubeSubject(t, kubekittest.NewFake(t), "fast", TargetOptions{Size: 1 << 30}, 4<<30)
			}},
			{Name: "PVC never binds", Want: "not bound", PrepareOnly: true, Make: func(t *testing.T) runnertest.Subject {
				f := kubekittest.NewFake(t)
				f.NoBind = true
				return kubeSubject(t, f, "fast", TargetOptions{Timeout: 600 * time.Millisecond}, 8<<20)
			}},
			{Name: "pod unschedulable", Want: "not scheduled", PrepareOnly: true, Make: func(t *testing.T) runnertest.Subject {
				f := kubekittest.NewFake(t)
				f.NoSchedule = true
				return kubeSubject(t, f, "fast", TargetOptions{Timeout: 600 * time.Millisecond}, 8<<20)
			}},
		},
	})
}
