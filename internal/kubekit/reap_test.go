package kubekit_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/kubekit/kubekittest"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/testenv"
)

// fio's main process killed in the pod leaves its job processes orphaned
// to the container's init: the exec wrapper kills them before the command
// returns, so nothing works in the pod's directory once it has.
func TestPodCmderKillsOrphanedJobs(t *testing.T) {
	testenv.Fio(t)
	le := &kubekittest.LocalExec{Root: t.TempDir()}
	dir := filepath.Join(le.Root, "ns", "pod")
	t.Cleanup(func() { proc.Reader{}.StopWorkingIn(dir, "", 5*time.Second) })
	c := &kubekit.PodCmder{Exec: le, Namespace: "ns", Pod: "pod", Container: kubekit.ContainerName}
	done := make(chan error, 1)
	go func() {
		done <- c.Command(context.Background(), "fio", "--name=held", "--rw=randwrite", "--bs=4k", "--size=8m",
			"--runtime=120", "--time_based", "--numjobs=2", "--filename=held.dat", "--output-format=json").SetStdout(&strings.Builder{}).Run()
	}()
	rd := proc.Reader{}
	var main proc.Stat
	deadline := time.Now().Add(30 * time.Second)
	for main.PID == 0 {
		if time.Now().After(deadline) {
			t.Fatal("fio did not start its two jobs within 30s")
		}
		time.Sleep(20 * time.Millisecond)
		ps, _ := rd.WorkingIn(dir)
		fios := map[int]proc.Stat{}
		for _, p := range ps {
			if comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.PID)); strings.TrimSpace(string(comm)) == "fio" {
				fios[p.PID] = p
			}
		}
		for _, p := range fios {
			if _, parentIsFio := fios[p.PPID]; !parentIsFio && len(fios) >= 3 {
				main = p
			}
		}
	}
	if err := syscall.Kill(main.PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err == nil {
			t.Error("a killed fio reported success")
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the command did not return after fio's main process was killed")
	}
	if left, _ := rd.WorkingIn(dir); len(left) > 0 {
		t.Errorf("processes left working in the pod's directory: %v", left)
	}
}
