package deploytest

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/testenv"
)

// builtImages are the two images of a release build, by reference.
type builtImages struct {
	storbench, fio string
}

// releaseImages builds the storbench and storbench-fio images of this tree
// for this machine's platform with the release tooling (tools/, as
// scripts/release.sh does), the version being the tag of storbenchRef (the
// base's image), and imports them into the real node's containerd.
func releaseImages(t *testing.T, storbenchRef string) builtImages {
	t.Helper()
	name, tag, ok := strings.Cut(storbenchRef, ":")
	if !ok || !strings.HasSuffix(name, "/storbench") {
		t.Fatalf("the base's image %q is not REGISTRY/storbench:TAG", storbenchRef)
	}
	registry := strings.TrimSuffix(name, "/storbench")
	out := t.TempDir()
	cmd := exec.Command("go", // go test puts its own toolchain first on PATH
		"run", "./cmd/storbench-release",
		"-only", "images", "-platforms", "linux/"+runtime.GOARCH, "-version", tag, "-registry", registry, "-out", out)
	cmd.Dir = filepath.Join(deployDir(t), "..", "tools")
	var stderr strings.Builder
	cmd.Stderr = &stderr
	js, err := cmd.Output()
	if err != nil {
		t.Fatalf("building the images: %v\n%s", err, stderr.String())
	}
	var res struct {
		Images []struct{ Ref, Archive string }
	}
	if err := json.Unmarshal(js, &res); err != nil || len(res.Images) != 2 {
		t.Fatalf("storbench-release said %s (%v)", js, err)
	}
	sock := nodeContainerd(t, realNode)
	ctr := testenv.Tool(t, "ctr", "containerd", "k8s")
	var imgs builtImages
	for _, img := range res.Images {
		imp := exec.Command(ctr, "-a", sock, "-n", "k8s.io", "images", "import", img.Archive)
		if o, err := imp.CombinedOutput(); err != nil {
			t.Fatalf("ctr images import %s: %v\n%s", img.Archive, err, o)
		}
		t.Cleanup(func() {
			rm := exec.Command(ctr, "-a", sock, "-n", "k8s.io", "images", "rm", img.Ref)
			if o, err := rm.CombinedOutput(); err != nil {
				t.Logf("ctr images rm %s: %v\n%s", img.Ref, err, o)
			}
		})
		if strings.Contains(img.Ref, "/storbench-fio:") {
			imgs.fio = img.Ref
		} else {
			imgs.storbench = img.Ref
		}
	}
	if imgs.storbench != storbenchRef || imgs.fio != kubekit.FioImageRepository+":"+tag && registry == "ghcr.io/storbench" {
		t.Fatalf("built %+v; want %s and storbench's default fio image at %s", imgs, storbenchRef, tag)
	}
	return imgs
}

// nodeContainerd is the containerd socket of a real node of the test
// cluster: from $KAPI_ROOT/run/cluster.env (test/cluster/cluster.sh) when it
// names one, else kreal.sh's ($KAPI_ROOT/real/containerd).
func nodeContainerd(t *testing.T, node string) string {
	t.Helper()
	root := os.Getenv("KAPI_ROOT")
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			t.Fatal(err)
		}
		root = filepath.Join(home, ".cache", "storbench-kapi")
	}
	key := strings.ReplaceAll(node, "-", "_") + "_CONTAINERD_SOCK="
	if f, err := os.Open(filepath.Join(root, "run", "cluster.env")); err == nil {
		defer f.Close()
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), key); ok {
				return strings.Trim(v, `"'`)
			}
		}
	}
	sock := filepath.Join(root, "real", "containerd", "containerd.sock")
	if _, err := os.Stat(sock); err != nil {
		t.Fatalf("no containerd socket for node %s (%v)", node, err)
	}
	return sock
}
