package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
)

// TestDirectoryWithoutPermissionIsRefusedInCheck checks a directory as an
// unprivileged user would: the real user id becomes nobody's (access(2)
// judges by it) while the test keeps root's effective id to restore it.
func TestDirectoryWithoutPermissionIsRefusedInCheck(t *testing.T) {
	testenv.Root(t)
	base := t.TempDir()
	for _, d := range []string{filepath.Dir(base), base} {
		if err := os.Chmod(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	closed := filepath.Join(base, "closed")
	open := filepath.Join(base, "open")
	if err := os.Mkdir(closed, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(open, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(open, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Setresuid(65534, 0, 0); err != nil {
		t.Fatalf("becoming nobody: %v", err)
	}
	errClosed := NewTarget(closed, Options{}).Check(context.Background(), writeNeed("r"))
	errOpen := NewTarget(open, Options{}).Check(context.Background(), writeNeed("r"))
	if err := syscall.Setresuid(0, 0, 0); err != nil {
		t.Fatalf("becoming root again: %v", err)
	}
	if errClosed == nil || !strings.Contains(errClosed.Error(), "cannot create files here") || !strings.Contains(errClosed.Error(), "permission denied") {
		t.Errorf("a directory nobody may write to: %v", errClosed)
	}
	if errOpen != nil {
		t.Errorf("a directory anyone may write to: %v", errOpen)
	}
}
