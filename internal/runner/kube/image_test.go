package kube

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/version"
)

// Pods run the project's fio image of this storbench's version unless the
// user names another; "alpine" is the fallback that installs fio at start.
func TestDefaultImage(t *testing.T) {
	if kubekit.DefaultImage != kubekit.FioImageRepository+":"+version.ImageTag() || !strings.HasPrefix(kubekit.DefaultImage, "ghcr.io/storbench/storbench-fio:") {
		t.Errorf("DefaultImage %q", kubekit.DefaultImage)
	}
	for _, c := range []struct{ in, want string }{
		{"", kubekit.DefaultImage},
		{"alpine", kubekit.AlpineImage},
		{"registry.lan/storbench-fio:v1", "registry.lan/storbench-fio:v1"},
		{"alpine:3.21", "alpine:3.21"},
	} {
		if got := NewTarget(&kubekit.Cluster{}, "c", "n", 1, TargetOptions{Image: c.in}).opts.Image; got != c.want {
			t.Errorf("--image %q: pods run %q, want %q", c.in, got, c.want)
		}
	}
	if !strings.Contains(containerScript, "apk add") {
		t.Error("the container script no longer installs fio where the image lacks it (the alpine fallback)")
	}
}
