// Command storbench-release builds storbench's release artefacts from the
// repository it is run in: the archives storbench-VERSION-linux-ARCH.tar.gz
// with SHA256SUMS and the krew manifest, and the storbench and
// storbench-fio images as OCI layouts and archives (scripts/release.sh).
//
// With -push the images then go to the registry they are named after
// (the credentials of docker login); a release version (vX.Y.Z) must be
// the one internal/version/RELEASE names.
//
//	storbench-release [-repo DIR] [-out DIR] [-version V] [-registry R] [-only archives|images] [-platforms linux/amd64,...] [-push]
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storbench/storbench/tools/release"
)

func main() {
	var o release.Options
	flag.StringVar(&o.Repo, "repo", "..", "the storbench repository")
	flag.StringVar(&o.Out, "out", "dist", "where the artefacts go")
	flag.StringVar(&o.Version, "version", "", "the release version (default: the commit's tag, or a pseudo-version)")
	flag.StringVar(&o.Registry, "registry", release.DefaultRegistry, "the registry the images are named under")
	flag.StringVar(&o.BaseURL, "download-url", "", "where the archives will be downloaded from (default: the GitHub release of the version)")
	flag.StringVar(&o.Cache, "cache", defaultCache(), "where Debian's package lists and packages are kept between builds")
	only := flag.String("only", "", "build only archives or only images")
	platforms := flag.String("platforms", "", "build only these platforms, separated by commas (linux/amd64,linux/arm64,linux/arm/v7)")
	push := flag.Bool("push", false, "push the images to the registry they are named after (credentials: docker login)")
	flag.Parse()
	if *push && *only == "archives" {
		fmt.Fprintln(os.Stderr, "storbench-release: -push pushes the images: not with -only archives")
		os.Exit(2)
	}
	if *platforms != "" {
		o.Platforms = strings.Split(*platforms, ",")
	}
	o.Archives, o.Images = *only != "images", *only != "archives"
	start := time.Now()
	res, err := release.Build(o)
	if err != nil {
		fmt.Fprintln(os.Stderr, "storbench-release:", err)
		os.Exit(1)
	}
	for _, w := range res.Warnings {
		fmt.Fprintln(os.Stderr, "storbench-release: warning:", w)
	}
	if *push {
		if err := release.Push(context.Background(), res.Images); err != nil {
			fmt.Fprintln(os.Stderr, "storbench-release:", err)
			os.Exit(1)
		}
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(res); err != nil {
		fmt.Fprintln(os.Stderr, "storbench-release:", err)
		os.Exit(1)
	}
	fmt.Fprintf(os.Stderr, "storbench-release: %s in %s (%.1f s)\n", res.Version, o.Out, time.Since(start).Seconds())
}

func defaultCache() string {
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "storbench-release")
	}
	return filepath.Join(os.TempDir(), "storbench-release")
}
