package images

import (
	"debug/elf"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// Tree is a folder holding unpacked packages: paths inside it are
// absolute paths of the image to be ("/usr/bin/fio").
type Tree struct {
	Root string
	// LibDirs are searched, in order, for a library no RUNPATH finds
	// (the architecture's multiarch folders first).
	LibDirs []string
}

// real follows symbolic links inside the tree and returns the image path
// of the file p names, with the links met on the way.
func (t Tree) real(p string) (string, []string, error) {
	var links []string
	for range 40 {
		fi, err := os.Lstat(filepath.Join(t.Root, p))
		if err != nil {
			return "", nil, err
		}
		if fi.Mode()&os.ModeSymlink == 0 {
			return p, links, nil
		}
		links = append(links, p)
		target, err := os.Readlink(filepath.Join(t.Root, p))
		if err != nil {
			return "", nil, err
		}
		if !path.IsAbs(target) {
			target = path.Join(path.Dir(p), target)
		}
		p = path.Clean(target)
	}
	return "", nil, fmt.Errorf("%s: too many symbolic links", p)
}

// Needs returns what the programs need to run from the tree: the programs,
// their interpreter (the dynamic loader) and the shared libraries they and
// those libraries load, as image paths; symbolic links on the way are
// included (their targets too). A library found nowhere is an error.
func (t Tree) Needs(programs ...string) ([]string, error) {
	have := map[string]bool{}
	var add func(p string) error
	add = func(p string) error {
		real, links, err := t.real(p)
		if err != nil {
			return err
		}
		for _, l := range links {
			have[l] = true
		}
		if have[real] {
			return nil
		}
		have[real] = true
		f, err := elf.Open(filepath.Join(t.Root, real))
		if err != nil {
			return fmt.Errorf("%s: %w", real, err)
		}
		defer f.Close()
		for _, prog := range f.Progs {
			if prog.Type == elf.PT_INTERP {
				b := make([]byte, prog.Filesz)
				if _, err := prog.ReadAt(b, 0); err != nil {
					return fmt.Errorf("%s: interpreter: %w", real, err)
				}
				if err := add(strings.TrimRight(string(b), "\x00")); err != nil {
					return fmt.Errorf("%s: interpreter: %w", real, err)
				}
			}
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			return fmt.Errorf("%s: %w", real, err)
		}
		var runpath []string
		for _, tag := range []elf.DynTag{elf.DT_RUNPATH, elf.DT_RPATH} {
			vals, _ := f.DynString(tag)
			for _, v := range vals {
				for _, d := range strings.Split(v, ":") {
					runpath = append(runpath, strings.ReplaceAll(d, "$ORIGIN", path.Dir(real)))
				}
			}
		}
		for _, lib := range libs {
			found := ""
			for _, d := range append(runpath, t.LibDirs...) {
				if _, err := os.Lstat(filepath.Join(t.Root, d, lib)); err == nil {
					found = path.Join(d, lib)
					break
				}
			}
			if found == "" {
				return fmt.Errorf("%s needs %s, in none of %v", real, lib, append(runpath, t.LibDirs...))
			}
			if err := add(found); err != nil {
				return err
			}
		}
		return nil
	}
	for _, p := range programs {
		if err := add(p); err != nil {
			return nil, err
		}
	}
	out := make([]string, 0, len(have))
	for p := range have {
		out = append(out, p)
	}
	slices.Sort(out)
	return out, nil
}

// RunPathDirs are the folders holding libraries that programs find only
// through RUNPATH, for LD_LIBRARY_PATH-free images: the list of folders
// the image's libraries live in.
func RunPathDirs(paths []string) []string {
	var dirs []string
	for _, p := range paths {
		if d := path.Dir(p); strings.Contains(p, ".so") && !slices.Contains(dirs, d) {
			dirs = append(dirs, d)
		}
	}
	slices.Sort(dirs)
	return dirs
}
