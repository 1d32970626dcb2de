// Package toolenv skips a build-tooling test whose prerequisite is missing,
// or fails it when STORBENCH_REQUIRE asks for every prerequisite (CI), as
// the product's internal/testenv does.
package toolenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// Missing skips the test, or fails it under STORBENCH_REQUIRE=all.
func Missing(t testing.TB, what, why string) {
	t.Helper()
	if os.Getenv("STORBENCH_REQUIRE") == "all" {
		t.Fatalf("%s is required (STORBENCH_REQUIRE=all): %s", what, why)
	}
	t.Skipf("%s missing: %s", what, why)
}

// Need returns the path of a program on PATH.
func Need(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		Missing(t, name, err.Error())
	}
	return p
}

// Kubectl returns a kubectl: the loopback cluster's (built into
// $KAPI_ROOT/bin, ~/.cache/storbench-kapi by default), else one on PATH.
func Kubectl(t testing.TB) string {
	t.Helper()
	root := os.Getenv("KAPI_ROOT")
	if root == "" {
		if home, err := os.UserHomeDir(); err == nil {
			root = filepath.Join(home, ".cache", "storbench-kapi")
		}
	}
	if p := filepath.Join(root, "bin", "kubectl"); root != "" {
		if fi, err := os.Stat(p); err == nil && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	return Need(t, "kubectl")
}
