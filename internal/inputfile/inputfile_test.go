package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestRead(t *testing.T) {
	dir := t.TempDir()
	small := filepath.Join(dir, "suite.yaml")
	if err := os.WriteFile(small, []byte("name: x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := Read(small); err != nil || string(data) != "name: x\n" {
		t.Errorf("Read(small) = %q, %v", data, err)
	}
	big := filepath.Join(dir, "disk.img")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(MaxSize + 1); err != nil { // sparse: no disk used
		t.Fatal(err)
	}
	f.Close()
	if _, err := Read(big); err == nil || !strings.Contains(err.Error(), "larger than 16.0 MiB") {
		t.Errorf("Read(big) = %v, want an error naming the bound", err)
	}
	if _, err := Read(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Errorf("Read(missing) = %v, want not-exist", err)
	}
}
