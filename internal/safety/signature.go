package safety

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Blankness is the verdict on whether a device holds data, from blkid and
// from storbench's own list of magic numbers. A device is proven blank only
// when Signatures and Unproven are both empty: anything else refuses writes.
type Blankness struct {
	// Signatures names what was found and by whom, e.g.
	// "ext4 (blkid)" or "ext2/3/4 superblock at byte 1080 (built-in check)".
	Signatures []string
	// Unproven says why blankness could not be established: blkid failed or
	// was ambivalent, or the device could not be read.
	Unproven []string
}

// ProbeBlank asks blkid (util-linux) for every filesystem, RAID, LVM,
// crypto and partition-table signature and always also runs the built-in
// magic-number check, so a device is refused when either finds something.
// blkid answering anything other than "nothing found" (exit 2), or a read
// failing, leaves the device unproven.
func ProbeBlank(ctx context.Context, dev string) Blankness {
	var b Blankness
	sigs, unproven := blkidProbe(ctx, dev)
	b.Signatures = append(b.Signatures, sigs...)
	b.Unproven = append(b.Unproven, unproven...)
	found, err := MagicSignatures(dev)
	for _, f := range found {
		b.Signatures = append(b.Signatures, f+" (built-in check)")
	}
	if err != nil {
		b.Unproven = append(b.Unproven, "reading the device for known signatures failed: "+err.Error())
	}
	return b
}

// blkidProbe runs blkid -p (low-level probing, no cache). It returns no
// finding and no doubt when blkid is not installed: the built-in check then
// decides alone.
func blkidProbe(ctx context.Context, dev string) (sigs, unproven []string) {
	path, err := exec.LookPath("blkid")
	if err != nil {
		return nil, nil
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, path, "-p", "-o", "export", dev)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	switch {
	case err == nil:
		var parts []string
		for _, l := range strings.Split(stdout.String(), "\n") {
			k, v, _ := strings.Cut(l, "=")
			switch k {
			case "TYPE", "PTTYPE", "USAGE", "VERSION":
				parts = append(parts, strings.ToLower(k)+"="+v)
			}
		}
		if len(parts) == 0 {
			return nil, []string{"blkid -p reported a finding it did not name: " + strings.TrimSpace(stdout.String())}
		}
		return []string{strings.Join(parts, " ") + " (blkid)"}, nil
	case errors.As(err, &ee) && ee.ExitCode() == 2:
		return nil, nil // nothing found
	case errors.As(err, &ee) && ee.ExitCode() == 8:
		msg := "blkid -p found more than one signature (ambivalent result)"
		if names := wipefsList(ctx, dev); names != "" {
			msg += ": " + names
		}
		return nil, []string{msg + "; inspect them with wipefs " + dev}
	default:
		detail := strings.TrimSpace(stderr.String())
		if detail == "" {
			detail = err.Error()
		}
		return nil, []string{"blkid -p " + dev + " failed, so nothing proves the device blank: " + detail}
	}
}

// wipefsList names the signatures wipefs sees, without erasing anything
// (wipefs only erases with -a or -o).
func wipefsList(ctx context.Context, dev string) string {
	path, err := exec.LookPath("wipefs")
	if err != nil {
		return ""
	}
	out, err := exec.CommandContext(ctx, path, "--no-act", "--noheadings", "--output", "TYPE,OFFSET", dev).Output()
	if err != nil {
		return ""
	}
	var names []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) == 2 {
			names = append(names, f[0]+" at "+f[1])
		}
	}
	return strings.Join(names, ", ")
}

// MagicSignatures is storbench's own check, used beside blkid and alone
// where blkid is missing. It names every known signature on dev; an error
// means the device could not be read, which proves nothing blank.
func MagicSignatures(dev string) ([]string, error) {
	f, err := os.Open(dev)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	size, err := f.Seek(0, io.SeekEnd)
	if err != nil {
		return nil, fmt.Errorf("finding the size of %s: %w", dev, err)
	}
	return detectMagic(&image{r: f, size: size})
}

// image reads fixed spans of a device; spans outside it read as absent.
type image struct {
	r    io.ReaderAt
	size int64
}

func (im *image) at(off int64, n int) ([]byte, error) {
	if off < 0 || off+int64(n) > im.size {
		return nil, nil
	}
	buf := make([]byte, n)
	if _, err := im.r.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("reading %d bytes at byte %d: %w", n, off, err)
	}
	return buf, nil
}

func (im *image) has(off int64, magic string) (bool, error) {
	b, err := im.at(off, len(magic))
	return b != nil && string(b) == magic, err
}

// detector finds one kind of signature; where says where it was found
// ("" for not found).
type detector struct {
	name string
	find func(im *image) (where string, err error)
}

// fixed is a signature at one offset.
func fixed(name string, off int64, magics ...string) detector {
	return detector{name, func(im *image) (string, error) {
		for _, m := range magics {
			if ok, err := im.has(off, m); ok || err != nil {
				return fmt.Sprintf("at byte %d", off), err
			}
		}
		return "", nil
	}}
}

// anyOf is a signature at any of several offsets.
func anyOf(name string, offs []int64, magics ...string) detector {
	return detector{name, func(im *image) (string, error) {
		for _, off := range offs {
			for _, m := range magics {
				if ok, err := im.has(off, m); ok || err != nil {
					return fmt.Sprintf("at byte %d", off), err
				}
			}
		}
		return "", nil
	}}
}

const (
	kib = int64(1) << 10
	mib = int64(1) << 20
)

// Little-endian magic numbers as they lie on disk.
var (
	mdMagicLE    = le32(0xa92b4efc)
	mdMagicBE    = be32(0xa92b4efc)
	f2fsMagic    = le32(0xF2F52010)
	zfsMagicLE   = le64(0x00bab10c)
	zfsMagicBE   = be64(0x00bab10c)
	bcacheMagic  = string([]byte{0xc6, 0x85, 0x73, 0xf6, 0x4e, 0x1a, 0x45, 0xca, 0x82, 0x65, 0xf5, 0x7f, 0x48, 0xba, 0x6d, 0x81})
	swapPageSize = []int64{4 * kib, 8 * kib, 16 * kib, 32 * kib, 64 * kib}
)

func le32(v uint32) string { return string(binary.LittleEndian.AppendUint32(nil, v)) }
func be32(v uint32) string { return string(binary.BigEndian.AppendUint32(nil, v)) }
func le64(v uint64) string { return string(binary.LittleEndian.AppendUint64(nil, v)) }
func be64(v uint64) string { return string(binary.BigEndian.AppendUint64(nil, v)) }

// detectors is the built-in list. docs/safety.md lists it for users; keep
// them in step.
var detectors = []detector{
	extDetector(),
	fixed("XFS superblock", 0, "XFSB"),
	fixed("Btrfs superblock", 0x10040, "_BHRfS_M"),
	fixed("F2FS superblock", 0x400, f2fsMagic),
	fixed("NTFS boot sector", 3, "NTFS    "),
	fixed("exFAT boot sector", 3, "EXFAT   "),
	fixed("FAT12/16 boot sector", 54, "FAT12   ", "FAT16   ", "FAT     "),
	fixed("FAT32 boot sector", 82, "FAT32   "),
	anyOf("ISO 9660 volume descriptor", []int64{0x8001, 0x8801, 0x9001}, "CD001"),
	fixed("SquashFS superblock", 0, "hsqs", "sqsh"),
	fixed("romfs superblock", 0, "-rom1fs-"),
	fixed("Ceph BlueStore label", 0, "bluestore block device"),
	swapDetector(),
	lvmDetector(),
	mdDetector(),
	zfsDetector(),
	fixed("bcache superblock", 4096+24, bcacheMagic),
	fixed("LUKS header", 0, "LUKS\xba\xbe"),
	luksSecondaryDetector(),
	anyOf("GPT partition table", []int64{512, 4096}, "EFI PART"),
	mbrDetector(),
}

// extDetector wants the two-byte magic and a block size the format allows
// (1 KiB << 0..6), so data left by an earlier benchmark run does not match
// by chance.
func extDetector() detector {
	return detector{"ext2/3/4 superblock", func(im *image) (string, error) {
		b, err := im.at(0x400, 0x3a)
		if err != nil || b == nil {
			return "", err
		}
		if b[0x38] != 0x53 || b[0x39] != 0xef || binary.LittleEndian.Uint32(b[0x18:]) > 6 {
			return "", nil
		}
		return "at byte 1080", nil
	}}
}

func swapDetector() detector {
	offs := make([]int64, len(swapPageSize))
	for i, ps := range swapPageSize {
		offs[i] = ps - 10
	}
	return anyOf("swap space or hibernation image", offs, "SWAPSPACE2", "SWAP-SPACE", "S1SUSPEND", "S2SUSPEND", "ULSUSPEND", "LINHIB0001")
}

// lvmDetector: the LVM2 label lies in one of the first four sectors.
func lvmDetector() detector {
	return detector{"LVM2 physical volume label", func(im *image) (string, error) {
		for s := int64(0); s < 4; s++ {
			b, err := im.at(s*512, 32)
			if err != nil {
				return "", err
			}
			if b != nil && string(b[:8]) == "LABELONE" && string(b[24:32]) == "LVM2 001" {
				return fmt.Sprintf("in sector %d", s), nil
			}
		}
		return "", nil
	}}
}

// mdDetector checks every Linux md superblock position: 0.90 in the last
// 64 KiB-aligned 64 KiB (either byte order), 1.0 8 KiB before the end
// (4 KiB aligned), 1.1 at the start, 1.2 at 4 KiB.
func mdDetector() detector {
	return detector{"Linux md RAID superblock", func(im *image) (string, error) {
		cands := []struct {
			version string
			off     int64
		}{
			{"0.90", im.size&^(64*kib-1) - 64*kib},
			{"1.0", ((im.size >> 9) - 16) &^ 7 << 9},
			{"1.1", 0},
			{"1.2", 4 * kib},
		}
		for _, c := range cands {
			for _, m := range []string{mdMagicLE, mdMagicBE} {
				if m == mdMagicBE && c.version != "0.90" {
					continue
				}
				if ok, err := im.has(c.off, m); ok || err != nil {
					return fmt.Sprintf("version %s at byte %d", c.version, c.off), err
				}
			}
		}
		return "", nil
	}}
}

// zfsDetector looks for uberblocks in the ring (second 128 KiB) of the four
// 256 KiB vdev labels: two at the start, two at the 256 KiB-aligned end.
func zfsDetector() detector {
	return detector{"ZFS vdev label (uberblock)", func(im *image) (string, error) {
		const label = 256 * kib
		end := im.size &^ (label - 1)
		for _, l := range []int64{0, label, end - 2*label, end - label} {
			if l < 0 {
				continue
			}
			for off := l + 128*kib; off < l+label; off += kib {
				b, err := im.at(off, 8)
				if err != nil {
					return "", err
				}
				if b != nil && (string(b) == zfsMagicLE || string(b) == zfsMagicBE) {
					return fmt.Sprintf("at byte %d", off), nil
				}
			}
		}
		return "", nil
	}}
}

// luksSecondaryDetector finds a LUKS2 secondary header, which survives
// when the primary is overwritten; it lies where the primary header area
// ends: 16 KiB to 4 MiB.
func luksSecondaryDetector() detector {
	var offs []int64
	for o := 16 * kib; o <= 4*mib; o *= 2 {
		offs = append(offs, o)
	}
	return anyOf("LUKS2 secondary header", offs, "SKUL\xba\xbe")
}

// mbrDetector reports a DOS partition table when the boot signature sits
// at byte 510 and the four entries look like partitions, and any other
// 0x55AA boot sector when nothing else was recognised (see detectMagic).
func mbrDetector() detector {
	return detector{"DOS partition table", func(im *image) (string, error) {
		b, err := im.at(0, 512)
		if err != nil || b == nil || b[510] != 0x55 || b[511] != 0xaa {
			return "", err
		}
		used := 0
		for i := 0; i < 4; i++ {
			e := b[446+16*i : 446+16*i+16]
			if e[0] != 0 && e[0] != 0x80 {
				return "", nil
			}
			if e[4] != 0 {
				used++
			}
		}
		if used == 0 {
			return "", nil
		}
		return fmt.Sprintf("with %d partition entries", used), nil
	}}
}

func detectMagic(im *image) ([]string, error) {
	var found []string
	var errs []error
	for _, d := range detectors {
		where, err := d.find(im)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", d.name, err))
			continue
		}
		if where != "" {
			found = append(found, d.name+" "+where)
		}
	}
	if len(found) == 0 {
		// A boot signature alone still marks a disk someone formatted.
		if b, err := im.at(510, 2); err != nil {
			errs = append(errs, err)
		} else if b != nil && b[0] == 0x55 && b[1] == 0xaa {
			found = append(found, "boot sector signature 0x55AA at byte 510")
		}
	}
	return found, errors.Join(errs...)
}
