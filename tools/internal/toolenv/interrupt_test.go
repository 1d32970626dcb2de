package toolenv

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

const cleanupChild = "STORBENCH_TOOLENV_CLEANUP_CHILD"

// TestCleanupChild runs only as TestCleanupOnSignal's child: two undos
// registered, one of them done in a subtest, then it waits for a signal.
func TestCleanupChild(t *testing.T) {
	dir := os.Getenv(cleanupChild)
	if dir == "" {
		return
	}
	mark := func(name string) func() { return func() { os.WriteFile(filepath.Join(dir, name), nil, 0o644) } }
	t.Run("done", func(t *testing.T) { Cleanup(t, "done", mark("done")) })
	os.Remove(filepath.Join(dir, "done")) // its t.Cleanup ran: not pending any more
	Cleanup(t, "pending", mark("pending"))
	os.Stdout.WriteString("registered\n")
	time.Sleep(time.Minute)
}

// TestCleanupOnSignal: a test binary stopped by SIGINT runs the undos
// still pending (not those its tests already ran) and exits 130.
func TestCleanupOnSignal(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestCleanupChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), cleanupChild+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(out)
	for {
		line, err := r.ReadString('\n')
		if err != nil {
			cmd.Process.Kill()
			t.Fatalf("the child ended before registering: %v", err)
		}
		if line == "registered\n" {
			break
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("child ended with %v: want exit code 130", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "pending")); err != nil {
		t.Errorf("the pending undo did not run: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
		t.Error("the undo already done ran again")
	}
}
