package appfit

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/testenv"
)

var bins testenv.Binaries

func TestMain(m *testing.M) {
	code := m.Run()
	if err := bins.Remove(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		code = 1
	}
	os.Exit(code)
}

// storbench builds the real storbench: the clients are its hidden command.
func storbench(t *testing.T) string {
	t.Helper()
	return bins.Build(t, "github.com/storbench/storbench/cmd/storbench")
}

// localClient is a client on this host, probing dir.
func localClient(t *testing.T, dir string) Client {
	return Client{Cmder: execx.Local{}, Binary: storbench(t), Where: "this host", Dir: dir}
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

func unmountLater(t *testing.T, dir string) {
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// ext4 makes an ext4 filesystem on a fresh loop device and mounts it.
func ext4(t *testing.T) string {
	t.Helper()
	dev := testenv.LoopDevice(t, 256<<20)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs", "root")
	run(t, "mkfs.ext4", "-q", "-F", dev)
	mnt := filepath.Join(t.TempDir(), "ext4")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "mount", dev, mnt)
	unmountLater(t, mnt)
	return mnt
}

// mountVolatileOverlay mounts an overlay with the volatile option over dirs in
// base: the kernel's own filesystem whose fsync does nothing.
func mountVolatileOverlay(t *testing.T, base string) string {
	t.Helper()
	var d [4]string
	for i, n := range []string{"lower", "upper", "work", "merged"} {
		d[i] = filepath.Join(base, n)
		if err := os.Mkdir(d[i], 0o755); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command("mount", "-t", "overlay", "overlay", "-o",
		"lowerdir="+d[0]+",upperdir="+d[1]+",workdir="+d[2]+",volatile", d[3]).CombinedOutput()
	if err != nil {
		testenv.Missing(t, "overlay", "no overlayfs with the volatile option here (Linux 5.10): %v %s", err, out)
	}
	unmountLater(t, d[3])
	return d[3]
}

// sshfsPair serves export with sftp-server on 127.0.0.1 and mounts it twice
// with sshfs, as the test cluster's netfs class mounts its export once per
// node: two mounts of one export, each its own FUSE filesystem.
func sshfsPair(t *testing.T, export string) (string, string) {
	t.Helper()
	testenv.Root(t)
	testenv.Tool(t, "sshfs", "sshfs", "sshfs")
	socat := testenv.Tool(t, "socat", "socat", "sshfs")
	const sftp = "/usr/lib/openssh/sftp-server"
	if _, err := os.Stat(sftp); err != nil {
		testenv.Missing(t, "sshfs", "no %s (apt-get install openssh-sftp-server)", sftp)
	}
	port := testenv.FreePort(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv := exec.CommandContext(ctx, socat, fmt.Sprintf("TCP-LISTEN:%d,bind=127.0.0.1,reuseaddr,fork", port), "EXEC:"+sftp+" -e")
	if err := srv.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); _ = srv.Wait() }) // killed by the cancel: its exit status says so
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sftp server on port %d: %v", port, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var mnts [2]string
	for i := range mnts {
		mnts[i] = filepath.Join(t.TempDir(), fmt.Sprintf("mount%d", i))
		if err := os.Mkdir(mnts[i], 0o755); err != nil {
			t.Fatal(err)
		}
		run(t, "sshfs", "-o", fmt.Sprintf("directport=%d,idmap=none", port), "127.0.0.1:"+export, mnts[i])
		m := mnts[i]
		t.Cleanup(func() {
			if out, err := exec.Command("fusermount", "-u", m).CombinedOutput(); err != nil {
				t.Errorf("fusermount -u %s: %v %s", m, err, out)
			}
		})
	}
	return mnts[0], mnts[1]
}

// tmpfs mounts a small tmpfs: a filesystem with no disk under it.
func tmpfs(t *testing.T) string {
	t.Helper()
	testenv.Root(t)
	dir := filepath.Join(t.TempDir(), "tmpfs")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run(t, "mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", dir)
	unmountLater(t, dir)
	return dir
}
