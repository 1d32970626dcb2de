package appfit

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// fsyncBytes is what the fsync probe writes: enough that a disk which
// wrote it shows it plainly in its counters.
const fsyncBytes = 4 << 20

// minFsyncShare is the share of fsyncBytes the disk's sector counter must
// show between the write and fsync's return: the filesystem may have
// compressed nothing (the data is random) but its journal and metadata only
// add to it.
const minFsyncShare = 0.9

// fsyncWriter is the first client's side: it writes random data, fsyncs
// it and counts what the disk under the filesystem wrote meanwhile; the
// second client then reads it back (fsyncReader).
func fsyncWriter(ctx context.Context, dir string, timeout time.Duration) Answer {
	start := time.Now()
	a := Answer{Name: FsyncReadBack}
	done := func(o Outcome, seen string) Answer {
		a.Outcome, a.Seen, a.Took = o, seen, time.Since(start)
		if o == Broken {
			_ = signal(dir, "fsync-written", "error: "+seen)
		}
		return a
	}
	data := make([]byte, fsyncBytes)
	if _, err := rand.Read(data); err != nil {
		return done(Broken, err.Error())
	}
	disk, derr := DiskOf(dir)
	var before DiskCounters
	if derr == nil {
		before, derr = disk.Counters()
	}
	f, err := os.Create(filepath.Join(dir, "fsync.dat"))
	if err != nil {
		return done(Broken, err.Error())
	}
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		return done(Broken, "writing: "+err.Error())
	}
	t0 := time.Now()
	if err := f.Sync(); err != nil {
		return done(Broken, "fsync: "+err.Error())
	}
	took := time.Since(t0)
	a.Evidence = append(a.Evidence, fmt.Sprintf("fsync of %d MiB returned after %s", fsyncBytes>>20, took.Round(time.Microsecond)))
	if derr == nil {
		var after DiskCounters
		if after, derr = disk.Counters(); derr == nil {
			d := after.Sub(before)
			a.Evidence = append(a.Evidence, fmt.Sprintf("disk %s (%s) meanwhile: %d write requests, %d KiB, %s flushes",
				disk.Name, disk.Dev, d.Writes, d.BytesWritten()>>10, flushText(d.Flushes)))
			if float64(d.BytesWritten()) < minFsyncShare*fsyncBytes {
				return done(Broken, fmt.Sprintf("fsync returned after %s but the disk %s wrote only %d KiB of the %d KiB",
					took.Round(time.Microsecond), disk.Name, d.BytesWritten()>>10, fsyncBytes>>10))
			}
		}
	}
	if derr != nil {
		a.Evidence = append(a.Evidence, "no disk counter: "+derr.Error())
		if volatileOverlay(dir) {
			return done(Broken, "fsync returned after "+took.Round(time.Microsecond).String()+
				" on an overlay mounted volatile, which skips every sync: nothing is on a disk when the app is told it is")
		}
	}
	s := sha256.Sum256(data)
	if err := signal(dir, "fsync-written", hex.EncodeToString(s[:])); err != nil {
		return done(Broken, err.Error())
	}
	if derr != nil {
		return done(NotApplicable, "whether fsync reached a disk cannot be counted here: "+derr.Error())
	}
	return done(Works, "")
}

func flushText(n int64) string {
	if n < 0 {
		return "uncounted"
	}
	return fmt.Sprint(n)
}

// readBack is the second client's side of a write it is told of by signal
// name: the file's SHA-256 must be the one in the signal.
func readBack(ctx context.Context, dir, name, file, what string, timeout time.Duration) Answer {
	start := time.Now()
	a := Answer{Name: name}
	done := func(o Outcome, seen string) Answer {
		a.Outcome, a.Seen, a.Took = o, seen, time.Since(start)
		return a
	}
	want, err := await(ctx, dir, file+"-written", timeout)
	switch {
	case err != nil:
		return done(Broken, err.Error())
	case strings.HasPrefix(want, "error: "):
		return done(NotApplicable, "nothing to read back: the writer failed")
	}
	data, err := os.ReadFile(filepath.Join(dir, file+".dat"))
	if err != nil {
		return done(Broken, "the second client could not read it: "+err.Error())
	}
	s := sha256.Sum256(data)
	if got := hex.EncodeToString(s[:]); got != want {
		return done(Broken, fmt.Sprintf("the second client read %d bytes that differ from what was %s (sha256 %.12s, want %.12s)", len(data), what, got, want))
	}
	return done(Works, fmt.Sprintf("the second client read back the %d KiB %s", len(data)>>10, what))
}

// mmapBytes is what the mmap probe writes through a shared mapping.
const mmapBytes = 1 << 20

// mmapWriter writes through a shared mapping and msyncs it; the second
// client reads the file with read(2) (readBack).
func mmapWriter(dir string) *Answer {
	start := time.Now()
	fail := func(err error) *Answer {
		_ = signal(dir, "mmap-written", "error: "+err.Error())
		return &Answer{Name: MmapMsync, Outcome: Broken, Seen: "the writer: " + err.Error(), Took: time.Since(start)}
	}
	f, err := os.Create(filepath.Join(dir, "mmap.dat"))
	if err != nil {
		return fail(err)
	}
	defer f.Close()
	if err := f.Truncate(mmapBytes); err != nil {
		return fail(err)
	}
	m, err := unix.Mmap(int(f.Fd()), 0, mmapBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	if err != nil {
		return fail(fmt.Errorf("mmap: %w", err))
	}
	if _, err := rand.Read(m); err != nil {
		return fail(errors.Join(err, unix.Munmap(m)))
	}
	s := sha256.Sum256(m)
	if err := unix.Msync(m, unix.MS_SYNC); err != nil {
		return fail(fmt.Errorf("msync: %w", errors.Join(err, unix.Munmap(m))))
	}
	if err := unix.Munmap(m); err != nil {
		return fail(fmt.Errorf("munmap: %w", err))
	}
	if err := signal(dir, "mmap-written", hex.EncodeToString(s[:])); err != nil {
		return fail(err)
	}
	return nil
}

// directBytes is the O_DIRECT probe's write: one aligned 4 KiB block.
const directBytes = 4096

// oDirect opens a file with O_DIRECT, writes an aligned block and reads
// it back the same way.
func oDirect(dir string) Answer {
	start := time.Now()
	a := Answer{Name: ODirect}
	done := func(o Outcome, seen string) Answer {
		a.Outcome, a.Seen, a.Took = o, seen, time.Since(start)
		return a
	}
	path := filepath.Join(dir, "direct.dat")
	fd, err := unix.Open(path, unix.O_RDWR|unix.O_CREAT|unix.O_DIRECT, 0o644)
	if err != nil {
		return done(Broken, "open with O_DIRECT refused: "+err.Error())
	}
	defer unix.Close(fd)
	// An anonymous mapping is page aligned, as O_DIRECT buffers must be.
	buf, err := unix.Mmap(-1, 0, directBytes, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return done(Broken, "an aligned buffer: "+err.Error())
	}
	defer unix.Munmap(buf)
	if _, err := rand.Read(buf); err != nil {
		return done(Broken, err.Error())
	}
	want := sha256.Sum256(buf)
	if n, err := unix.Pwrite(fd, buf, 0); err != nil || n != directBytes {
		return done(Broken, fmt.Sprintf("an aligned O_DIRECT write: %d bytes, %v", n, err))
	}
	clear(buf)
	if n, err := unix.Pread(fd, buf, 0); err != nil || n != directBytes {
		return done(Broken, fmt.Sprintf("an aligned O_DIRECT read: %d bytes, %v", n, err))
	}
	if sha256.Sum256(buf) != want {
		return done(Broken, "an aligned O_DIRECT read returned other data than was written")
	}
	return done(Works, "an aligned 4 KiB write and read with O_DIRECT")
}
