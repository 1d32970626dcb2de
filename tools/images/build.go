package images

import (
	"archive/tar"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	v1 "github.com/google/go-containerregistry/pkg/v1"
)

// Names of the two images (under Meta.Registry).
const (
	StorbenchName = "storbench"
	FioName       = "storbench-fio"
)

// LabelFioVersion is the fio image's label holding the Debian version of
// its fio package (3.33-3): the exact fio a Kubernetes run used.
const LabelFioVersion = "io.storbench.fio.version"

// BusyboxApplets are the commands the fio image offers through busybox:
// sh and what storbench runs in a pod (internal/runner/kube, the fio and
// safety code's Cmder calls: sh, cat, rm, mkdir, mktemp, dd, sleep, kill,
// stat, blockdev, sync), and the usual tools for a person debugging with
// kubectl exec.
var BusyboxApplets = []string{"[", "awk", "basename", "blockdev", "cat", "chmod", "cp", "cut", "date", "dd", "df",
	"dirname", "echo", "env", "expr", "false", "find", "grep", "head", "id", "kill", "ln", "ls", "mkdir", "mktemp",
	"mv", "nproc", "printf", "ps", "readlink", "rm", "rmdir", "sed", "seq", "sh", "sha256sum", "sleep", "sort",
	"stat", "sync", "tail", "tee", "test", "timeout", "touch", "tr", "true", "uname", "uniq", "wc", "which", "xargs"}

// Sources are the fetched and unpacked Debian packages of one platform.
type Sources struct {
	Tree     Tree
	Packages []Package
	// Warning says what the package lists lack, "" when nothing.
	Warning string
}

// GlusterPackage holds the modules Debian's libgfapi (which fio links)
// loads at run time: translators, transports, auth (GlusterPlugins).
const GlusterPackage = "glusterfs-common"

// GlusterPluginDirs are the folders under /usr/lib/TRIPLET/glusterfs/VERSION
// whose modules libgfapi loads with dlopen, which no ELF lists: without
// them fio's gfapi engines fail in the image.
var GlusterPluginDirs = []string{"xlator", "rpc-transport", "auth"}

// GlusterPlugins are the shared objects of GlusterPluginDirs in the tree,
// as image paths, sorted; links too (cluster/replicate.so is afr.so by
// another name, and libgfapi loads it by that name).
func GlusterPlugins(t Tree, p Platform) ([]string, error) {
	var out []string
	for _, d := range GlusterPluginDirs {
		dirs, err := filepath.Glob(filepath.Join(t.Root, "usr/lib", p.Triplet, "glusterfs", "*", d))
		if err != nil {
			return nil, err
		}
		for _, dir := range dirs {
			err := filepath.WalkDir(dir, func(f string, e os.DirEntry, err error) error {
				if err == nil && (e.Type().IsRegular() || e.Type()&os.ModeSymlink != 0) && strings.HasSuffix(f, ".so") {
					out = append(out, "/"+filepath.ToSlash(strings.TrimPrefix(f, t.Root+string(filepath.Separator))))
				}
				return err
			})
			if err != nil {
				return nil, err
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no Gluster modules under /usr/lib/%s/glusterfs/*/{%s} (package %s)", p.Triplet, strings.Join(GlusterPluginDirs, ","), GlusterPackage)
	}
	slices.Sort(out)
	return out, nil
}

// CephPackage holds the rbd CLI, with which k8s:rbd:POOL's pods make
// and remove their images, and the compressor and crypto modules librados
// loads at run time (CephPlugins). It is taken without its dependencies
// (the ceph CLI's Python): the rbd CLI's libraries beyond fio's are
// CephLibPackages.
const CephPackage = "ceph-common"

// CephLibPackages are the packages of the libraries the rbd CLI and
// Ceph's modules link that fio's closure lacks.
var CephLibPackages = []string{"libboost-program-options1.74.0", "libncurses6", "libsnappy1v5", "liblz4-1"}

// CephPluginDirs are the folders under /usr/lib/TRIPLET/ceph whose
// modules librados loads with dlopen (a compressed pool, a crypto
// accelerator), which no ELF lists.
var CephPluginDirs = []string{"compressor", "crypto"}

// CephPlugins are the shared objects of CephPluginDirs in the tree, as
// image paths, sorted; at least one compressor.
func CephPlugins(t Tree, p Platform) ([]string, error) {
	var out []string
	for _, d := range CephPluginDirs {
		found, err := filepath.Glob(filepath.Join(t.Root, "usr/lib", p.Triplet, "ceph", d, "*.so"))
		if err != nil {
			return nil, err
		}
		for _, f := range found {
			out = append(out, "/"+filepath.ToSlash(strings.TrimPrefix(f, t.Root+string(filepath.Separator))))
		}
	}
	if !slices.ContainsFunc(out, func(f string) bool { return strings.Contains(f, "/ceph/compressor/") }) {
		return nil, fmt.Errorf("no Ceph compressor modules under /usr/lib/%s/ceph/compressor (package %s)", p.Triplet, CephPackage)
	}
	slices.Sort(out)
	return out, nil
}

// Fetch downloads and unpacks, for p, fio with its library packages,
// busybox-static, Gluster's modules (GlusterPackage) with theirs, the
// rbd CLI and Ceph's modules (CephPackage, CephLibPackages), and
// ca-certificates, into a new folder under work.
func Fetch(p Platform, cacheDir, work string) (*Sources, error) {
	d := &Debian{Arch: p.DebianArch, Dir: filepath.Join(cacheDir, p.DebianArch), MaxListAge: 7 * 24 * 3600e9}
	warning, err := d.Update()
	if err != nil {
		return nil, err
	}
	names, err := d.Closure(append([]string{"fio", "busybox-static", GlusterPackage}, CephLibPackages...)...)
	if err != nil {
		return nil, err
	}
	pkgs, err := d.Download(append(names, "ca-certificates", CephPackage))
	if err != nil {
		return nil, err
	}
	root := filepath.Join(work, p.DebianArch)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	if err := Extract(pkgs, root); err != nil {
		return nil, err
	}
	t := Tree{Root: root, LibDirs: []string{"/lib/" + p.Triplet, "/usr/lib/" + p.Triplet, "/lib", "/usr/lib"}}
	return &Sources{Tree: t, Packages: pkgs, Warning: warning}, nil
}

// Version is the named package's version among the fetched ones.
func (s *Sources) Version(name string) string {
	for _, p := range s.Packages {
		if p.Name == name {
			return p.Version
		}
	}
	return ""
}

// accounts are /etc/passwd and /etc/group with root and one more user.
func accounts(user string, uid int) []Entry {
	passwd := fmt.Sprintf("root:x:0:0:root:/root:/sbin/nologin\n%s:x:%d:%d:%s:/home/%s:/sbin/nologin\n", user, uid, uid, user, user)
	group := fmt.Sprintf("root:x:0:\n%s:x:%d:\n", user, uid)
	return []Entry{
		{Path: "/etc/passwd", Type: tar.TypeReg, Mode: 0o644, Data: []byte(passwd)},
		{Path: "/etc/group", Type: tar.TypeReg, Mode: 0o644, Data: []byte(group)},
		{Path: "/tmp", Type: tar.TypeDir, Mode: 0o1777},
	}
}

// caBundle is Debian's CA certificates as one PEM file, as
// update-ca-certificates would make it from the package's certificates
// (the package ships them one per file; its maintainer script, which
// builds the bundle, does not run here).
func caBundle(t Tree) ([]byte, error) {
	dir := filepath.Join(t.Root, "usr/share/ca-certificates/mozilla")
	files, err := filepath.Glob(filepath.Join(dir, "*.crt"))
	if err != nil || len(files) == 0 {
		return nil, fmt.Errorf("no certificates in %s (%v)", dir, err)
	}
	slices.Sort(files)
	var out []byte
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		out = append(out, b...)
		if len(b) > 0 && b[len(b)-1] != '\n' {
			out = append(out, '\n')
		}
	}
	return out, nil
}

// StorbenchImage is the storbench image for p: the static binary at
// /usr/bin/storbench as the entrypoint, Debian's CA certificates, user
// 65532 (the deploy base's runAsUser). binary is the binary's bytes.
func StorbenchImage(p Platform, m Meta, src *Sources, binary []byte) (v1.Image, error) {
	ca, err := caBundle(src.Tree)
	if err != nil {
		return nil, err
	}
	base := append(accounts("nonroot", NonRootUID),
		Entry{Path: "/etc/ssl/certs/ca-certificates.crt", Type: tar.TypeReg, Mode: 0o644, Data: ca},
		Entry{Path: "/home/nonroot", Type: tar.TypeDir, Mode: 0o700, UID: NonRootUID, GID: NonRootUID})
	bin := []Entry{{Path: "/usr/bin/storbench", Type: tar.TypeReg, Mode: 0o755, Data: binary}}
	cfg := v1.Config{
		Entrypoint: []string{"/usr/bin/storbench"},
		Cmd:        []string{"--help"},
		User:       fmt.Sprintf("%d:%d", NonRootUID, NonRootUID),
		WorkingDir: "/home/nonroot",
		Env:        []string{"PATH=/usr/bin:/bin", "HOME=/home/nonroot", "SSL_CERT_FILE=/etc/ssl/certs/ca-certificates.crt"},
		Labels: labels(m, "storbench", "storbench: benchmark and qualify storage (the CronJob and dashboard of deploy/)",
			map[string]string{"io.storbench.ca-certificates.version": src.Version("ca-certificates")}),
	}
	return image(p, m, cfg, base, bin)
}

// FioCommand is the fio image's default command: it waits, as storbench's
// pods do (storbench gives its own command anyway).
var FioCommand = []string{"sh", "-c", "echo storbench fio image; exec sleep 2147483647"}

// FioImage is the fio image for p: Debian's fio with every shared library
// it loads (from the same architecture's packages), busybox as sh and the
// tools storbench runs in a pod, and Gluster's modules that fio's gfapi
// engines load (GlusterPlugins, with their libraries), the rbd CLI and
// Ceph's modules (CephPlugins), run as root as storbench's pods are.
func FioImage(p Platform, m Meta, src *Sources) (v1.Image, error) {
	t := src.Tree
	plugins, err := GlusterPlugins(t, p)
	if err != nil {
		return nil, err
	}
	cephPlugins, err := CephPlugins(t, p)
	if err != nil {
		return nil, err
	}
	plugins = append(plugins, cephPlugins...)
	need, err := t.Needs(append([]string{"/usr/bin/fio", "/usr/bin/rbd", "/bin/busybox"}, plugins...)...)
	if err != nil {
		return nil, err
	}
	files, err := FromTree(t, need)
	if err != nil {
		return nil, err
	}
	for _, a := range BusyboxApplets {
		files = append(files, Entry{Path: "/bin/" + a, Type: tar.TypeSymlink, Mode: 0o777, Link: "busybox"})
	}
	base := append(accounts("nobody", 65534), Entry{Path: "/storbench", Type: tar.TypeDir, Mode: 0o777})
	fioVersion := src.Version("fio")
	// Gluster's and Ceph's modules are loaded by path: their folders stay
	// off the search path.
	pluginDirs := map[string]bool{}
	for _, pl := range plugins {
		pluginDirs[path.Dir(pl)] = true
	}
	var libDirs []string
	for _, d := range RunPathDirs(need) {
		if pluginDirs[d] {
			continue
		}
		if !slices.Contains(t.LibDirs, d) || strings.Contains(d, p.Triplet) {
			libDirs = append(libDirs, d)
		}
	}
	cfg := v1.Config{
		Cmd:        FioCommand,
		WorkingDir: "/storbench",
		Env:        []string{"PATH=/usr/bin:/bin:/usr/sbin:/sbin", "LD_LIBRARY_PATH=" + strings.Join(libDirs, ":")},
		Labels: labels(m, "storbench-fio", "fio "+fioVersion+" (Debian's, with libaio, Gluster's gfapi modules and the rbd CLI) for storbench's Kubernetes targets",
			map[string]string{LabelFioVersion: fioVersion, "io.storbench.busybox.version": src.Version("busybox-static"),
				"io.storbench.glusterfs.version": src.Version(GlusterPackage), "io.storbench.ceph.version": src.Version(CephPackage)}),
	}
	return image(p, m, cfg, base, files)
}
