package testenv

import (
	"bufio"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// interruptChild is set in the copy of this test binary that
// TestOnInterrupt starts: it registers undos that write files, says so on
// stdout, and waits to be signalled.
const interruptChild = "STORBENCH_TESTENV_INTERRUPT_CHILD"

func TestInterruptChild(t *testing.T) {
	mode := os.Getenv(interruptChild)
	if mode == "" {
		return // only as TestOnInterrupt's child
	}
	dir := os.Getenv("STORBENCH_TESTENV_INTERRUPT_DIR")
	if mode == "loop" {
		img := filepath.Join(dir, "disk.img")
		if err := os.WriteFile(img, make([]byte, 1<<20), 0o600); err != nil {
			t.Fatal(err)
		}
		os.Stdout.WriteString("registered " + AttachLoop(t, img) + "\n")
		time.Sleep(time.Minute)
		return
	}
	first := OnInterrupt("first", func() { os.WriteFile(filepath.Join(dir, "first"), []byte("1"), 0o644) })
	second := OnInterrupt("second", func() { os.WriteFile(filepath.Join(dir, "second"), []byte("2"), 0o644) })
	gone := OnInterrupt("gone", func() { os.WriteFile(filepath.Join(dir, "gone"), []byte("x"), 0o644) })
	gone()
	if mode == "none" { // nothing registered any more: the default action
		first()
		second()
	}
	os.Stdout.WriteString("registered\n")
	time.Sleep(time.Minute)
}

// TestOnInterrupt: a binary signalled while undos are registered runs
// each (not those done) and exits 130 on SIGINT, 143 on SIGTERM; with
// none registered any more, the signal kills it as before.
func TestOnInterrupt(t *testing.T) {
	for _, tc := range []struct {
		mode  string
		sig   syscall.Signal
		code  int
		files []string
	}{
		{"some", syscall.SIGINT, 130, []string{"first", "second"}},
		{"some", syscall.SIGTERM, 143, []string{"first", "second"}},
		{"none", syscall.SIGINT, -1, nil},
	} {
		t.Run(tc.mode+" "+tc.sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			cmd := exec.Command(os.Args[0], "-test.run", "^TestInterruptChild$", "-test.count=1")
			cmd.Env = append(os.Environ(), interruptChild+"="+tc.mode, "STORBENCH_TESTENV_INTERRUPT_DIR="+dir)
			out, err := cmd.StdoutPipe()
			if err != nil {
				t.Fatal(err)
			}
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			if line, err := bufio.NewReader(out).ReadString('\n'); err != nil || line != "registered\n" {
				cmd.Process.Kill()
				t.Fatalf("child said %q, %v", line, err)
			}
			cmd.Process.Signal(tc.sig)
			err = cmd.Wait()
			var exit *exec.ExitError
			if !errors.As(err, &exit) || exit.ExitCode() != tc.code {
				t.Errorf("child ended with %v: want exit code %d", err, tc.code)
			}
			for _, name := range []string{"first", "second", "gone"} {
				_, err := os.Stat(filepath.Join(dir, name))
				want := name != "gone" && tc.files != nil
				if (err == nil) != want {
					t.Errorf("undo %s ran: %v, want %v", name, err == nil, want)
				}
			}
		})
	}
}

// TestAttachLoopUndoneOnInterrupt: a test binary interrupted while a test
// holds a loop device (AttachLoop) detaches it before it exits; go test's
// Ctrl-C had left such devices attached, its cleanups never run.
func TestAttachLoopUndoneOnInterrupt(t *testing.T) {
	Loop(t)
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run", "^TestInterruptChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), interruptChild+"=loop", "STORBENCH_TESTENV_INTERRUPT_DIR="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	dev, ok := strings.CutPrefix(strings.TrimSpace(line), "registered ")
	if err != nil || !ok || !strings.HasPrefix(dev, "/dev/loop") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child said %q, %v", line, err)
	}
	attached := func() string {
		b, err := exec.Command("losetup", "--associated", filepath.Join(dir, "disk.img")).Output()
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	if a := attached(); !strings.HasPrefix(a, dev+":") {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the child's %s is not attached to its image: %q", dev, a)
	}
	cmd.Process.Signal(syscall.SIGINT)
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 130 {
		t.Errorf("child ended with %v: want exit code 130", err)
	}
	if a := attached(); a != "" {
		exec.Command("losetup", "--detach", dev).Run()
		t.Errorf("still attached after the interrupt: %s", a)
	}
}
