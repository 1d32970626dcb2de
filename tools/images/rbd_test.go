package images_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/storbench/storbench/tools/images"
	"github.com/storbench/storbench/tools/internal/toolenv"
)

// cephLock serializes standalone Ceph clusters, as test/cephtest does
// (they share a subnet).
const cephLock = "/tmp/storbench-ceph-standalone.lock"

// standaloneCeph brings up a 3-OSD Ceph with the repository's harness
// (test/cluster/ceph.sh standalone up: the monitor on a bridge of this
// host, OSDs in network namespaces, pool rbd, cephx) and returns its
// monitor's address, fsid and client.admin's keyring; it goes with the test.
func standaloneCeph(t *testing.T) (monIP, fsid string, keyring []byte) {
	t.Helper()
	for _, tool := range []string{"ceph-mon", "ceph-osd", "ceph-mgr", "ceph", "rbd", "ip", "tc"} {
		toolenv.Need(t, tool)
	}
	lf, err := os.OpenFile(cephLock, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(toolenv.Repo(t), "test", "cluster", "ceph.sh")
	tag := strconv.Itoa(os.Getpid() % 100000)
	dir := filepath.Join("/var/tmp", "storbench-ceph-img"+tag)
	env := append(os.Environ(), "CEPH_DIR="+dir, "CEPH_TAG="+tag)
	toolenv.Cleanup(t, "the standalone Ceph in "+dir, func() {
		defer lf.Close()
		down := exec.Command("bash", script, "standalone", "down")
		down.Env = env
		if out, err := down.CombinedOutput(); err != nil {
			t.Errorf("ceph.sh standalone down: %v\n%s", err, out)
		}
	})
	up := exec.Command("bash", script, "standalone", "up", "3")
	up.Env = env
	if out, err := up.CombinedOutput(); err != nil {
		t.Fatalf("ceph.sh standalone up: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "ceph.env"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "MON_IP="); ok {
			monIP = strings.Trim(v, `"`)
		}
	}
	f, err := os.ReadFile(filepath.Join(dir, "fsid"))
	if err != nil || monIP == "" {
		t.Fatalf("ceph.env %s: no MON_IP, or fsid: %v", b, err)
	}
	keyring, err = os.ReadFile(filepath.Join(dir, "ceph.client.admin.keyring"))
	if err != nil {
		t.Fatal(err)
	}
	return monIP, strings.TrimSpace(string(f)), keyring
}

// The fio image carries the rbd CLI and what librados loads at run time:
// inside the image (with /dev, /proc and /sys as a pod has them), with
// only a ceph.conf and a keyring in /etc/ceph as k8s:rbd:POOL's pods have, rbd makes an
// image on a real Ceph, fio's rbd engine writes it, and rbd removes it.
func TestFioImageRBD(t *testing.T) {
	if runtime.GOARCH != "amd64" || os.Geteuid() != 0 {
		toolenv.Missing(t, "root on amd64", "the image is run with chroot")
	}
	res := build(t)
	img, cf := platformImage(t, written(t, res, images.FioName), "linux/amd64")
	root := unpack(t, img)
	if cf.Config.Labels["io.storbench.ceph.version"] == "" {
		t.Errorf("no ceph version label: %v", cf.Config.Labels)
	}
	mon, fsid, keyring := standaloneCeph(t)
	conf := "[global]\nfsid = " + fsid + "\nmon host = " + mon + "\nauth cluster required = cephx\nauth service required = cephx\nauth client required = cephx\n"
	if err := os.MkdirAll(filepath.Join(root, "etc", "ceph"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "ceph", "ceph.conf"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "etc", "ceph", "keyring"), keyring, 0o600); err != nil {
		t.Fatal(err)
	}
	job := `set -e; rbd create rbd/imagecheck --size 16M
fio --name=rbd --ioengine=rbd --clientname=admin --pool=rbd --rbdname=imagecheck --size=4m --bs=1m --rw=write --direct=1 \
  --iodepth=4 --randrepeat=0 --refill_buffers --output-format=json
rbd rm --no-progress rbd/imagecheck; rbd ls rbd`
	out, err := runAsPod(root, cf.Config.Env, "/bin/sh", "-c", job)
	if err != nil {
		t.Fatalf("rbd and fio's rbd engine in the image: %v\n%s", err, out)
	}
	if after := checkWrite(t, out, 4<<20); strings.Contains(string(after), "imagecheck") {
		t.Errorf("the image is still listed after rbd rm:\n%s", after)
	}
}
