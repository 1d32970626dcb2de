package images_test

import (
	"bytes"
	"crypto/x509"
	"debug/elf"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"

	"github.com/storbench/storbench/tools/images"
	"github.com/storbench/storbench/tools/internal/toolenv"
	"github.com/storbench/storbench/tools/release"
)

func cacheDir(t *testing.T) string {
	d, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(d, "storbench-release")
}

var shared toolenv.Once[*release.Result]

// build builds both images for every platform once for the package's
// tests: Debian's packages come from the archive (cached between runs).
func build(t *testing.T) *release.Result {
	t.Helper()
	for _, tool := range []string{"git", "apt-get", "apt-cache", "dpkg-deb"} {
		toolenv.Need(t, tool)
	}
	res, _ := shared.Get(t, func(dir string) (*release.Result, error) {
		return release.Build(release.Options{Repo: toolenv.Repo(t), Out: dir, Images: true, Cache: cacheDir(t)})
	})
	return res
}

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Remove()
	os.Exit(code)
}

func written(t *testing.T, res *release.Result, name string) *images.Written {
	t.Helper()
	for _, w := range res.Images {
		if strings.HasSuffix(w.Ref, "/"+name+":"+res.Version) {
			return w
		}
	}
	t.Fatalf("no image %s in %+v", name, res.Images)
	return nil
}

// platformImage reads one platform's image, and its config, from the
// written layout.
func platformImage(t *testing.T, w *images.Written, platform string) (v1.Image, *v1.ConfigFile) {
	t.Helper()
	lp, err := layout.FromPath(w.Layout)
	if err != nil {
		t.Fatal(err)
	}
	top, err := lp.ImageIndex()
	if err != nil {
		t.Fatal(err)
	}
	tm, err := top.IndexManifest()
	if err != nil || len(tm.Manifests) != 1 || tm.Manifests[0].Annotations["io.containerd.image.name"] != w.Ref {
		t.Fatalf("layout index %+v, %v: want one index named %s", tm, err, w.Ref)
	}
	idx, err := top.ImageIndex(tm.Manifests[0].Digest)
	if err != nil {
		t.Fatal(err)
	}
	im, err := idx.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range im.Manifests {
		got = append(got, d.Platform.String())
		if d.Platform.String() == platform {
			img, err := idx.Image(d.Digest)
			if err != nil {
				t.Fatal(err)
			}
			cf, err := img.ConfigFile()
			if err != nil {
				t.Fatal(err)
			}
			return img, cf
		}
	}
	t.Fatalf("%s: no %s among %v", w.Ref, platform, got)
	return nil, nil
}

// unpack extracts an image's filesystem into a new folder.
func unpack(t *testing.T, img v1.Image) string {
	t.Helper()
	dir := t.TempDir()
	rc := mutate.Extract(img)
	defer rc.Close()
	cmd := exec.Command("tar", "-x", "-C", dir, "--numeric-owner", "-p")
	cmd.Stdin = rc
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tar -x: %v\n%s", err, out)
	}
	return dir
}

// Two builds of the same commit give the same images: the same index
// digests and archive bytes under STORBENCH_RELEASE_PROOF=1 (every
// platform built again); by default linux/amd64 alone is built again and
// gives the same image (manifest digest) as in the first build's index.
func TestImagesReproducible(t *testing.T) {
	first := build(t)
	dir := t.TempDir()
	again := toolenv.ProofPlatforms()
	second, err := release.Build(release.Options{Repo: toolenv.Repo(t), Out: dir, Images: true, Cache: cacheDir(t), Platforms: again})
	if err != nil {
		t.Fatal(err)
	}
	if len(first.Images) != 2 || len(second.Images) != 2 {
		t.Fatalf("images: %d then %d, want 2", len(first.Images), len(second.Images))
	}
	for i, w := range first.Images {
		w2 := second.Images[i]
		if len(w.Sizes) != len(images.Platforms) {
			t.Errorf("%s: platforms %v", w.Ref, w.Sizes)
		}
		t.Logf("%s %s, compressed layers per platform (bytes): %v", w.Ref, w.Digest, w.Sizes)
		if w.Ref != w2.Ref {
			t.Errorf("%s, then %s", w.Ref, w2.Ref)
			continue
		}
		if again != nil {
			for _, p := range again {
				if d1, d2 := platformDigest(t, w, p), platformDigest(t, w2, p); d1 != d2 {
					t.Errorf("%s %s: %s, then %s", w.Ref, p, d1, d2)
				}
			}
			continue
		}
		if w.Digest != w2.Digest {
			t.Errorf("%s %s, then %s", w.Ref, w.Digest, w2.Digest)
		}
		a, err1 := os.ReadFile(w.Archive)
		b, err2 := os.ReadFile(w2.Archive)
		if err1 != nil || err2 != nil || !bytes.Equal(a, b) {
			t.Errorf("%s: the two archives differ (%v, %v)", w.Archive, err1, err2)
		}
	}
}

// platformDigest is the digest of one platform's image manifest in a
// written layout.
func platformDigest(t *testing.T, w *images.Written, platform string) v1.Hash {
	t.Helper()
	img, _ := platformImage(t, w, platform)
	d, err := img.Digest()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

var machines = map[string]elf.Machine{"linux/amd64": elf.EM_X86_64, "linux/arm64": elf.EM_AARCH64, "linux/arm/v7": elf.EM_ARM}

// The fio image of every platform holds fio and busybox for that platform
// and every shared library each ELF file in it needs, found where the
// loader looks (the multiarch folders or LD_LIBRARY_PATH).
func TestFioImageComplete(t *testing.T) {
	res := build(t)
	w := written(t, res, images.FioName)
	for _, p := range images.Platforms {
		t.Run(p.String(), func(t *testing.T) {
			img, cf := platformImage(t, w, p.String())
			if cf.Architecture != p.Arch || cf.Variant != p.Variant || cf.Config.Labels[images.LabelFioVersion] == "" ||
				!slices.Equal(cf.Config.Cmd, images.FioCommand) || cf.Created.Time.Unix() != res.CommitDate.Unix() {
				t.Errorf("config: %s/%s/%s, labels %v, cmd %v, created %v", cf.OS, cf.Architecture, cf.Variant, cf.Config.Labels, cf.Config.Cmd, cf.Created)
			}
			root := unpack(t, img)
			dirs := []string{"/lib/" + p.Triplet, "/usr/lib/" + p.Triplet, "/lib", "/usr/lib"}
			for _, e := range cf.Config.Env {
				if v, ok := strings.CutPrefix(e, "LD_LIBRARY_PATH="); ok {
					dirs = append(strings.Split(v, ":"), dirs...)
				}
			}
			elfs := 0
			err := filepath.WalkDir(root, func(p2 string, d os.DirEntry, err error) error {
				if err != nil || !d.Type().IsRegular() {
					return err
				}
				f, err := elf.Open(p2)
				if err != nil {
					return nil // not ELF
				}
				defer f.Close()
				elfs++
				if f.Machine != machines[p.String()] {
					t.Errorf("%s: ELF machine %v", p2, f.Machine)
				}
				libs, _ := f.ImportedLibraries()
				for _, lib := range libs {
					found := false
					for _, d := range dirs {
						if _, err := os.Stat(filepath.Join(root, d, lib)); err == nil {
							found = true
						}
					}
					if !found {
						t.Errorf("%s needs %s, which the image lacks", strings.TrimPrefix(p2, root), lib)
					}
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			gl := "usr/lib/" + p.Triplet + "/glusterfs/*/"
			for _, f := range []string{gl + "xlator/protocol/client.so", gl + "xlator/cluster/replicate.so", gl + "xlator/mount/api.so",
				gl + "rpc-transport/socket.so", gl + "auth/addr.so"} {
				if m, _ := filepath.Glob(filepath.Join(root, f)); len(m) != 1 {
					t.Errorf("no /%s (fio's gfapi engines load it): %v", f, m)
				}
			}
			for _, f := range []string{"usr/bin/fio", "bin/busybox", "bin/sh"} {
				if _, err := os.Stat(filepath.Join(root, f)); err != nil {
					t.Errorf("no /%s: %v", f, err)
				}
			}
			if elfs < 10 {
				t.Errorf("only %d ELF files: fio's libraries are missing", elfs)
			}
		})
	}
}

// chroot runs a command inside an unpacked image (root only).
func chroot(t *testing.T, root string, uid int, env []string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Env = env
	cmd.Dir = "/"
	cmd.SysProcAttr = &syscall.SysProcAttr{Chroot: root, Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(uid)}}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// This machine's fio image really runs: fio's version, a short libaio job
// on a file, and every busybox command storbench uses.
func TestFioImageRuns(t *testing.T) {
	if runtime.GOARCH != "amd64" || os.Geteuid() != 0 {
		toolenv.Missing(t, "root on amd64", "the image is run with chroot")
	}
	res := build(t)
	img, cf := platformImage(t, written(t, res, images.FioName), "linux/amd64")
	root := unpack(t, img)
	env := cf.Config.Env
	out, err := chroot(t, root, 0, env, "/usr/bin/fio", "--version")
	if err != nil || !strings.HasPrefix(out, "fio-") {
		t.Fatalf("fio --version in the image: %v\n%s", err, out)
	}
	if want := "fio-" + strings.SplitN(cf.Config.Labels[images.LabelFioVersion], "-", 2)[0]; strings.TrimSpace(out) != want {
		t.Errorf("fio says %q, the label %q", strings.TrimSpace(out), cf.Config.Labels[images.LabelFioVersion])
	}
	out, err = chroot(t, root, 0, env, "/bin/sh", "-c", "cd /tmp && fio --name=t --filename=f --size=4m --rw=randwrite --bs=4k --ioengine=libaio --iodepth=4 --output-format=json >out.json && grep -c '\"iops\"' out.json && rm f out.json")
	if err != nil {
		t.Errorf("a libaio fio job in the image: %v\n%s", err, out)
	}
	script := "for a in " + strings.Join(images.BusyboxApplets, " ") + "; do command -v \"$a\" >/tmp/found || echo \"missing $a\"; done; rm /tmp/found; echo done" // a chroot has no /dev
	if out, err := chroot(t, root, 0, env, "/bin/sh", "-c", script); err != nil || strings.TrimSpace(out) != "done" {
		t.Errorf("busybox commands: %v\n%s", err, out)
	}
}

// The storbench image: the static binary as entrypoint, user 65532, CA
// certificates Go reads; on this machine it runs as that user.
func TestStorbenchImage(t *testing.T) {
	res := build(t)
	w := written(t, res, images.StorbenchName)
	for _, p := range images.Platforms {
		t.Run(p.String(), func(t *testing.T) {
			img, cf := platformImage(t, w, p.String())
			c := cf.Config
			if c.User != "65532:65532" || !slices.Equal(c.Entrypoint, []string{"/usr/bin/storbench"}) ||
				c.Labels["org.opencontainers.image.version"] != res.Version || c.Labels["org.opencontainers.image.revision"] != res.Commit {
				t.Errorf("config %+v", c)
			}
			root := unpack(t, img)
			f, err := elf.Open(filepath.Join(root, "usr/bin/storbench"))
			if err != nil {
				t.Fatal(err)
			}
			if f.Machine != machines[p.String()] || f.Section(".interp") != nil {
				t.Errorf("storbench: ELF %v, interpreter %v", f.Machine, f.Section(".interp") != nil)
			}
			f.Close()
			pem, err := os.ReadFile(filepath.Join(root, "etc/ssl/certs/ca-certificates.crt"))
			if err != nil {
				t.Fatal(err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) || bytes.Count(pem, []byte("BEGIN CERTIFICATE")) < 100 {
				t.Errorf("CA bundle: %d certificates", bytes.Count(pem, []byte("BEGIN CERTIFICATE")))
			}
			passwd, _ := os.ReadFile(filepath.Join(root, "etc/passwd"))
			if !bytes.Contains(passwd, []byte(":65532:65532:")) {
				t.Errorf("/etc/passwd:\n%s", passwd)
			}
			if p.String() != "linux/amd64" || os.Geteuid() != 0 {
				return
			}
			out, err := chroot(t, root, 65532, c.Env, "/usr/bin/storbench", "--version")
			if err != nil || !strings.HasPrefix(out, "storbench "+res.Version+"\n") {
				t.Errorf("storbench --version in the image as 65532: %v\n%s", err, out)
			}
		})
	}
}

// The OCI archive is the layout, tarred: what ctr import and skopeo read.
func TestArchiveIsLayout(t *testing.T) {
	res := build(t)
	for _, w := range res.Images {
		out, err := exec.Command("tar", "-t", "-f", w.Archive).Output()
		if err != nil {
			t.Fatal(err)
		}
		names := strings.Fields(string(out))
		for _, want := range []string{"oci-layout", "index.json", "blobs/sha256/" + w.Digest.Hex} {
			if !slices.Contains(names, want) {
				t.Errorf("%s lacks %s: %v", path.Base(w.Archive), want, names)
			}
		}
	}
}
