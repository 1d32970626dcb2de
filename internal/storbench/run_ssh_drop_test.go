package storbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

// TestHelperRunSSHDropped is not a test: TestRunSSHConnectionKilled runs
// the test binary as a storbench whose connection is killed mid-run. It
// says what still worked in the directory on the host the moment the run
// reported.
func TestHelperRunSSHDropped(t *testing.T) {
	target := os.Getenv("STORBENCH_SSH_DROPPED_RUN")
	if target == "" {
		t.Skip("the storbench process TestRunSSHConnectionKilled runs")
	}
	dir := os.Getenv("STORBENCH_SSH_DROPPED_DIR")
	st := store.NewLazy(filepath.Join(os.Getenv("STORBENCH_SSH_DROPPED_STORE"), "r.db"))
	defer st.Close()
	req := DefaultRunRequest()
	req.Suite, req.Telemetry, req.Targets = "testdata/run-long.yaml", false, []string{target}
	_, err := Run(context.Background(), st, req, nil)
	left := working(dir)
	fmt.Printf("fio=%d\n", fioIn(dir))
	for _, l := range left {
		fmt.Printf("left=%q\n", l)
	}
	fmt.Printf("lost=%v\n", errors.Is(err, ssh.ErrConnectionLost) && errors.Is(err, engine.ErrWorkloadFailed))
	fmt.Printf("error=%v\n", err)
}

// The connection's sshd processes killed during a write workload (as a
// crash of the host's sshd, or an OOM kill, would end them): the run
// reports only once the wrapper and fio are gone on the host, says so,
// and cleanup --ssh run straight after it removes the work directory.
func TestRunSSHConnectionKilled(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	servers := sshFleet(t, 1, true)
	dir := t.TempDir()
	target := sshURL(t, servers[0], dir)
	cmd, out := startWriting(t, "TestHelperRunSSHDropped", dir, "STORBENCH_SSH_DROPPED_RUN="+target,
		"STORBENCH_SSH_DROPPED_DIR="+dir, "STORBENCH_SSH_DROPPED_STORE="+t.TempDir())
	time.Sleep(time.Second) // well into the workload
	if n := servers[0].DropConnections(t); n == 0 {
		t.Fatal("no sshd connection process to kill")
	}
	dropped := time.Now()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the storbench process: %v\n%s", err, out.String())
	}
	t.Logf("the run reported and its process exited %s after the drop", time.Since(dropped).Round(10*time.Millisecond))
	said := out.String()
	t.Log(said)
	if !strings.Contains(said, "lost=true") || !strings.Contains(said, "nothing of its commands runs on") {
		t.Errorf("the run's error does not say the connection was lost and nothing of it runs on the host")
	}
	if !strings.Contains(said, "fio=0\n") || strings.Contains(said, "left=") {
		t.Errorf("the run reported while its processes still worked on the host")
	}
	rep, err := CleanupSSH(context.Background(), SSHCleanupRequest{Targets: []string{target}})
	if err != nil {
		t.Errorf("cleanup --ssh straight after: %v", err)
	}
	if left := entries(t, dir); len(left) > 0 {
		t.Errorf("after the run and cleanup --ssh %s holds %v (report %+v)", dir, left, rep)
	}
}

// startWriting starts the test binary as a storbench running the helper
// test named, with env added, and returns once fio writes in dir (on the
// host), with what the process says.
func startWriting(t *testing.T, helper, dir string, env ...string) (*exec.Cmd, *strings.Builder) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+helper+"$")
	cmd.Env = append(os.Environ(), env...)
	out := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for fioIn(dir) == 0 {
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("no fio in %s after 30s:\n%s", dir, out.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	return cmd, out
}
