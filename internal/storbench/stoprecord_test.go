package storbench

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/kubekit"
)

func TestStopRecord(t *testing.T) {
	dir := t.TempDir()
	want := kubekit.NodeStart{Command: "sudo systemctl start k3s-agent", Inventory: "/etc/hosts.ini", Host: "pi-2"}
	if _, _, err := loadStopRecord(dir, "20261128-050000-ab12", "pi-2"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no record yet: %v", err)
	}
	if err := saveStopRecord(dir, "20261128-050000-ab12", "pi-2", want); err != nil {
		t.Fatal(err)
	}
	got, p, err := loadStopRecord(dir, "20261128-050000-ab12", "pi-2")
	if err != nil || got != want {
		t.Fatalf("record %+v (%v), want %+v", got, err, want)
	}
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("%s: %v %v, want mode 0600 (it holds a command cleanup runs)", p, fi.Mode(), err)
	}
	if _, _, err := loadStopRecord(dir, "20261128-050000-ab12", "pi-3"); err == nil {
		t.Error("another node's record found")
	}
	for _, bad := range [][2]string{{"../x", "pi-2"}, {"r", "a/b"}, {"", "pi-2"}, {"r", ".."}} {
		if err := saveStopRecord(dir, bad[0], bad[1], want); err == nil {
			t.Errorf("record named %q %q accepted", bad[0], bad[1])
		}
	}
	big := filepath.Join(dir, "stopped-nodes", "big_n.json")
	if err := os.WriteFile(big, make([]byte, 100<<10), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := loadStopRecord(dir, "big", "n"); err == nil {
		t.Error("a 100 KiB record was read")
	}
	dropStopRecord(dir, "20261128-050000-ab12", "pi-2")
	if _, _, err := loadStopRecord(dir, "20261128-050000-ab12", "pi-2"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("record kept after drop: %v", err)
	}
	t.Setenv("XDG_STATE_HOME", "/x/state")
	if d := DefaultStateDir(); d != "/x/state/storbench" {
		t.Errorf("DefaultStateDir %s", d)
	}
}
