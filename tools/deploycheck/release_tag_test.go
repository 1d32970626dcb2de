package deploycheck

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/storbench/storbench/tools/internal/toolenv"
	"github.com/storbench/storbench/tools/release"
	"helm.sh/helm/v3/pkg/chart/loader"
	sigsyaml "sigs.k8s.io/yaml"
)

// The images the manifests name are the release internal/version/RELEASE
// names, which is also what a build from source uses for its fio pods
// (version.ImageTag) and what the release workflow refuses to tag
// otherwise; the registry is the one the release pushes to and the fio
// pods' default names.
func TestImagesAtRelease(t *testing.T) {
	repo := toolenv.Repo(t)
	b, err := os.ReadFile(filepath.Join(repo, release.ReleaseFile))
	if err != nil {
		t.Fatal(err)
	}
	at := strings.TrimSpace(string(b))
	if err := release.CheckRelease(repo, at); err != nil {
		t.Fatal(err)
	}
	var k struct {
		Images []struct{ Name, NewName, NewTag string } `json:"images"`
	}
	kb, err := os.ReadFile(filepath.Join(repo, "deploy", "base", "kustomization.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sigsyaml.Unmarshal(kb, &k); err != nil {
		t.Fatal(err)
	}
	if len(k.Images) != 1 || k.Images[0].NewTag != at || k.Images[0].NewName != release.DefaultRegistry+"/storbench" {
		t.Errorf("deploy/base's images: %+v; want %s/storbench at %s (RELEASE)", k.Images, release.DefaultRegistry, at)
	}
	ch, err := loader.Load(chartDir(t))
	if err != nil {
		t.Fatal(err)
	}
	if ch.Metadata.AppVersion != at {
		t.Errorf("the chart's appVersion is %s, RELEASE says %s", ch.Metadata.AppVersion, at)
	}
	if reg, _ := ch.Values["image"].(map[string]any)["registry"].(string); reg != release.DefaultRegistry {
		t.Errorf("the chart's image.registry is %q, the release pushes to %s", reg, release.DefaultRegistry)
	}
	kube, err := os.ReadFile(filepath.Join(repo, "internal", "kubekit", "cluster.go"))
	if err != nil {
		t.Fatal(err)
	}
	if m := regexp.MustCompile(`FioImageRepository = "([^"]+)"`).FindSubmatch(kube); m == nil || string(m[1]) != release.DefaultRegistry+"/storbench-fio" {
		t.Errorf("the fio pods' default repository is %q, the release pushes %s/storbench-fio", m, release.DefaultRegistry)
	}
	if !strings.Contains(string(kube), `FioImageRepository + ":" + version.ImageTag()`) {
		t.Error("the fio pods' default image is not tagged version.ImageTag() (RELEASE for a build from source)")
	}
}
