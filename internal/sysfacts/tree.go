package sysfacts

import (
	"bufio"
	_ "embed"
	"os"
	"path/filepath"
	"strings"
)

// Tree is a read-only view of one host's /sys. Paths are relative to /sys
// ("class/block/sda/queue/scheduler").
type Tree interface {
	// Read returns a file's content with surrounding space trimmed, ""
	// when it is absent or unreadable.
	Read(rel string) string
	// Resolve returns where a path leads once every symlink is followed,
	// relative to /sys ("devices/pci0000:00/..."), "" when it leads
	// nowhere.
	Resolve(rel string) string
}

// Dir reads the /sys under a root directory on this host: "/" for this
// host itself, a fixture tree in tests.
type Dir string

func (d Dir) sys() string { return filepath.Join(string(d), "sys") }

// Read implements Tree.
func (d Dir) Read(rel string) string {
	b, err := os.ReadFile(filepath.Join(d.sys(), rel))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// Resolve implements Tree.
func (d Dir) Resolve(rel string) string {
	sys, err := filepath.EvalSymlinks(d.sys())
	if err != nil {
		return ""
	}
	p, err := filepath.EvalSymlinks(filepath.Join(d.sys(), rel))
	if err != nil {
		return ""
	}
	r, err := filepath.Rel(sys, p)
	if err != nil || strings.HasPrefix(r, "..") {
		return ""
	}
	return r
}

// Script reads, on a host storbench reaches through a command (SSH, a
// pod), every /sys file Read needs for the disk holding a path and the
// interface of the default route: run it as `sh -c Script sh PATH` and
// give its output to ParseSnapshot. POSIX sh; STORBENCH_SYSROOT, when
// set, is a directory standing for / (tests point it at fixture trees).
//
//go:embed facts.sh
var Script string

// Snapshot is what Script printed: a Tree of the files and links it read.
type Snapshot struct {
	files map[string]string
	links map[string]string
	// Disk is the whole disk holding the path Script was given, "" when
	// the path is on no block device (a network filesystem, tmpfs).
	Disk string
	// Interface carries the host's default route, "" when it has none.
	Interface string
}

// ParseSnapshot reads Script's output: "f REL=VALUE" for a file, "l
// REL=TARGET" for a resolved link, "disk=NAME" and "iface=NAME".
func ParseSnapshot(out []byte) *Snapshot {
	s := &Snapshot{files: map[string]string{}, links: map[string]string{}}
	sc := bufio.NewScanner(strings.NewReader(string(out)))
	for sc.Scan() {
		line := sc.Text()
		kind, rest, _ := strings.Cut(line, " ")
		k, v, ok := strings.Cut(rest, "=")
		switch {
		case strings.HasPrefix(line, "disk="):
			s.Disk = strings.TrimPrefix(line, "disk=")
		case strings.HasPrefix(line, "iface="):
			s.Interface = strings.TrimPrefix(line, "iface=")
		case !ok:
		case kind == "f":
			s.files[k] = strings.TrimSpace(v)
		case kind == "l":
			s.links[k] = v
		}
	}
	return s
}

// Read implements Tree.
func (s *Snapshot) Read(rel string) string { return s.files[rel] }

// Resolve implements Tree.
func (s *Snapshot) Resolve(rel string) string { return s.links[rel] }

// DefaultInterface returns the interface of the host's default route from
// proc/net/route under root, "" when there is none.
func DefaultInterface(root string) string {
	b, err := os.ReadFile(filepath.Join(root, "proc/net/route"))
	if err != nil {
		return ""
	}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) >= 8 && f[1] == "00000000" && f[7] == "00000000" {
			return f[0]
		}
	}
	return ""
}
