package local

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"

	"github.com/storbench/storbench/internal/runner"
)

func TestCPUModel(t *testing.T) {
	if got := cpuModel("testdata/cpuinfo-pi4"); got != "Raspberry Pi 4 Model B Rev 1.4" {
		t.Errorf("Pi cpuinfo: %q", got)
	}
}

func TestMountForPicksTheLongestPrefix(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "proc/self"), 0o755); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile("testdata/mountinfo")
	if err := os.WriteFile(filepath.Join(root, "proc/self/mountinfo"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct{ path, mp, fs, src, dev string }{
		{"/mnt/usb ssd/bench", "/mnt/usb ssd", "ext4", "/dev/sda1", "8:1"},
		{"/mnt/usb ssd/inner/x", "/mnt/usb ssd/inner", "xfs", "/dev/sdb1", "8:17"},
		{"/mnt/nas/pvc", "/mnt/nas", "nfs4", "192.168.1.10:/export/k8s", "0:45"},
		{"/mnt/nasty", "/", "ext4", "/dev/mmcblk0p2", "179:2"},
	}
	for _, c := range cases {
		m, ok := mountFor(root, c.path)
		if !ok || m.mountPoint != c.mp || m.fsType != c.fs || m.source != c.src || m.devnum != c.dev {
			t.Errorf("%s: %+v", c.path, m)
		}
	}
}

func TestFitFileSize(t *testing.T) {
	dir := t.TempDir()
	if got, notice, err := fitFileSize(dir, 1<<20); err != nil || got != 1<<20 || notice != "" {
		t.Errorf("small file: %d %q %v", got, notice, err)
	}
	// More than the disk holds: reduced to what keeps it 90% full, with a notice.
	got, notice, err := fitFileSize(dir, 1<<60)
	if err != nil || got >= 1<<60 || got < MinFileSize || !strings.Contains(notice, "reduced from") {
		t.Errorf("huge file: %d %q %v", got, notice, err)
	}
}

func TestDirectoryTargetCleansUpAfterItself(t *testing.T) {
	dir := t.TempDir()
	tgt := NewTarget(dir, Options{})
	need := runner.Need{RunID: "r1", FileSize: 1 << 20, Writers: []string{"w"}, Direct: true}
	if err := tgt.Check(context.Background(), need); err != nil {
		t.Fatal(err)
	}
	p, err := tgt.Prepare(context.Background(), need)
	if err != nil {
		t.Fatal(err)
	}
	if p.Kind != "directory" || p.File.Name != TestFileName || filepath.Dir(p.Dir) != dir || result.LabelFSType.Of(p.Labels) == "" || !p.Local {
		t.Errorf("prepared %+v", p)
	}
	if err := os.WriteFile(filepath.Join(p.Dir, TestFileName), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
	if _, err := NewTarget(filepath.Join(dir, "missing"), Options{}).Prepare(context.Background(), need); err == nil {
		t.Error("a missing directory was accepted")
	}
	f := filepath.Join(dir, "plain-file")
	os.WriteFile(f, nil, 0o644)
	if err := NewTarget(f, Options{}).Check(context.Background(), need); err == nil || !strings.Contains(err.Error(), "neither a directory nor a block device") {
		t.Errorf("plain file: %v", err)
	}
}

// Kernels before 6.6 refuse O_DIRECT on tmpfs (refused with the reason);
// newer ones accept it, and storbench then says the figures measure memory.
func TestTmpfsIsRefusedOrFlagged(t *testing.T) {
	testenv.Root(t)
	mnt := t.TempDir()
	if err := mountTmpfs(mnt); err != nil {
		testenv.Missing(t, "root", "cannot mount tmpfs here: %v", err)
	}
	defer unmount(mnt)
	p, err := NewTarget(mnt, Options{}).Prepare(context.Background(), runner.Need{RunID: "r", FileSize: 1 << 20, Direct: true})
	switch {
	case err != nil:
		if !strings.Contains(err.Error(), "does not support direct I/O") {
			t.Errorf("tmpfs: %v", err)
		}
	default:
		if len(p.Notices) == 0 || !strings.Contains(p.Notices[0], "measure RAM") {
			t.Errorf("tmpfs accepted without a notice: %+v", p.Notices)
		}
		if err := p.Cleanup(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if entries, _ := os.ReadDir(mnt); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}
