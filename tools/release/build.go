package release

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	v1 "github.com/google/go-containerregistry/pkg/v1"

	"github.com/storbench/storbench/tools/images"
)

// DefaultRegistry is where the project publishes its images; a user
// pushing to their own registry names it with -registry (and in the
// kustomize base's images: or the chart's image.registry).
const DefaultRegistry = "ghcr.io/storbench"

// Options say what Build makes.
type Options struct {
	Repo, Out, Version, Registry, BaseURL, Cache string
	Archives, Images                             bool
	// Platforms limits the build to these (linux/arm/v7); none means all.
	Platforms []string
}

// chosen reports whether o builds platform p (in OCI form).
func (o Options) chosen(p string) bool {
	return len(o.Platforms) == 0 || slices.Contains(o.Platforms, p)
}

// Result lists what Build wrote.
type Result struct {
	Version    string
	Commit     string
	CommitDate time.Time
	Dirty      bool               `json:",omitempty"`
	Archives   []Archive          `json:",omitempty"`
	Krew       string             `json:",omitempty"`
	Images     []*images.Written  `json:",omitempty"`
	Seconds    map[string]float64 // time taken per step
	Warnings   []string           `json:",omitempty"`
}

// Build makes the archives, the krew manifest and the images of the
// repository's commit into o.Out.
func Build(o Options) (*Result, error) {
	src, err := ReadSource(o.Repo, o.Version)
	if err != nil {
		return nil, err
	}
	if src.Dir, err = filepath.Abs(src.Dir); err != nil {
		return nil, err
	}
	if err := CheckRelease(src.Dir, src.Version); err != nil {
		return nil, err
	}
	if o.Registry == "" {
		o.Registry = DefaultRegistry
	}
	res := &Result{Version: src.Version, Commit: src.Commit, CommitDate: src.CommitDate, Dirty: src.Dirty, Seconds: map[string]float64{}}
	if o.Archives {
		start := time.Now()
		var ps []Platform
		for _, p := range Platforms {
			if o.chosen(p.OCI()) {
				ps = append(ps, p)
			}
		}
		if res.Archives, err = BuildArchives(src, ps, o.Out); err != nil {
			return nil, err
		}
		base := o.BaseURL
		if base == "" {
			base = "https://github.com/storbench/storbench/releases/download/" + src.Version
		}
		krew, err := KrewManifest(src, res.Archives, base)
		if err != nil {
			return nil, err
		}
		res.Krew = filepath.Join(o.Out, "plugins", "storbench.yaml")
		if err := os.MkdirAll(filepath.Dir(res.Krew), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(res.Krew, krew, 0o644); err != nil {
			return nil, err
		}
		res.Seconds["archives"] = time.Since(start).Seconds()
	}
	if o.Images {
		start := time.Now()
		if res.Images, res.Warnings, err = BuildImages(src, o); err != nil {
			return nil, err
		}
		res.Seconds["images"] = time.Since(start).Seconds()
	}
	return res, nil
}

// BuildImages builds the storbench and fio images for every platform
// into o.Out/images.
func BuildImages(src Source, o Options) (_ []*images.Written, warnings []string, err error) {
	work, err := os.MkdirTemp("", "storbench-images-")
	if err != nil {
		return nil, nil, err
	}
	defer os.RemoveAll(work)
	m := images.Meta{Version: src.Version, Commit: src.Commit, Created: src.CommitDate,
		Source: "https://github.com/storbench/storbench", Registry: o.Registry}
	sb, fio := map[images.Platform]v1.Image{}, map[images.Platform]v1.Image{}
	for _, ip := range images.Platforms {
		if !o.chosen(ip.String()) {
			continue
		}
		p := Platform{OS: ip.OS, Arch: ip.Arch}
		if ip.Variant != "" {
			p.Variant = ip.Variant[1:]
		}
		srcs, err := images.Fetch(ip, o.Cache, work)
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", ip, err)
		}
		if srcs.Warning != "" {
			warnings = append(warnings, srcs.Warning)
		}
		bin := filepath.Join(work, p.Name(), "storbench")
		if err := BuildBinary(src, p, bin); err != nil {
			return nil, nil, err
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return nil, nil, err
		}
		if sb[ip], err = images.StorbenchImage(ip, m, srcs, data); err != nil {
			return nil, nil, fmt.Errorf("storbench image for %s: %w", ip, err)
		}
		if fio[ip], err = images.FioImage(ip, m, srcs); err != nil {
			return nil, nil, fmt.Errorf("fio image for %s: %w", ip, err)
		}
	}
	var out []*images.Written
	for _, x := range []struct {
		name string
		imgs map[images.Platform]v1.Image
	}{{images.StorbenchName, sb}, {images.FioName, fio}} {
		idx, err := images.Index(x.imgs)
		if err != nil {
			return nil, nil, err
		}
		w, err := images.Write(idx, filepath.Join(o.Out, "images"), x.name, m)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, w)
	}
	return out, warnings, nil
}
