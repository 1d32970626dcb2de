// Package safetytest is the hostile device corpus: loop devices that hold
// data (filesystems, RAID, LVM, crypto, partition tables, swap) or that are
// in use (mounted, swap, read by another loop device, read-only). Every
// path that writes to a device must refuse each of them and leave the
// device's bytes unchanged. Images are made at test time by the real tool
// where Debian has one, and crafted byte by byte only where no tool can run
// here (Linux md without the md driver, ZFS, Ceph BlueStore).
package safetytest

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/testenv"
)

const mib = int64(1) << 20

// Case is one hostile device.
type Case struct {
	Name string
	// Size is the loop device's size in bytes (a sparse file).
	Size int64
	// Losetup are extra losetup arguments (--sector-size 4096).
	Losetup []string
	// Tools are the programs Setup runs, with their Debian packages.
	Tools [][2]string
	// Magic is what the built-in check must report ("" when the case is
	// not about a signature the built-in check knows).
	Magic string
	// Blkid is what blkid -p must report ("" when blkid is not asked:
	// crafted images and in-use cases).
	Blkid string
	// Refusal is what every refusal of this device must say.
	Refusal string
	// Setup writes the image onto dev or puts dev in use; it registers
	// its own cleanup.
	Setup func(t testing.TB, dev string)
}

// Device attaches a fresh loop device and sets the case up on it.
func (c Case) Device(t testing.TB) string {
	t.Helper()
	testenv.Loop(t)
	for _, tool := range c.Tools {
		testenv.Tool(t, tool[0], tool[1])
	}
	img := filepath.Join(t.TempDir(), "hostile.img")
	f, err := os.Create(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(c.Size); err != nil {
		t.Fatal(err)
	}
	f.Close()
	dev := testenv.AttachLoop(t, img, c.Losetup...)
	c.Setup(t, dev)
	return dev
}

// Sum is the sha256 of the whole device.
func Sum(t testing.TB, dev string) string {
	t.Helper()
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatalf("hashing %s: %v", dev, err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// ext4Quiet is the mount option that keeps a mounted ext4 from changing
// what the device reads as on its own: since Linux 5.8 ext4 reads and
// initialises the block bitmaps of uninitialised groups in the background
// after mount, in the page cache every reader of the device shares, so a
// checksum taken a moment later differs by their padding bits.
const ext4Quiet = "no_prefetch_block_bitmaps"

// Run runs a program and fails the test with its output when it fails.
func Run(t testing.TB, name string, args ...string) string {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}

func tool(args ...string) func(t testing.TB, dev string) {
	return func(t testing.TB, dev string) {
		t.Helper()
		a := make([]string, len(args))
		for i, s := range args {
			a[i] = strings.ReplaceAll(s, "DEV", dev)
		}
		Run(t, a[0], a[1:]...)
	}
}

// fromFile runs make(t, file) to build an image in a temporary file (for
// tools that write files only) and copies it onto dev.
func fromFile(make func(t testing.TB, file string)) func(t testing.TB, dev string) {
	return func(t testing.TB, dev string) {
		t.Helper()
		file := filepath.Join(t.TempDir(), "image")
		make(t, file)
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		writeAt(t, dev, 0, data)
	}
}

func writeAt(t testing.TB, dev string, off int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(dev, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt(data, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func srcDir(t testing.TB) string {
	d := t.TempDir()
	if err := os.WriteFile(filepath.Join(d, "data"), []byte("storbench must not overwrite this\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return d
}

// mdSuperblock crafts a Linux md superblock: the md driver is what mdadm
// needs to create one, and test kernels often lack it.
func mdSuperblock(major uint32, off func(size int64) int64) func(t testing.TB, dev string) {
	return func(t testing.TB, dev string) {
		size := devSize(t, dev)
		sb := binary.LittleEndian.AppendUint32(nil, 0xa92b4efc)
		sb = binary.LittleEndian.AppendUint32(sb, major)
		writeAt(t, dev, off(size), sb)
	}
}

func devSize(t testing.TB, dev string) int64 {
	f, err := os.Open(dev)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// zfsLabels crafts uberblocks in the rings of all four vdev labels, as a
// pool member carries them (no ZFS tools on Debian main).
func zfsLabels(t testing.TB, dev string) {
	size := devSize(t, dev) &^ (256<<10 - 1)
	ub := binary.LittleEndian.AppendUint64(nil, 0x00bab10c)
	ub = binary.LittleEndian.AppendUint64(ub, 5000) // SPA version
	for _, l := range []int64{0, 256 << 10, size - 512<<10, size - 256<<10} {
		for o := l + 128<<10; o < l+256<<10; o += 1 << 10 {
			writeAt(t, dev, o, ub)
		}
	}
}

func luks(typ string) func(t testing.TB, dev string) {
	return func(t testing.TB, dev string) {
		t.Helper()
		key := filepath.Join(t.TempDir(), "key")
		if err := os.WriteFile(key, []byte("storbench-hostile"), 0o600); err != nil {
			t.Fatal(err)
		}
		// pbkdf2 with few iterations: argon2 would take minutes and a GiB.
		Run(t, "cryptsetup", "luksFormat", "-q", "--type", typ, "--pbkdf", "pbkdf2", "--pbkdf-force-iterations", "1000", "--key-file", key, dev)
	}
}

// mountOn mounts dev read-write on a fresh directory until the test ends,
// frozen (fsfreeze) so the filesystem's own journal commits cannot change
// the device's checksum while storbench is being refused.
func mountOn(t testing.TB, dev string, opts ...string) string {
	t.Helper()
	mnt := t.TempDir()
	if typ, _ := exec.Command("blkid", "-p", "-o", "value", "-s", "TYPE", dev).Output(); strings.TrimSpace(string(typ)) == "ext4" {
		opts = append(opts, "-o", ext4Quiet)
	}
	// The interrupt's undo is there before the mount is (it retries while
	// a mount the test started completes), and it thaws before it
	// unmounts: a filesystem unmounted frozen stays alive, holding its
	// device, with no mount left to thaw it through.
	mounted := testenv.OnInterrupt("mount "+mnt, func() {
		testenv.Retry(func() error {
			_ = exec.Command("fsfreeze", "--unfreeze", mnt).Run()
			return exec.Command("umount", mnt).Run()
		})
	})
	t.Cleanup(mounted) // after the umount below: an interrupt before it still finds the mount
	Run(t, "mount", append(opts, dev, mnt)...)
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	Run(t, "fsfreeze", "--freeze", mnt)
	t.Cleanup(func() { Run(t, "fsfreeze", "--unfreeze", mnt) })
	return mnt
}

// waitFor polls for a path the kernel creates asynchronously (partitions).
func waitFor(t testing.TB, path string) {
	t.Helper()
	for i := 0; i < 50; i++ {
		if _, err := os.Stat(path); err == nil {
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s did not appear", path)
}

var (
	e2fs     = [2]string{"mkfs.ext4", "e2fsprogs"}
	xfs      = [2]string{"mkfs.xfs", "xfsprogs"}
	crypt    = [2]string{"cryptsetup", "cryptsetup-bin"}
	sfdisk   = [2]string{"sfdisk", "fdisk"}
	mkswap   = [2]string{"mkswap", "util-linux"}
	losetup  = [2]string{"losetup", "mount"}
	vfat     = [2]string{"mkfs.vfat", "dosfstools"}
	dosLabel = "label: dos\n,16MiB,83\n"
)

// Cases is the corpus. Signature cases name what the built-in check and
// blkid must each find; in-use cases are blank devices something reads.
func Cases() []Case {
	return []Case{
		{Name: "ext2", Size: 64 * mib, Tools: [][2]string{e2fs}, Magic: "ext2/3/4", Blkid: "type=ext2", Setup: tool("mkfs.ext2", "-q", "-F", "DEV")},
		{Name: "ext3", Size: 64 * mib, Tools: [][2]string{e2fs}, Magic: "ext2/3/4", Blkid: "type=ext3", Setup: tool("mkfs.ext3", "-q", "-F", "DEV")},
		{Name: "ext4", Size: 64 * mib, Tools: [][2]string{e2fs}, Magic: "ext2/3/4", Blkid: "type=ext4", Setup: tool("mkfs.ext4", "-q", "-F", "DEV")},
		{Name: "xfs", Size: 300 * mib, Tools: [][2]string{xfs}, Magic: "XFS", Blkid: "type=xfs", Setup: tool("mkfs.xfs", "-q", "-f", "DEV")},
		{Name: "btrfs", Size: 128 * mib, Tools: [][2]string{{"mkfs.btrfs", "btrfs-progs"}}, Magic: "Btrfs", Blkid: "type=btrfs", Setup: tool("mkfs.btrfs", "-q", "-f", "DEV")},
		{Name: "f2fs", Size: 64 * mib, Tools: [][2]string{{"mkfs.f2fs", "f2fs-tools"}}, Magic: "F2FS", Blkid: "type=f2fs", Setup: tool("mkfs.f2fs", "-q", "-f", "DEV")},
		{Name: "ntfs", Size: 32 * mib, Tools: [][2]string{{"mkfs.ntfs", "ntfs-3g"}}, Magic: "NTFS", Blkid: "type=ntfs", Setup: tool("mkfs.ntfs", "-q", "-F", "-Q", "DEV")},
		{Name: "fat12", Size: 8 * mib, Tools: [][2]string{vfat}, Magic: "FAT12/16", Blkid: "type=vfat", Setup: tool("mkfs.vfat", "-F", "12", "DEV")},
		{Name: "fat16", Size: 64 * mib, Tools: [][2]string{vfat}, Magic: "FAT12/16", Blkid: "type=vfat", Setup: tool("mkfs.vfat", "-F", "16", "DEV")},
		{Name: "fat32", Size: 64 * mib, Tools: [][2]string{vfat}, Magic: "FAT32", Blkid: "type=vfat", Setup: tool("mkfs.vfat", "-F", "32", "DEV")},
		{Name: "exfat", Size: 32 * mib, Tools: [][2]string{{"mkfs.exfat", "exfatprogs"}}, Magic: "exFAT", Blkid: "type=exfat", Setup: tool("mkfs.exfat", "DEV")},
		{Name: "iso9660", Size: 8 * mib, Tools: [][2]string{{"xorriso", "xorriso"}}, Magic: "ISO 9660", Blkid: "type=iso9660", Setup: fromFile(func(t testing.TB, file string) {
			Run(t, "xorriso", "-as", "mkisofs", "-quiet", "-o", file, srcDir(t))
		})},
		{Name: "squashfs", Size: 8 * mib, Tools: [][2]string{{"mksquashfs", "squashfs-tools"}}, Magic: "SquashFS", Blkid: "type=squashfs", Setup: fromFile(func(t testing.TB, file string) {
			Run(t, "mksquashfs", srcDir(t), file, "-quiet", "-noappend")
		})},
		{Name: "romfs", Size: 8 * mib, Tools: [][2]string{{"genromfs", "genromfs"}}, Magic: "romfs", Blkid: "type=romfs", Setup: fromFile(func(t testing.TB, file string) {
			Run(t, "genromfs", "-f", file, "-d", srcDir(t))
		})},
		{Name: "swap-4k", Size: 32 * mib, Tools: [][2]string{mkswap}, Magic: "swap", Blkid: "type=swap", Setup: tool("mkswap", "-p", "4096", "DEV")},
		{Name: "swap-64k", Size: 32 * mib, Tools: [][2]string{mkswap}, Magic: "swap", Blkid: "type=swap", Setup: tool("mkswap", "-p", "65536", "DEV")},
		{Name: "lvm2-pv", Size: 32 * mib, Tools: [][2]string{{"pvcreate", "lvm2"}}, Magic: "LVM2", Blkid: "type=LVM2_member", Setup: tool("pvcreate", "-q", "-ff", "-y", "DEV")},
		{Name: "md-0.90", Size: 32 * mib, Magic: "md RAID superblock version 0.90", Setup: mdSuperblock(0, func(s int64) int64 { return s&^(64<<10-1) - 64<<10 })},
		{Name: "md-1.0", Size: 32 * mib, Magic: "md RAID superblock version 1.0", Setup: mdSuperblock(1, func(s int64) int64 { return ((s >> 9) - 16) &^ 7 << 9 })},
		{Name: "md-1.1", Size: 32 * mib, Magic: "md RAID superblock version 1.1", Setup: mdSuperblock(1, func(int64) int64 { return 0 })},
		{Name: "md-1.2", Size: 32 * mib, Magic: "md RAID superblock version 1.2", Setup: mdSuperblock(1, func(int64) int64 { return 4096 })},
		{Name: "zfs", Size: 64 * mib, Magic: "ZFS", Blkid: "type=zfs_member", Setup: zfsLabels},
		{Name: "ceph-bluestore", Size: 16 * mib, Magic: "BlueStore", Blkid: "type=ceph_bluestore", Setup: func(t testing.TB, dev string) {
			writeAt(t, dev, 0, []byte("bluestore block device\n"))
		}},
		{Name: "bcache", Size: 32 * mib, Tools: [][2]string{{"make-bcache", "bcache-tools"}}, Magic: "bcache", Blkid: "type=bcache", Setup: tool("make-bcache", "-B", "DEV")},
		{Name: "luks1", Size: 32 * mib, Tools: [][2]string{crypt}, Magic: "LUKS header", Blkid: "type=crypto_LUKS", Setup: luks("luks1")},
		{Name: "luks2", Size: 32 * mib, Tools: [][2]string{crypt}, Magic: "LUKS header", Blkid: "type=crypto_LUKS", Setup: luks("luks2")},
		{Name: "luks2-secondary-only", Size: 32 * mib, Tools: [][2]string{crypt}, Magic: "LUKS2 secondary header", Blkid: "type=crypto_LUKS", Setup: func(t testing.TB, dev string) {
			luks("luks2")(t, dev)
			writeAt(t, dev, 0, make([]byte, 4096)) // the primary binary header is gone
		}},
		{Name: "mbr", Size: 64 * mib, Tools: [][2]string{sfdisk}, Magic: "DOS partition table", Blkid: "pttype=dos", Setup: sfdiskScript(dosLabel)},
		{Name: "gpt-512", Size: 64 * mib, Tools: [][2]string{sfdisk}, Magic: "GPT", Blkid: "pttype=gpt", Setup: sfdiskScript("label: gpt\n,16MiB\n")},
		{Name: "gpt-4096", Size: 64 * mib, Losetup: []string{"--sector-size", "4096"}, Tools: [][2]string{sfdisk}, Magic: "GPT partition table at byte 4096", Blkid: "pttype=gpt", Setup: sfdiskScript("label: gpt\n,16MiB\n")},
		{Name: "two-signatures", Size: 64 * mib, Tools: [][2]string{e2fs, xfs}, Magic: "XFS superblock", Refusal: "ambivalent result): xfs at 0x0, ext4 at 0x438", Setup: twoSignatures},

		// In use: the kernel or another device reads it.
		{Name: "mounted-ext4", Size: 64 * mib, Tools: [][2]string{e2fs}, Refusal: "mounted", Setup: func(t testing.TB, dev string) {
			quietExt4(t, dev)
			mountOn(t, dev)
		}},
		{Name: "mounted-partition", Size: 64 * mib, Tools: [][2]string{sfdisk, e2fs}, Losetup: []string{"--partscan"}, Refusal: "has partitions", Setup: func(t testing.TB, dev string) {
			sfdiskScript(dosLabel)(t, dev)
			// Kernels without partition-table parsers still take
			// partitions added by partx (BLKPG).
			if _, err := os.Stat(dev + "p1"); err != nil {
				Run(t, "partx", "-a", dev)
			}
			waitFor(t, dev+"p1")
			quietExt4(t, dev+"p1")
			mountOn(t, dev+"p1")
		}},
		{Name: "active-swap", Size: 32 * mib, Tools: [][2]string{mkswap, {"swapon", "mount"}}, Refusal: "in use as swap", Setup: func(t testing.TB, dev string) {
			tool("mkswap", "DEV")(t, dev)
			swapping := testenv.OnInterrupt("swap on "+dev, func() {
				testenv.Retry(func() error { return exec.Command("swapoff", dev).Run() })
			})
			t.Cleanup(swapping)
			Run(t, "swapon", dev)
			t.Cleanup(func() { Run(t, "swapoff", dev) })
		}},
		{Name: "loop-at-offset-mounted", Size: 64 * mib, Tools: [][2]string{e2fs, losetup}, Refusal: "loop devices read it", Setup: func(t testing.TB, dev string) {
			// Blank at the start, so only the loop device tells: a
			// filesystem 1 MiB in, mounted through a second loop device.
			inner := testenv.AttachLoop(t, dev, "--offset", "1048576")
			quietExt4(t, inner)
			mountOn(t, inner)
		}},
		{Name: "loop-file-on-lazily-unmounted-fs", Size: 64 * mib, Tools: [][2]string{e2fs, losetup}, Refusal: "loop devices read it", Setup: func(t testing.TB, dev string) {
			// The filesystem is detached from every mount (umount -l) but a
			// loop device still reads a file on it, so the kernel keeps it.
			quietExt4(t, dev)
			mnt := t.TempDir()
			t.Cleanup(testenv.OnInterrupt("mount "+mnt, func() {
				testenv.Retry(func() error { return exec.Command("umount", "-l", mnt).Run() })
			}))
			Run(t, "mount", dev, mnt)
			file := filepath.Join(mnt, "inner.img")
			if err := os.WriteFile(file, make([]byte, 1<<20), 0o644); err != nil {
				t.Fatal(err)
			}
			testenv.AttachLoop(t, file)
			Run(t, "umount", "-l", mnt)
		}},
		{Name: "loop-sharing-backing-file-mounted", Size: 64 * mib, Tools: [][2]string{e2fs, losetup}, Refusal: "loop devices read it", Setup: func(t testing.TB, dev string) {
			// The target's own image file attached a second time, with a
			// filesystem mounted from that second loop device.
			b := Run(t, "losetup", "--noheadings", "--output", "BACK-FILE", dev)
			other := testenv.AttachLoop(t, strings.TrimSpace(b))
			quietExt4(t, other)
			mountOn(t, other)
		}},
		{Name: "read-only-blank", Size: 16 * mib, Tools: [][2]string{{"blockdev", "util-linux"}}, Refusal: "read-only", Setup: func(t testing.TB, dev string) {
			Run(t, "blockdev", "--setro", dev)
			t.Cleanup(func() { Run(t, "blockdev", "--setrw", dev) })
		}},
	}
}

// quietExt4 makes an ext4 filesystem that, once mounted, does not write in
// the background (no lazy inode-table or journal initialisation), so a
// mounted device's checksum stays put while storbench refuses it.
func quietExt4(t testing.TB, dev string) {
	t.Helper()
	Run(t, "mkfs.ext4", "-q", "-F", "-E", "lazy_itable_init=0,lazy_journal_init=0", dev)
}

func sfdiskScript(script string) func(t testing.TB, dev string) {
	return func(t testing.TB, dev string) {
		t.Helper()
		cmd := exec.Command("sfdisk", "-q", dev)
		cmd.Stdin = strings.NewReader(script)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sfdisk %s: %v\n%s", dev, err, out)
		}
	}
}

// twoSignatures leaves ext4 and an XFS superblock on one device, which
// blkid calls ambivalent (exit 8).
func twoSignatures(t testing.TB, dev string) {
	t.Helper()
	quietExt4(t, dev)
	file := filepath.Join(t.TempDir(), "xfs.img")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	f.Truncate(300 * mib)
	f.Close()
	Run(t, "mkfs.xfs", "-q", "-f", file)
	f, err = os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	sb := make([]byte, 512)
	_, err = f.ReadAt(sb, 0)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	writeAt(t, dev, 0, sb)
}
