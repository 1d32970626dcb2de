package safety

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/testenv"
	"golang.org/x/sys/unix"
)

type patch struct {
	off  int64 // negative: from the end
	data string
}

// TestDetectorPositions places each magic where its format puts it, on
// sizes that are not round, and checks the built-in check finds it there.
func TestDetectorPositions(t *testing.T) {
	const size = 37<<20 + 3*4096 + 512 // not 64 KiB or 256 KiB aligned
	mbr := make([]byte, 512)
	mbr[446], mbr[446+4] = 0x80, 0x83
	mbr[510], mbr[511] = 0x55, 0xaa
	bootCode := make([]byte, 512)
	copy(bootCode[446:], "\xfa\x33\xc0\x8e") // code, not entries
	bootCode[510], bootCode[511] = 0x55, 0xaa
	md090 := int64(size)&^(64<<10-1) - 64<<10
	md10 := (int64(size)>>9 - 16) &^ 7 << 9
	zfsLabel3 := int64(size)&^(256<<10-1) - 256<<10 + 128<<10 + 7<<10
	cases := []struct {
		name    string
		patches []patch
		want    string
	}{
		{"blank", nil, ""},
		{"md 0.90 little-endian", []patch{{md090, mdMagicLE}}, "version 0.90"},
		{"md 0.90 big-endian", []patch{{md090, mdMagicBE}}, "version 0.90"},
		{"md 1.0", []patch{{md10, mdMagicLE}}, "version 1.0"},
		{"md 1.1", []patch{{0, mdMagicLE}}, "version 1.1"},
		{"md 1.2", []patch{{4096, mdMagicLE}}, "version 1.2"},
		{"md 1.2 big-endian is not md", []patch{{4096, mdMagicBE}}, ""},
		{"zfs in the last label only", []patch{{zfsLabel3, zfsMagicBE}}, "ZFS"},
		{"luks2 secondary at 64 KiB", []patch{{64 << 10, "SKUL\xba\xbe"}}, "LUKS2 secondary"},
		{"gpt on 4096-byte sectors", []patch{{4096, "EFI PART"}}, "GPT partition table at byte 4096"},
		{"swap with 16 KiB pages", []patch{{16<<10 - 10, "SWAPSPACE2"}}, "swap"},
		{"hibernation image", []patch{{4096 - 10, "S1SUSPEND"}}, "swap space or hibernation"},
		{"lvm label in sector 1", []patch{{512, "LABELONE"}, {512 + 24, "LVM2 001"}}, "LVM2 physical volume label in sector 1"},
		{"LABELONE without LVM2", []patch{{512, "LABELONE"}}, ""},
		{"dos partition table", []patch{{0, string(mbr)}}, "DOS partition table with 1 partition entries"},
		{"boot code with 0x55AA", []patch{{0, string(bootCode)}}, "boot sector signature"},
		{"bcache", []patch{{4096 + 24, bcacheMagic}}, "bcache"},
		{"f2fs", []patch{{1024, f2fsMagic}}, "F2FS"},
		{"iso 9660 second descriptor", []patch{{0x8801, "CD001"}}, "ISO 9660"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			buf := make([]byte, size)
			for _, p := range c.patches {
				copy(buf[p.off:], p.data)
			}
			found, err := detectMagic(&image{r: bytes.NewReader(buf), size: size})
			if err != nil {
				t.Fatal(err)
			}
			got := strings.Join(found, "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("found %q, want %q", got, c.want)
			}
		})
	}
}

type failingReader struct{}

func (failingReader) ReadAt([]byte, int64) (int, error) { return 0, unix.EIO }

// A device that cannot be read is not blank.
func TestReadFailureProvesNothing(t *testing.T) {
	_, err := detectMagic(&image{r: failingReader{}, size: 64 << 20})
	if !errors.Is(err, unix.EIO) {
		t.Errorf("read errors: %v", err)
	}
	b := ProbeBlank(context.Background(), filepath.Join(t.TempDir(), "missing"))
	if len(b.Unproven) == 0 {
		t.Errorf("an unreadable device was proven blank: %+v", b)
	}
}

// TestBlkidAnswersOtherThanNothingFound: only exit 2 proves blankness.
func TestBlkidAnswersOtherThanNothingFound(t *testing.T) {
	testenv.Tool(t, "sh", "dash")
	img := filepath.Join(t.TempDir(), "blank.img")
	if err := os.WriteFile(img, make([]byte, 1<<20), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, script, want string
	}{
		{"nothing found", "exit 2", ""},
		{"ambivalent", "exit 8", "ambivalent"},
		{"usage error", "echo 'blkid: bad usage' >&2; exit 4", "bad usage"},
		{"cannot open", "echo 'blkid: cannot open: Permission denied' >&2; exit 1", "Permission denied"},
		{"found but unnamed", "echo 'UUID=1234'; exit 0", "did not name"},
		{"found", "echo TYPE=ext4; exit 0", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bin := t.TempDir()
			if err := os.WriteFile(filepath.Join(bin, "blkid"), []byte("#!/bin/sh\n"+c.script+"\n"), 0o755); err != nil {
				t.Fatal(err)
			}
			t.Setenv("PATH", bin+":/usr/bin:/bin")
			b := ProbeBlank(context.Background(), img)
			got := strings.Join(b.Unproven, "; ")
			if c.want == "" && got != "" || !strings.Contains(got, c.want) {
				t.Errorf("unproven %q, want %q", got, c.want)
			}
			if c.name == "found" && fmt.Sprint(b.Signatures) != "[type=ext4 (blkid)]" {
				t.Errorf("signatures %q", b.Signatures)
			}
		})
	}
}

// TestHoldersFromSys replays a /sys where device-mapper and md hold the
// device and its partition (this kernel may have neither driver).
func TestHoldersFromSys(t *testing.T) {
	dev := testenv.LoopDevice(t, 16<<20)
	var st unix.Stat_t
	if err := unix.Stat(dev, &st); err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	name := filepath.Base(dev)
	sys := filepath.Join(root, "sys/devices/virtual/block", name)
	for _, d := range []string{"holders/dm-3", name + "p1/holders/md127", "loop"} {
		if err := os.MkdirAll(filepath.Join(sys, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{"size": "32768", name + "p1/partition": "1", name + "p1/dev": "259:9", "ro": "0"}
	for f, v := range files {
		if err := os.WriteFile(filepath.Join(sys, f), []byte(v+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(root, "sys/dev/block", fmt.Sprintf("%d:%d", unix.Major(uint64(st.Rdev)), unix.Minor(uint64(st.Rdev))))
	os.MkdirAll(filepath.Dir(link), 0o755)
	if err := os.Symlink(sys, link); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(root, "proc/self"), 0o755)
	os.WriteFile(filepath.Join(root, "proc/self/mountinfo"), []byte("36 35 259:9 / /srv rw - ext4 /dev/"+name+"p1 rw\n"), 0o644)
	os.WriteFile(filepath.Join(root, "proc/swaps"), []byte("Filename Type Size Used Priority\n"), 0o644)

	err := Policy{Destructive: []string{dev}}.CheckWrite(context.Background(), LocalFacts{Root: root}, dev, []string{"w"})
	var r *Refusal
	if !errors.As(err, &r) || r.Rule != RuleInUse {
		t.Fatalf("not refused as in use: %v", err)
	}
	for _, want := range []string{"held by md127, dm-3", "has partitions: " + name + "p1", "mounted: " + name + "p1 on /srv"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("refusal does not say %q: %v", want, err)
		}
	}
}

func TestLittleEndianMagics(t *testing.T) {
	if binary.LittleEndian.Uint32([]byte(mdMagicLE)) != 0xa92b4efc || mdMagicLE != "\xfc\x4e\x2b\xa9" {
		t.Errorf("md magic %x", mdMagicLE)
	}
}
