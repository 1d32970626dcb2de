package safetytest

import (
	"bufio"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/testenv"
)

// MountHiddenAndUnsigned mounts an ext4 filesystem of dev in a private mount
// namespace (so this process's mountinfo does not show it) and then erases
// its superblock magic (the kernel keeps its copy): every fact storbench
// reads says blank, and only the exclusive open can tell.
func MountHiddenAndUnsigned(t testing.TB, dev string) {
	t.Helper()
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "mkfs")
	testenv.Tool(t, "unshare", "util-linux")
	// No journal, no lazy initialisation and no bitmap prefetch (ext4Quiet):
	// once mounted, the filesystem changes nothing on its own that would
	// change the device's checksum.
	Run(t, "mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
	mnt := t.TempDir()
	cmd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-c", "mount -o "+ext4Quiet+" "+dev+" "+mnt+" && echo mounted && exec sleep 600")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		// The namespace's mount goes with its last process; wait until the
		// device is free so the loop device can be detached.
		for i := 0; i < 50; i++ {
			if fd, err := unix.Open(dev, unix.O_RDONLY|unix.O_EXCL, 0); err == nil {
				unix.Close(fd)
				return
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
	line, _ := bufio.NewReader(out).ReadString('\n')
	if strings.TrimSpace(line) != "mounted" {
		t.Fatalf("mounting %s in a private namespace failed", dev)
	}
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{0, 0}, 0x438); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if found, err := exec.Command("blkid", "-p", dev).Output(); err == nil {
		t.Fatalf("blkid still finds the filesystem: %s", found)
	}
}
