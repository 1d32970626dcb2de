package appfit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// renameBytes is each version's payload: larger than one page, so a
// reader of a half-written file would notice.
const renameBytes = 64 << 10

// minRenameReads is how many reads the reader makes while the writer
// renames before it calls the test enough.
const minRenameReads = 200

// minRenameVersions is how many of the writer's versions the reader must
// have seen before it calls the test enough: on a busy host 200 reads can
// all fall between two renames, which would prove nothing.
const minRenameVersions = 3

// version is the content of the renamed file's version n: n, the
// payload's length, the payload and a SHA-256 of all that.
func version(n int) []byte {
	b := make([]byte, 16+renameBytes, 16+renameBytes+sha256.Size)
	binary.LittleEndian.PutUint64(b, uint64(n))
	binary.LittleEndian.PutUint64(b[8:], renameBytes)
	for i := 16; i < len(b); i++ {
		b[i] = byte(n*31 + i)
	}
	s := sha256.Sum256(b)
	return append(b, s[:]...)
}

// whole checks a read of the renamed file and returns its version.
func whole(b []byte) (int, error) {
	if len(b) != 16+renameBytes+sha256.Size {
		return 0, fmt.Errorf("a partial file: %d of %d bytes", len(b), 16+renameBytes+sha256.Size)
	}
	s := sha256.Sum256(b[:len(b)-sha256.Size])
	if !bytes.Equal(s[:], b[len(b)-sha256.Size:]) {
		return 0, errors.New("a file mixing two versions (checksum mismatch)")
	}
	return int(binary.LittleEndian.Uint64(b)), nil
}

// renameWriter is the first client's side: it replaces the file by
// writing a new version under a temporary name and renaming it over, until
// the reader has read enough.
func renameWriter(ctx context.Context, dir string, timeout time.Duration) *Answer {
	start := time.Now()
	target := filepath.Join(dir, "rename.target")
	fail := func(err error) *Answer {
		_ = signal(dir, "rename-done", "error: "+err.Error())
		return &Answer{Name: RenameAtomic, Outcome: Broken, Seen: "the writer: " + err.Error(), Took: time.Since(start)}
	}
	if err := os.WriteFile(target, version(0), 0o644); err != nil {
		return fail(err)
	}
	if err := signal(dir, "rename-start", ""); err != nil {
		return fail(err)
	}
	n := 0
	for n = 1; ; n++ {
		tmp := target + ".tmp"
		if err := os.WriteFile(tmp, version(n), 0o644); err != nil {
			return fail(err)
		}
		if err := os.Rename(tmp, target); err != nil {
			return fail(err)
		}
		if n%16 != 0 {
			continue
		}
		if _, ok, err := signalled(dir, "rename-enough"); err != nil {
			return fail(err)
		} else if ok {
			break
		}
		if time.Since(start) > timeout || ctx.Err() != nil {
			return fail(fmt.Errorf("the reader did not finish within %s", timeout))
		}
	}
	if err := signal(dir, "rename-done", strconv.Itoa(n)); err != nil {
		return fail(err)
	}
	return nil
}

// renameReader is the second client's side: it reads the file over and
// over while it is replaced; every read must find the file, whole.
func renameReader(ctx context.Context, dir string, timeout time.Duration) Answer {
	start := time.Now()
	a := Answer{Name: RenameAtomic}
	if _, err := await(ctx, dir, "rename-start", timeout); err != nil {
		a.Outcome, a.Seen = Broken, err.Error()
		return a
	}
	var reads, missing, torn int
	versions := map[int]bool{}
	var first string
	for (reads < minRenameReads || len(versions) < minRenameVersions) && time.Since(start) < timeout && ctx.Err() == nil {
		reads++
		b, err := os.ReadFile(filepath.Join(dir, "rename.target"))
		if err == nil {
			var v int
			if v, err = whole(b); err == nil {
				versions[v] = true
				continue
			}
			torn++
		} else if errors.Is(err, fs.ErrNotExist) {
			missing++
		} else {
			torn++
		}
		if first == "" {
			first = err.Error()
		}
	}
	_ = signal(dir, "rename-enough", "")
	note, err := await(ctx, dir, "rename-done", timeout)
	a.Took = time.Since(start)
	if err != nil {
		a.Outcome, a.Seen = Broken, err.Error()
		return a
	}
	a.Evidence = append(a.Evidence, fmt.Sprintf("%d reads, %d versions seen, %s renames by the writer", reads, len(versions), note))
	switch {
	case missing > 0 || torn > 0:
		a.Outcome = Broken
		a.Seen = fmt.Sprintf("%d of %d reads found no file and %d read a broken one during the writer's renames", missing, reads, torn)
		a.Evidence = append(a.Evidence, "first: "+first)
	case len(versions) < 2:
		a.Outcome = NotApplicable
		a.Seen = fmt.Sprintf("the reader saw only one version in %d reads: no rename overlapped a read", reads)
	default:
		a.Outcome = Works
		a.Seen = fmt.Sprintf("%d reads during %s renames, each whole (%d versions seen)", reads, note, len(versions))
	}
	return a
}
