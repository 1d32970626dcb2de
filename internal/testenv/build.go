package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// Binaries builds Go commands for tests that run storbench as users do,
// in processes of its own: each once per test binary. A TestMain calls
// Remove when the tests are done.
type Binaries struct {
	mu    sync.Mutex
	dir   string
	built map[string]string
}

// Build returns the path of the command pkg (an import path), building it
// the first time.
func (b *Binaries) Build(t testing.TB, pkg string) string {
	t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	if p, ok := b.built[pkg]; ok {
		return p
	}
	if b.dir == "" {
		dir, err := os.MkdirTemp("", "storbench-test-bin-")
		if err != nil {
			t.Fatal(err)
		}
		b.dir, b.built = dir, map[string]string{}
	}
	bin := filepath.Join(b.dir, filepath.Base(pkg))
	if out, err := exec.Command("go", "build", "-o", bin, pkg).CombinedOutput(); err != nil {
		t.Fatalf("go build %s: %v\n%s", pkg, err, out)
	}
	b.built[pkg] = bin
	return bin
}

// Remove deletes what Build built.
func (b *Binaries) Remove() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.dir == "" {
		return nil
	}
	return os.RemoveAll(b.dir)
}
