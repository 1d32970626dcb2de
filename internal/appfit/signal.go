package appfit

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// The two clients pass signals through a board: a file of fixed size in
// the work directory, one slot per signal, that one client writes a slot
// of and the other reads, opening the file afresh each time. Nothing but
// the volume connects them, so the same code serves two processes, two
// pods and two nodes. A fixed size and a fresh open are what every
// filesystem keeps coherent between clients (NFS's close-to-open, FUSE
// without kernel_cache); a new file's name or a directory listing is not:
// sshfs caches both for 20 seconds.

// boardFile is the board's name in the work directory.
const boardFile = "board"

// slotBytes is one signal's slot: a set byte, then its note.
const slotBytes = 128

// signals are the board's slots, in order.
var signals = []string{
	FcntlLock + "-held", FcntlLock + "-tried", FcntlLock + "-released", FcntlLock + "-done",
	Flock + "-held", Flock + "-tried", Flock + "-released", Flock + "-done",
	"rename-start", "rename-enough", "rename-done", "fsync-written", "mmap-written", "second-finished",
}

// pollEvery is how often a waiting client looks for a signal.
const pollEvery = 20 * time.Millisecond

func slot(name string) (int64, error) {
	i := slices.Index(signals, name)
	if i < 0 {
		return 0, fmt.Errorf("appfit: no signal %q", name)
	}
	return int64(i) * slotBytes, nil
}

// makeBoard creates the board, every slot clear, before the second client
// may look for it.
func makeBoard(dir string) error {
	tmp := filepath.Join(dir, boardFile+".tmp")
	if err := os.WriteFile(tmp, make([]byte, len(signals)*slotBytes), 0o666); err != nil {
		return fmt.Errorf("appfit: the signal board: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(dir, boardFile)); err != nil {
		return fmt.Errorf("appfit: the signal board: %w", err)
	}
	return nil
}

// signal sets the slot name with note, synced.
func signal(dir, name, note string) error {
	off, err := slot(name)
	if err != nil {
		return err
	}
	b := make([]byte, slotBytes)
	b[0] = 1
	copy(b[1:], note)
	f, err := os.OpenFile(filepath.Join(dir, boardFile), os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("signal %s: %w", name, err)
	}
	_, err = f.WriteAt(b, off)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("signal %s: %w", name, err)
	}
	return nil
}

// await waits for the signal name and returns its note.
func await(ctx context.Context, dir, name string, timeout time.Duration) (string, error) {
	deadline := time.Now().Add(timeout)
	for {
		if note, ok, err := signalled(dir, name); err != nil || ok {
			return note, err
		}
		if time.Now().After(deadline) {
			return "", fmt.Errorf("waited %s for the other client's signal %q", timeout, name)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("waiting for the other client's signal %q: %w", name, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// signalled reports whether the signal name was given, and its note.
func signalled(dir, name string) (string, bool, error) {
	off, err := slot(name)
	if err != nil {
		return "", false, err
	}
	f, err := os.Open(filepath.Join(dir, boardFile))
	if err != nil {
		return "", false, fmt.Errorf("reading signal %s: %w", name, err)
	}
	defer f.Close()
	b := make([]byte, slotBytes)
	if _, err := f.ReadAt(b, off); err != nil {
		return "", false, fmt.Errorf("reading signal %s: %w", name, err)
	}
	if b[0] != 1 {
		return "", false, nil
	}
	note, _, _ := bytes.Cut(b[1:], []byte{0})
	return strings.TrimSpace(string(note)), true, nil
}
