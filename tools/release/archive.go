package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// File is one entry of an archive.
type File struct {
	Name string // the path inside the archive
	Mode int64  // permission bits
	Data []byte
}

// WriteTarGz writes files as a gzip-compressed tar archive whose bytes
// depend only on its contents and mtime: entries sorted by name, owned by
// 0:0 with no user or group names, every time mtime (whole seconds), gzip
// without a file name or time. Only regular files: krew refuses links.
func WriteTarGz(w io.Writer, files []File, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	zw.Header = gzip.Header{OS: 255} // no name, no time
	if err := WriteTar(zw, files, mtime); err != nil {
		return err
	}
	return zw.Close()
}

// WriteTar writes files as a tar archive as WriteTarGz describes, without
// compression.
func WriteTar(w io.Writer, files []File, mtime time.Time) error {
	sorted := slices.Clone(files)
	slices.SortFunc(sorted, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	tw := tar.NewWriter(w)
	for _, f := range sorted {
		h := &tar.Header{Typeflag: tar.TypeReg, Name: f.Name, Mode: f.Mode, Size: int64(len(f.Data)),
			ModTime: mtime.UTC().Truncate(time.Second), Format: tar.FormatUSTAR}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("tar %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return fmt.Errorf("tar %s: %w", f.Name, err)
		}
	}
	return tw.Close()
}

// Archive is one written release archive.
type Archive struct {
	Platform Platform
	Path     string
	SHA256   string // hex
}

// ArchiveName is storbench-VERSION-linux-ARCH.tar.gz.
func ArchiveName(version string, p Platform) string {
	return "storbench-" + version + "-" + p.Name() + ".tar.gz"
}

// BuildArchives builds the binary for every platform and writes, into
// dir, one archive per platform holding storbench, kubectl-storbench (the
// same binary under the name kubectl's plugin lookup wants) and the
// README, then SHA256SUMS over the archives.
func BuildArchives(src Source, platforms []Platform, dir string) ([]Archive, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	readme, err := os.ReadFile(filepath.Join(src.Dir, "README.md"))
	if err != nil {
		return nil, err
	}
	work, err := os.MkdirTemp("", "storbench-release-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	var out []Archive
	for _, p := range platforms {
		bin := filepath.Join(work, p.Name(), "storbench")
		if err := BuildBinary(src, p, bin); err != nil {
			return nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, err
		}
		files := []File{{"storbench", 0o755, data}, {"kubectl-storbench", 0o755, data}, {"README.md", 0o644, readme}}
		var buf bytes.Buffer
		if err := WriteTarGz(&buf, files, src.CommitDate); err != nil {
			return nil, err
		}
		a := Archive{Platform: p, Path: filepath.Join(dir, ArchiveName(src.Version, p))}
		sum := sha256.Sum256(buf.Bytes())
		a.SHA256 = hex.EncodeToString(sum[:])
		if err := os.WriteFile(a.Path, buf.Bytes(), 0o644); err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	var sums strings.Builder
	for _, a := range out {
		fmt.Fprintf(&sums, "%s  %s\n", a.SHA256, filepath.Base(a.Path))
	}
	if err := os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(sums.String()), 0o644); err != nil {
		return nil, err
	}
	return out, nil
}
