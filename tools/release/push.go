package release

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/google/go-containerregistry/pkg/authn"
	"github.com/google/go-containerregistry/pkg/name"
	"github.com/google/go-containerregistry/pkg/v1/layout"
	"github.com/google/go-containerregistry/pkg/v1/remote"

	"github.com/storbench/storbench/tools/images"
)

// Push sends each written image, every platform in one index, from its
// OCI layout to the registry it is named after (Written.Ref), and checks
// the registry then reports the digest written. Credentials come from the
// Docker config (docker login, crane auth login; in a workflow,
// docker/login-action), or opts.
func Push(ctx context.Context, written []*images.Written, opts ...remote.Option) error {
	opts = append([]remote.Option{remote.WithContext(ctx), remote.WithAuthFromKeychain(authn.DefaultKeychain)}, opts...)
	for _, w := range written {
		ref, err := name.ParseReference(w.Ref)
		if err != nil {
			return fmt.Errorf("pushing %s: %w", w.Ref, err)
		}
		lp, err := layout.FromPath(w.Layout)
		if err != nil {
			return fmt.Errorf("pushing %s: reading %s: %w", w.Ref, w.Layout, err)
		}
		idx, err := lp.ImageIndex()
		if err != nil {
			return fmt.Errorf("pushing %s: %w", w.Ref, err)
		}
		inner, err := idx.ImageIndex(w.Digest)
		if err != nil {
			return fmt.Errorf("pushing %s: the layout %s holds no index %s: %w", w.Ref, w.Layout, w.Digest, err)
		}
		if err := remote.WriteIndex(ref, inner, opts...); err != nil {
			return fmt.Errorf("pushing %s: %w", w.Ref, err)
		}
		desc, err := remote.Head(ref, opts...)
		if err != nil {
			return fmt.Errorf("pushed %s, but reading it back: %w", w.Ref, err)
		}
		if desc.Digest != w.Digest {
			return fmt.Errorf("pushed %s, but the registry reports digest %s, not %s", w.Ref, desc.Digest, w.Digest)
		}
	}
	return nil
}

// releaseTag is a release's version: what a tag that publishes one looks
// like.
var releaseTag = regexp.MustCompile(`^v[0-9]+\.[0-9]+\.[0-9]+$`)

// ReleaseFile is the file holding the release a tree is at (read by
// internal/version, named by the manifests in deploy/).
const ReleaseFile = "internal/version/RELEASE"

// CheckRelease refuses to build release version (vMAJOR.MINOR.PATCH) from
// a tree whose ReleaseFile names another: the images it would publish
// would not be the ones that tree's manifests and source builds name.
// Other versions (pseudo-versions, -rc tags) are not releases and pass.
func CheckRelease(dir, version string) error {
	if !releaseTag.MatchString(version) {
		return nil
	}
	b, err := os.ReadFile(filepath.Join(dir, ReleaseFile))
	if err != nil {
		return fmt.Errorf("release %s: %w", version, err)
	}
	if at := strings.TrimSpace(string(b)); at != version {
		return fmt.Errorf("release %s: %s says %s: set it to %s (and the tags in deploy/) in the commit that gets the tag", version, ReleaseFile, at, version)
	}
	return nil
}
