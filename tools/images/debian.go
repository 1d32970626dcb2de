package images

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Debian fetches packages of one architecture from the Debian archive
// this machine's apt uses, with apt-get's own state kept in a private
// folder: the machine's dpkg architectures and package lists stay as they
// are (no dpkg --add-architecture).
type Debian struct {
	// Arch is Debian's name: amd64, arm64, armhf.
	Arch string
	// Dir holds the package lists and downloaded packages; it is reused
	// across builds (a cache).
	Dir string
	// Suite and Mirror say which archive: bookworm from deb.debian.org
	// unless set.
	Suite, Mirror string
	// MaxListAge is how old the package lists may be before an update.
	MaxListAge time.Duration
}

// Package is one downloaded package.
type Package struct {
	Name, Version, Arch string
	Path                string // the .deb
}

func (d *Debian) options() []string {
	return []string{
		"-o", "Dir::State::Lists=" + filepath.Join(d.Dir, "lists"),
		"-o", "Dir::Cache=" + filepath.Join(d.Dir, "cache"),
		"-o", "Dir::State::status=/dev/null",
		"-o", "Dir::Etc::SourceList=" + filepath.Join(d.Dir, "sources.list"),
		"-o", "Dir::Etc::SourceParts=" + filepath.Join(d.Dir, "sources.list.d"),
		"-o", "APT::Architecture=" + d.Arch,
		"-o", "APT::Architectures=" + d.Arch,
		"-o", "Acquire::Languages=none",
	}
}

func (d *Debian) apt(tool string, args ...string) (string, error) {
	cmd := exec.Command(tool, append(d.options(), args...)...)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("%s %s (%s): %w: %s", tool, strings.Join(args, " "), d.Arch, err, strings.TrimSpace(errb.String()))
	}
	return string(out), nil
}

// Update fetches the package lists unless they are younger than MaxListAge.
// A security suite whose index cannot be fetched (a mirror in the middle
// of a sync) is left out with a warning: the main suite's packages are
// used then.
func (d *Debian) Update() (warning string, err error) {
	suite, mirror := d.Suite, d.Mirror
	if suite == "" {
		suite = "bookworm"
	}
	if mirror == "" {
		mirror = "http://deb.debian.org/debian"
	}
	for _, sub := range []string{"lists/partial", "cache/archives/partial", "sources.list.d", "debs"} {
		if err := os.MkdirAll(filepath.Join(d.Dir, sub), 0o755); err != nil {
			return "", err
		}
	}
	sources := fmt.Sprintf("deb [arch=%s signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s main\n"+
		"deb [arch=%s signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s %s-updates main\n"+
		"deb [arch=%s signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian-security %s-security main\n",
		d.Arch, mirror, suite, d.Arch, mirror, suite, d.Arch, suite)
	old, _ := os.ReadFile(filepath.Join(d.Dir, "sources.list"))
	stamp := filepath.Join(d.Dir, "lists", ".updated")
	if st, err := os.Stat(stamp); err == nil && string(old) == sources && time.Since(st.ModTime()) < d.MaxListAge {
		w, _ := os.ReadFile(stamp)
		return string(w), nil
	}
	if err := os.WriteFile(filepath.Join(d.Dir, "sources.list"), []byte(sources), 0o644); err != nil {
		return "", err
	}
	if _, err := d.apt("apt-get", "-q", "update"); err != nil {
		if !onlySecurityFailed(err.Error()) {
			return "", err
		}
		warning = fmt.Sprintf("%s: the security suite's index could not be fetched; packages from %s and %s-updates only", d.Arch, suite, suite)
	}
	return warning, os.WriteFile(stamp, []byte(warning), 0o644)
}

// onlySecurityFailed reports whether every index apt-get update failed to
// fetch belongs to a security suite.
func onlySecurityFailed(msg string) bool {
	n := 0
	for _, line := range strings.Split(msg, "\n") {
		if i := strings.Index(line, "E: Failed to fetch "); i >= 0 {
			n++
			if !strings.Contains(line[i:], "-security/") {
				return false
			}
		}
	}
	return n > 0
}

// Closure is roots and the library packages they depend on, recursively
// (Depends and Pre-Depends, following only packages whose name says
// "lib": libc6, libaio1, zlib1g... a shared library's package, not the
// programs and scripts a package's maintainer scripts want, which an image
// does not run). Tree.Needs then checks that nothing is missing.
func (d *Debian) Closure(roots ...string) ([]string, error) {
	seen := map[string]bool{}
	todo := slices.Clone(roots)
	for len(todo) > 0 {
		out, err := d.apt("apt-cache", append([]string{"depends", "--no-recommends", "--no-suggests", "--no-conflicts",
			"--no-breaks", "--no-replaces", "--no-enhances"}, todo...)...)
		if err != nil {
			return nil, err
		}
		for _, p := range todo {
			seen[p] = true
		}
		todo = nil
		sc := bufio.NewScanner(strings.NewReader(out))
		for sc.Scan() {
			line := strings.TrimSpace(sc.Text())
			kind, name, ok := strings.Cut(line, ": ")
			if !ok || (kind != "Depends" && kind != "PreDepends" && kind != "|Depends" && kind != "|PreDepends") {
				continue
			}
			name, _, _ = strings.Cut(name, ":") // libfoo:any
			if strings.HasPrefix(name, "<") || !strings.Contains(name, "lib") || seen[name] || slices.Contains(todo, name) {
				continue
			}
			todo = append(todo, name)
		}
	}
	return slices.Sorted(func(yield func(string) bool) {
		for p := range seen {
			if !yield(p) {
				return
			}
		}
	}), nil
}

// Download fetches the candidate version of each package into the cache
// (checking its SHA-256 against the signed index) and returns them.
func (d *Debian) Download(names []string) ([]Package, error) {
	out, err := d.apt("apt-get", append([]string{"download", "--print-uris"}, names...)...)
	if err != nil {
		return nil, err
	}
	var pkgs []Package
	var missing []string
	want := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		f := strings.Fields(line) // 'URI' FILE SIZE SHA256:HEX
		if len(f) < 4 || !strings.HasPrefix(f[3], "SHA256:") {
			return nil, fmt.Errorf("apt-get download --print-uris (%s): unexpected line %q", d.Arch, line)
		}
		file := f[1]
		parts := strings.SplitN(strings.TrimSuffix(file, ".deb"), "_", 3)
		if len(parts) != 3 {
			return nil, fmt.Errorf("unexpected package file name %q", file)
		}
		p := Package{Name: parts[0], Version: strings.ReplaceAll(parts[1], "%3a", ":"), Arch: parts[2], Path: filepath.Join(d.Dir, "debs", file)}
		want[file] = strings.TrimPrefix(f[3], "SHA256:")
		if sum, err := fileSHA256(p.Path); err != nil || sum != want[file] {
			missing = append(missing, p.Name+"="+p.Version)
		}
		pkgs = append(pkgs, p)
	}
	if len(missing) > 0 {
		cmd := exec.Command("apt-get", append(append(d.options(), "-q", "download"), missing...)...)
		cmd.Dir = filepath.Join(d.Dir, "debs")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("apt-get download (%s): %w\n%s", d.Arch, err, out)
		}
		for _, p := range pkgs {
			if sum, err := fileSHA256(p.Path); err != nil || sum != want[filepath.Base(p.Path)] {
				return nil, fmt.Errorf("%s: checksum %s, want %s (%v)", p.Path, sum, want[filepath.Base(p.Path)], err)
			}
		}
	}
	return pkgs, nil
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Extract unpacks the packages' files (dpkg-deb -x, no maintainer scripts)
// into root.
func Extract(pkgs []Package, root string) error {
	for _, p := range pkgs {
		if out, err := exec.Command("dpkg-deb", "-x", p.Path, root).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %w\n%s", p.Path, err, out)
		}
	}
	return nil
}
