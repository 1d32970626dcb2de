// Package images builds storbench's container images without a container
// daemon, with go-containerregistry: the storbench image (the static
// binary, CA certificates, a non-root user) and the fio image Kubernetes
// targets run (Debian's fio with the shared libraries it loads, and
// busybox for sh and the few tools storbench runs in a pod), for each
// release platform, as OCI image indexes. Files come from Debian's own
// packages for each architecture (apt-get download, dpkg-deb -x); every
// time in them is the commit's date, so a commit gives the same digests.
package images

import (
	"archive/tar"
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/empty"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/mutate"
	"github.com/google/go-containerregistry/pkg/v1/tarball"
	"github.com/google/go-containerregistry/pkg/v1/types"
)

// NonRootUID is the storbench image's user (and group): the deploy base's
// runAsUser.
const NonRootUID = 65532

// Platform is one image platform with Debian's names for it.
type Platform struct {
	OS, Arch, Variant string // as OCI says: linux, arm, v7
	DebianArch        string // amd64, arm64, armhf
	Triplet           string // the multiarch folder: x86_64-linux-gnu
}

// Platforms are the release's image platforms.
var Platforms = []Platform{
	{"linux", "amd64", "", "amd64", "x86_64-linux-gnu"},
	{"linux", "arm64", "", "arm64", "aarch64-linux-gnu"},
	{"linux", "arm", "v7", "armhf", "arm-linux-gnueabihf"},
}

func (p Platform) String() string {
	if p.Variant != "" {
		return p.OS + "/" + p.Arch + "/" + p.Variant
	}
	return p.OS + "/" + p.Arch
}

// Meta is what every image of a release says about itself.
type Meta struct {
	Version  string    // the release version, also the tag
	Commit   string    // full hash
	Created  time.Time // the commit's date: every time in the image
	Source   string    // the project's address
	Registry string    // where the images are meant to be pushed: ghcr.io/storbench
}

// image assembles one single-platform image from layers of entries.
func image(p Platform, m Meta, cfg v1.Config, layers ...[]Entry) (v1.Image, error) {
	img := mutate.ConfigMediaType(mutate.MediaType(empty.Image, types.OCIManifestSchema1), types.OCIConfigJSON)
	created := v1.Time{Time: m.Created.UTC()}
	for i, entries := range layers {
		data, err := LayerTar(entries, m.Created)
		if err != nil {
			return nil, err
		}
		layer, err := tarball.LayerFromOpener(func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil },
			tarball.WithMediaType(types.OCILayer))
		if err != nil {
			return nil, err
		}
		img, err = mutate.Append(img, mutate.Addendum{Layer: layer,
			History: v1.History{Created: created, CreatedBy: fmt.Sprintf("storbench tools/images: layer %d of %d", i+1, len(layers))}})
		if err != nil {
			return nil, err
		}
	}
	cf, err := img.ConfigFile()
	if err != nil {
		return nil, err
	}
	cf = cf.DeepCopy()
	cf.OS, cf.Architecture, cf.Variant = p.OS, p.Arch, p.Variant
	cf.Created = created
	cf.Config = cfg
	return mutate.ConfigFile(img, cf)
}

// Index is a multi-platform image: one manifest per platform.
func Index(images map[Platform]v1.Image) (v1.ImageIndex, error) {
	idx := mutate.IndexMediaType(empty.Index, types.OCIImageIndex)
	for _, p := range Platforms {
		img, ok := images[p]
		if !ok {
			continue
		}
		idx = mutate.AppendManifests(idx, mutate.IndexAddendum{Add: img, Descriptor: v1.Descriptor{
			Platform: &v1.Platform{OS: p.OS, Architecture: p.Arch, Variant: p.Variant}}})
	}
	return idx, nil
}

// Written is one image index written to disk.
type Written struct {
	Ref     string  // REGISTRY/NAME:VERSION
	Digest  v1.Hash // the index's digest: what a registry will report
	Layout  string  // the OCI layout folder
	Archive string  // the same layout as a tar (oci-archive), for ctr import or skopeo
	Sizes   map[string]int64
}

// Write stores idx as an OCI layout in dir/NAME and as the archive
// dir/NAME-VERSION.oci.tar; the index is named REF in both
// (org.opencontainers.image.ref.name is the tag, io.containerd.image.name
// the full reference, which ctr images import uses).
func Write(idx v1.ImageIndex, dir, name string, m Meta) (*Written, error) {
	w := &Written{Ref: m.Registry + "/" + name + ":" + m.Version, Layout: filepath.Join(dir, name),
		Archive: filepath.Join(dir, name+"-"+m.Version+".oci.tar"), Sizes: map[string]int64{}}
	var err error
	if w.Digest, err = idx.Digest(); err != nil {
		return nil, err
	}
	if err := os.RemoveAll(w.Layout); err != nil {
		return nil, err
	}
	lp, err := layout.Write(w.Layout, empty.Index)
	if err != nil {
		return nil, err
	}
	if err := lp.AppendIndex(idx, layout.WithAnnotations(map[string]string{
		"org.opencontainers.image.ref.name": m.Version,
		"io.containerd.image.name":          w.Ref,
	})); err != nil {
		return nil, err
	}
	im, err := idx.IndexManifest()
	if err != nil {
		return nil, err
	}
	for _, d := range im.Manifests {
		img, err := idx.Image(d.Digest)
		if err != nil {
			return nil, err
		}
		layers, err := img.Layers()
		if err != nil {
			return nil, err
		}
		var total int64
		for _, l := range layers {
			n, err := l.Size()
			if err != nil {
				return nil, err
			}
			total += n
		}
		w.Sizes[d.Platform.String()] = total
	}
	f, err := os.Create(w.Archive)
	if err != nil {
		return nil, err
	}
	if err := tarFolder(f, w.Layout, m.Created); err != nil {
		f.Close()
		return nil, err
	}
	return w, f.Close()
}

// tarFolder writes dir's files as a tar, sorted, with fixed times and owners.
func tarFolder(w io.Writer, dir string, mtime time.Time) error {
	var entries []Entry
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if d.IsDir() {
			entries = append(entries, Entry{Path: "/" + rel, Type: tar.TypeDir, Mode: 0o755})
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		entries = append(entries, Entry{Path: "/" + rel, Type: tar.TypeReg, Mode: 0o644, Data: data})
		return nil
	})
	if err != nil {
		return err
	}
	data, err := LayerTar(entries, mtime)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// labels are the OCI annotations every image's config carries.
func labels(m Meta, title, description string, extra map[string]string) map[string]string {
	l := map[string]string{
		"org.opencontainers.image.title":       title,
		"org.opencontainers.image.description": description,
		"org.opencontainers.image.version":     m.Version,
		"org.opencontainers.image.revision":    m.Commit,
		"org.opencontainers.image.created":     m.Created.UTC().Format(time.RFC3339),
		"org.opencontainers.image.source":      m.Source,
	}
	for k, v := range extra {
		l[k] = v
	}
	return l
}
