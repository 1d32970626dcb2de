package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// A refusal from below the library (runner/kube's pod overrides) names
// its request field, and the command line shows the flag instead.
func TestRefusalBelowTheLibraryNamesTheFlag(t *testing.T) {
	overrides := filepath.Join(t.TempDir(), "o.yaml")
	if err := os.WriteFile(overrides, []byte("- not a mapping\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	k := storbench.DefaultKubeRequest()
	k.PodOverrides = overrides
	req := storbench.DefaultRunRequest()
	req.Targets, req.Kube = []string{"k8s:a"}, &k
	st := store.NewLazy(filepath.Join(t.TempDir(), "r.db"))
	defer st.Close()
	_, err := storbench.Run(context.Background(), st, req, nil) // refused before any cluster is reached
	if err == nil || !strings.Contains(err.Error(), "TargetOptions.PodOverrides "+overrides) {
		t.Fatalf("the library says %v, want the field named", err)
	}
	got := FromLibrary(err).Error()
	if !strings.Contains(got, "--pod-overrides "+overrides+": want a mapping") || strings.Contains(got, "TargetOptions") {
		t.Errorf("the command line says %q, want --pod-overrides", got)
	}
}
