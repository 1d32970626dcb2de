package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Entry is one file, folder or symbolic link of a layer.
type Entry struct {
	Path     string // absolute image path
	Type     byte   // tar.TypeReg, tar.TypeDir or tar.TypeSymlink
	Mode     int64
	UID, GID int
	Data     []byte
	Link     string // a symbolic link's target
}

// FromTree reads the image paths from the tree as they are there: files
// with their permission bits, symbolic links as links, owned by root.
func FromTree(t Tree, paths []string) ([]Entry, error) {
	var out []Entry
	for _, p := range paths {
		fi, err := os.Lstat(filepath.Join(t.Root, p))
		if err != nil {
			return nil, err
		}
		switch {
		case fi.Mode()&os.ModeSymlink != 0:
			target, err := os.Readlink(filepath.Join(t.Root, p))
			if err != nil {
				return nil, err
			}
			out = append(out, Entry{Path: p, Type: tar.TypeSymlink, Mode: 0o777, Link: target})
		case fi.Mode().IsRegular():
			data, err := os.ReadFile(filepath.Join(t.Root, p))
			if err != nil {
				return nil, err
			}
			out = append(out, Entry{Path: p, Type: tar.TypeReg, Mode: int64(fi.Mode().Perm()), Data: data})
		default:
			return nil, fmt.Errorf("%s: neither a file nor a symbolic link", p)
		}
	}
	return out, nil
}

// LayerTar writes entries as a layer's tar: sorted by path, every parent
// folder present (0755, root), times mtime, no user or group names. The
// same entries give the same bytes.
func LayerTar(entries []Entry, mtime time.Time) ([]byte, error) {
	byPath := map[string]Entry{}
	for _, e := range entries {
		p := path.Clean("/" + e.Path)
		if old, ok := byPath[p]; ok && (old.Type != tar.TypeDir || e.Type != tar.TypeDir) {
			return nil, fmt.Errorf("%s twice in a layer", p)
		}
		e.Path = p
		byPath[p] = e
		for d := path.Dir(p); d != "/"; d = path.Dir(d) {
			if _, ok := byPath[d]; !ok {
				byPath[d] = Entry{Path: d, Type: tar.TypeDir, Mode: 0o755}
			}
		}
	}
	names := make([]string, 0, len(byPath))
	for p := range byPath {
		names = append(names, p)
	}
	slices.SortFunc(names, strings.Compare)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	mt := mtime.UTC().Truncate(time.Second)
	for _, p := range names {
		e := byPath[p]
		h := &tar.Header{Typeflag: e.Type, Name: strings.TrimPrefix(p, "/"), Mode: e.Mode, Uid: e.UID, Gid: e.GID,
			ModTime: mt, Linkname: e.Link, Format: tar.FormatPAX}
		if e.Type == tar.TypeDir {
			h.Name += "/"
		}
		if e.Type == tar.TypeReg {
			h.Size = int64(len(e.Data))
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("layer %s: %w", p, err)
		}
		if e.Type == tar.TypeReg {
			if _, err := tw.Write(e.Data); err != nil {
				return nil, err
			}
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
