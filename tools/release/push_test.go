package release

import (
	"context"
	"io"
	"log"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/registry"
	v1 "github.com/google/go-containerregistry/pkg/v1"
	"github.com/google/go-containerregistry/pkg/v1/random"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/storbench/storbench/tools/images"
	"github.com/storbench/storbench/tools/internal/toolenv"
)

// An index written as the release writes its images is pushed whole to a
// registry (go-containerregistry's, in process, over HTTP): the registry
// then serves the same digest with every platform.
func TestPush(t *testing.T) {
	srv := httptest.NewServer(registry.New(registry.Logger(log.New(io.Discard, "", 0))))
	defer srv.Close()
	reg := strings.TrimPrefix(srv.URL, "http://") + "/storbench"
	imgs := map[images.Platform]v1.Image{}
	for _, p := range images.Platforms {
		img, err := random.Image(256, 2)
		if err != nil {
			t.Fatal(err)
		}
		imgs[p] = img
	}
	idx, err := images.Index(imgs)
	if err != nil {
		t.Fatal(err)
	}
	w, err := images.Write(idx, t.TempDir(), images.FioName, images.Meta{Version: "v9.8.7", Registry: reg, Created: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if err := Push(context.Background(), []*images.Written{w}); err != nil {
		t.Fatal(err)
	}
	ref, err := name.ParseReference(reg + "/" + images.FioName + ":v9.8.7")
	if err != nil {
		t.Fatal(err)
	}
	got, err := remote.Index(ref)
	if err != nil {
		t.Fatal(err)
	}
	d, _ := got.Digest()
	im, err := got.IndexManifest()
	if err != nil {
		t.Fatal(err)
	}
	if d != w.Digest || len(im.Manifests) != len(images.Platforms) {
		t.Errorf("the registry holds %s with %d platforms; pushed %s with %d", d, len(im.Manifests), w.Digest, len(images.Platforms))
	}
	for _, m := range im.Manifests {
		if _, err := remote.Image(ref.Context().Digest(m.Digest.String())); err != nil {
			t.Errorf("platform %s: %v", m.Platform, err)
		}
	}
}

// A release tag the tree's RELEASE file does not name is refused; other
// versions are not releases and build.
func TestCheckRelease(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(ReleaseFile)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ReleaseFile), []byte("v0.2.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		version string
		refused bool
	}{
		{"v0.2.0", false},
		{"v0.3.0", true},
		{"v0.1.9", true},
		{"v0.0.0-20261124120000-0123456789ab", false},
		{"v0.0.0-20261124120000-0123456789ab-dirty", false},
		{"v0.3.0-rc.1", false},
	} {
		t.Run(tc.version, func(t *testing.T) {
			err := CheckRelease(dir, tc.version)
			if (err != nil) != tc.refused {
				t.Errorf("CheckRelease(%s): %v, want refused %v", tc.version, err, tc.refused)
			}
			if err != nil && !strings.Contains(err.Error(), ReleaseFile+" says v0.2.0") {
				t.Errorf("the refusal does not say what RELEASE holds: %v", err)
			}
		})
	}
	// This repository's RELEASE is one.
	b, err := os.ReadFile(filepath.Join(toolenv.Repo(t), ReleaseFile))
	if err != nil {
		t.Fatal(err)
	}
	if v := strings.TrimSpace(string(b)); CheckRelease(toolenv.Repo(t), v) != nil || !releaseTag.MatchString(v) {
		t.Errorf("%s holds %q, not a release version", ReleaseFile, v)
	}
}
