// Package golden compares a test's output with a golden file in testdata/,
// and rewrites the file instead when the test runs with -update:
//
//	go test ./internal/render -update
//
// Every golden test uses it, so there is one -update flag and one way to
// show a difference. Only tests import it.
package golden

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/ with what the tests produce")

// Updating reports whether the tests run with -update.
func Updating() bool { return *update }

// Compare fails t when got differs from the file at path, showing the lines
// that differ; with -update it writes got to path (creating its directory)
// and passes.
func Compare(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test -update creates it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from what the test produces (check, then go test -update to accept):\n%s", path, Diff(string(want), string(got)))
	}
}

// Diff shows the first twenty lines that differ between want and got, as
// "- want" and "+ got" pairs.
func Diff(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var out []string
	for i := 0; i < max(len(w), len(g)) && len(out) < 40; i++ {
		var a, b string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			b = g[i]
		}
		if a != b {
			out = append(out, "- "+a, "+ "+b)
		}
	}
	return strings.Join(out, "\n")
}
