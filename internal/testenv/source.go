package testenv

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// SourceTree is the top of storbench's source tree, the directory of the
// nearest go.mod above the working directory: go test runs each package's
// tests in the package's own directory. Helpers find the harness scripts,
// manifests and recorded outputs there, also in test binaries built with
// -trimpath (as scripts/test.sh builds them), which keep no source paths.
func SourceTree() (string, error) {
	d, err := os.Getwd()
	if err != nil {
		return "", fmt.Errorf("the source tree: %w", err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		up := filepath.Dir(d)
		if up == d {
			return "", errors.New("the source tree: no go.mod above the working directory")
		}
		d = up
	}
}

// SourcePath is path (slash-separated, from the top of the source tree)
// in the source tree; the test fails when there is none.
func SourcePath(t testing.TB, path string) string {
	t.Helper()
	top, err := SourceTree()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(top, filepath.FromSlash(path))
}
