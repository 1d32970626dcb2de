package images_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/storbench/storbench/tools/images"
	"github.com/storbench/storbench/tools/internal/toolenv"
)

// glusterVolume brings up a two-brick (replica 2) Gluster volume with the repository's
// harness (test/cluster/gluster.sh standalone-up, in network namespaces
// of its own) and returns its gluster.env; it goes with the test.
func glusterVolume(t *testing.T) map[string]string {
	t.Helper()
	for _, tool := range []string{"glusterd", "glusterfs", "ip", "tc", "unshare", "mount"} {
		toolenv.Need(t, tool)
	}
	script := filepath.Join(toolenv.Repo(t), "test", "cluster", "gluster.sh")
	dir, err := os.MkdirTemp("", "sbgfimg")
	if err != nil {
		t.Fatal(err)
	}
	toolenv.Cleanup(t, "the standalone GlusterFS in "+dir, func() {
		if out, err := exec.Command("bash", script, "standalone-down", dir).CombinedOutput(); err != nil {
			t.Errorf("gluster.sh standalone-down: %v\n%s", err, out)
		}
		if err := os.RemoveAll(dir); err != nil {
			t.Error(err)
		}
	})
	cmd := exec.Command("bash", script, "standalone-up", dir, "2")
	cmd.Env = append(os.Environ(), "GLUSTER_ID="+strconv.Itoa(os.Getpid()%10_000_000))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("gluster.sh standalone-up: %v\n%s", err, out)
	}
	f, err := os.Open(filepath.Join(dir, "gluster.env"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	env := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = strings.Trim(v, `"`)
		}
	}
	if env["GLUSTER_VOLUME"] == "" || env["GLUSTER_N1_IP"] == "" || env["GLUSTER_MOUNT"] == "" {
		t.Fatalf("gluster.env lacks the volume, its server or its mount: %v", env)
	}
	return env
}

// The fio image carries the modules libgfapi loads at run time: fio's
// gfapi_async engine, run inside the image (with /dev, /proc and /sys as
// a pod has them), writes a file on a real Gluster volume.
func TestFioImageGfapi(t *testing.T) {
	if runtime.GOARCH != "amd64" || os.Geteuid() != 0 {
		toolenv.Missing(t, "root on amd64", "the image is run with chroot")
	}
	res := build(t)
	img, cf := platformImage(t, written(t, res, images.FioName), "linux/amd64")
	root := unpack(t, img)
	if cf.Config.Labels["io.storbench.glusterfs.version"] == "" {
		t.Errorf("no glusterfs version label: %v", cf.Config.Labels)
	}
	v := glusterVolume(t)
	const file = "imagecheck.dat"
	fio := []string{"/usr/bin/fio", "--name=gfapi", "--ioengine=gfapi_async", "--volume=" + v["GLUSTER_VOLUME"],
		"--brick=" + v["GLUSTER_N1_IP"], "--filename=" + file, "--size=4m", "--bs=1m", "--rw=write", "--direct=1",
		"--iodepth=4", "--randrepeat=0", "--refill_buffers", "--output-format=json"}
	out, err := runAsPod(root, cf.Config.Env, fio...)
	if err != nil {
		log, _ := os.ReadFile(filepath.Join(root, "tmp", "fio_gfapi.log"))
		t.Fatalf("fio gfapi_async in the image: %v\n%s\nlibgfapi's log:\n%s", err, out, log)
	}
	checkWrite(t, out, 4<<20)
	on := filepath.Join(v["GLUSTER_MOUNT"], file)
	if fi, err := os.Stat(on); err != nil || fi.Size() != 4<<20 {
		t.Errorf("the file on the volume: %v, %v", fi, err)
	}
	if err := os.Remove(on); err != nil {
		t.Error(err)
	}
}

// runAsPod runs argv in the unpacked image at root with the image's env
// only, and /dev, /proc and /sys as a pod has them, in a mount namespace
// of its own (the mounts go with it).
func runAsPod(root string, env []string, argv ...string) ([]byte, error) {
	script := `set -e; r=$1; shift; mkdir -p "$r/dev" "$r/proc" "$r/sys"; mount --rbind /dev "$r/dev"; mount -t proc proc "$r/proc"; mount -t sysfs sys "$r/sys"; exec chroot "$r" "$@"`
	args := append([]string{"-m", "--propagation", "private", "sh", "-c", script, "sh", root, "/bin/env", "-i"}, env...)
	return exec.Command("unshare", append(args, argv...)...).CombinedOutput()
}

// checkWrite reads the one JSON report of a fio write job in out (other
// lines may surround it) and wants no error and bytes written; it returns
// what follows the report.
func checkWrite(t *testing.T, out []byte, bytes int64) []byte {
	t.Helper()
	var rep struct {
		Jobs []struct {
			Error int `json:"error"`
			Write struct {
				IOBytes int64 `json:"io_bytes"`
			} `json:"write"`
		} `json:"jobs"`
	}
	i, j := strings.IndexByte(string(out), '{'), strings.LastIndexByte(string(out), '}')
	if i < 0 || j < i || json.Unmarshal(out[i:j+1], &rep) != nil || len(rep.Jobs) != 1 {
		t.Fatalf("fio's output is no JSON report:\n%s", out)
	}
	if jb := rep.Jobs[0]; jb.Error != 0 || jb.Write.IOBytes != bytes {
		t.Errorf("job error %d, %d bytes written: want 0 and %d", jb.Error, jb.Write.IOBytes, bytes)
	}
	return out[j+1:]
}
