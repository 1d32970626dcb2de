package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCompare(t *testing.T) {
	path := filepath.Join(t.TempDir(), "out.txt")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	Compare(t, path, []byte("a\nb\n"))
	var ft fakeT
	Compare(&ft, path, []byte("a\nc\n"))
	if !ft.failed || !strings.Contains(ft.msg, "- b\n+ c") {
		t.Errorf("a differing output: failed %v, message %q", ft.failed, ft.msg)
	}
}

func TestDiff(t *testing.T) {
	if d := Diff("x\ny", "x\ny"); d != "" {
		t.Errorf("equal texts differ: %q", d)
	}
	if d := Diff("x", "x\nz"); d != "- \n+ z" {
		t.Errorf("an added line: %q", d)
	}
}

// fakeT records a failure instead of failing the test.
type fakeT struct {
	testing.TB
	failed bool
	msg    string
}

func (f *fakeT) Helper() {}
func (f *fakeT) Errorf(format string, args ...any) {
	f.failed = true
	f.msg = fmt.Sprintf(format, args...)
}
