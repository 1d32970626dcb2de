// Package toolenv is the build tooling's test support: it skips a test
// whose prerequisite is missing, or fails it when STORBENCH_REQUIRE asks for
// every prerequisite (CI), as the product's internal/testenv does; it names
// the repository the tests build; and it makes one build for all of a test
// binary's tests.
package toolenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Repo is the storbench repository the tools module sits in: the
// directory above the tools module's own go.mod, found from the working
// directory (go test runs a package's tests in its directory), so that it
// holds also in test binaries built with -trimpath, which keep no source
// paths.
func Repo(t testing.TB) string {
	t.Helper()
	d, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil && filepath.Base(d) == "tools" {
			return filepath.Dir(d)
		}
		up := filepath.Dir(d)
		if up == d {
			t.Fatal("toolenv: no tools/go.mod above the working directory, so no repository")
		}
		d = up
	}
}

// Once holds one build (a release, its images) made in a temporary folder
// the first time a test asks for it and shared by the test binary's other
// tests. TestMain calls Remove when the tests are done.
type Once[T any] struct {
	once sync.Once
	dir  string
	val  T
	err  error
}

// Get returns what build made in its folder, and the folder, building it
// the first time; a failed build fails every test that asks.
func (o *Once[T]) Get(t testing.TB, build func(dir string) (T, error)) (T, string) {
	t.Helper()
	o.once.Do(func() {
		if o.dir, o.err = os.MkdirTemp("", "storbench-tools-test-"); o.err == nil {
			o.val, o.err = build(o.dir)
		}
	})
	if o.err != nil {
		t.Fatal(o.err)
	}
	return o.val, o.dir
}

// Remove deletes the build's folder, if a test made one.
func (o *Once[T]) Remove() {
	if o.dir != "" {
		os.RemoveAll(o.dir)
	}
}

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

// EnvReleaseProof names the environment variable that asks for the
// release's whole reproducibility proof: set to 1, the reproducibility
// tests build every platform a second time and compare every byte.
// Without it they rebuild linux/amd64 only and compare what that build
// makes: the proof of every platform is a release's, not every run's.
const EnvReleaseProof = "STORBENCH_RELEASE_PROOF"

// ProofPlatforms are the platforms (OCI names) a reproducibility test
// builds a second time: nil (all of them) under STORBENCH_RELEASE_PROOF=1,
// else linux/amd64.
func ProofPlatforms() []string {
	if os.Getenv(EnvReleaseProof) == "1" {
		return nil
	}
	return []string{"linux/amd64"}
}
