package appfit

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// locker is one kind of advisory lock: POSIX record locks (fcntl, what
// SQLite takes) or BSD flock.
type locker struct {
	name string
	// try takes an exclusive lock on the whole file without waiting.
	try    func(fd int) error
	unlock func(fd int) error
	// seen says what the kernel reports of others' locks ("" when the kind
	// has no way to ask).
	seen func(fd int) string
}

var lockers = map[string]locker{
	FcntlLock: {
		name: FcntlLock,
		try: func(fd int) error {
			return unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_WRLCK, Whence: 0})
		},
		unlock: func(fd int) error {
			return unix.FcntlFlock(uintptr(fd), unix.F_SETLK, &unix.Flock_t{Type: unix.F_UNLCK, Whence: 0})
		},
		seen: func(fd int) string {
			lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0}
			if err := unix.FcntlFlock(uintptr(fd), unix.F_GETLK, &lk); err != nil {
				return "F_GETLK failed: " + err.Error()
			}
			if lk.Type == unix.F_UNLCK {
				return "F_GETLK: no conflicting lock"
			}
			return fmt.Sprintf("F_GETLK: a conflicting lock held by pid %d", lk.Pid)
		},
	},
	Flock: {
		name:   Flock,
		try:    func(fd int) error { return unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) },
		unlock: func(fd int) error { return unix.Flock(fd, unix.LOCK_UN) },
		seen:   func(int) string { return "" },
	},
}

// busy is the error of a lock another holder has.
func busy(err error) bool {
	return errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) || errors.Is(err, unix.EWOULDBLOCK)
}

// holdLock is the first client's side: it takes the lock, lets the second
// client try, then releases it. Its answer is set only when it could not
// take the lock.
func holdLock(ctx context.Context, dir string, lk locker, timeout time.Duration) *Answer {
	start := time.Now()
	f, err := os.OpenFile(filepath.Join(dir, lk.name+".lock"), os.O_RDWR|os.O_CREATE, 0o644)
	if err == nil {
		defer f.Close()
		err = lk.try(int(f.Fd()))
	}
	if err != nil {
		_ = signal(dir, lk.name+"-held", "error: "+err.Error()) // the other side gives up on this one
		return &Answer{Name: lk.name, Outcome: Broken, Seen: "the first client could not take the lock: " + err.Error(), Took: time.Since(start)}
	}
	steps := []func() error{
		func() error { return signal(dir, lk.name+"-held", strconv.Itoa(os.Getpid())) },
		func() error { _, err := await(ctx, dir, lk.name+"-tried", timeout); return err },
		func() error { return lk.unlock(int(f.Fd())) },
		func() error { return signal(dir, lk.name+"-released", "") },
		func() error { _, err := await(ctx, dir, lk.name+"-done", timeout); return err },
	}
	for _, s := range steps {
		if err := s(); err != nil {
			return &Answer{Name: lk.name, Outcome: Broken, Seen: "the first client: " + err.Error(), Took: time.Since(start)}
		}
	}
	return nil
}

// tryLock is the second client's side: while the first client holds the
// lock, taking it must be refused; once released, it must be granted.
func tryLock(ctx context.Context, dir string, lk locker, timeout time.Duration) Answer {
	start := time.Now()
	a := Answer{Name: lk.name}
	done := func(o Outcome, seen string) Answer {
		a.Outcome, a.Seen, a.Took = o, seen, time.Since(start)
		return a
	}
	note, err := await(ctx, dir, lk.name+"-held", timeout)
	if err != nil {
		return done(Broken, err.Error())
	}
	if strings.HasPrefix(note, "error: ") {
		return done(NotApplicable, "the first client could not take the lock")
	}
	a.Evidence = append(a.Evidence, "the first client (pid "+note+" on its host) holds an exclusive lock")
	f, err := os.OpenFile(filepath.Join(dir, lk.name+".lock"), os.O_RDWR, 0o644)
	if err != nil {
		return done(Broken, "the second client could not open the lock file: "+err.Error())
	}
	defer f.Close()
	fd := int(f.Fd())
	if s := lk.seen(fd); s != "" {
		a.Evidence = append(a.Evidence, "second client: "+s)
	}
	err = lk.try(fd)
	a.Evidence = append(a.Evidence, fmt.Sprintf("second client's attempt while held: %v", errText(err)))
	var broken string
	switch {
	case err == nil:
		broken = "both clients held the same write lock"
		if uerr := lk.unlock(fd); uerr != nil {
			a.Evidence = append(a.Evidence, "second client's unlock: "+uerr.Error())
		}
	case errors.Is(err, unix.ENOLCK):
		broken = "the filesystem refused locks: " + err.Error()
	case !busy(err):
		broken = "taking a held lock failed with " + err.Error() + " instead of being refused as busy"
	}
	if err := signal(dir, lk.name+"-tried", ""); err != nil {
		return done(Broken, err.Error())
	}
	if broken != "" {
		_, _ = await(ctx, dir, lk.name+"-released", timeout) // keep the two sides in step
		_ = signal(dir, lk.name+"-done", "")
		return done(Broken, broken)
	}
	if _, err := await(ctx, dir, lk.name+"-released", timeout); err != nil {
		return done(Broken, err.Error())
	}
	released := time.Now()
	for {
		err = lk.try(fd)
		if err == nil || !busy(err) || time.Since(released) > timeout/4 || ctx.Err() != nil {
			break
		}
		time.Sleep(pollEvery)
	}
	after := time.Since(released).Round(time.Millisecond)
	if serr := signal(dir, lk.name+"-done", ""); serr != nil {
		return done(Broken, serr.Error())
	}
	if err != nil {
		return done(Broken, fmt.Sprintf("the lock stayed refused %s after its holder released it: %v", after, err))
	}
	if err := lk.unlock(fd); err != nil {
		return done(Broken, "unlocking: "+err.Error())
	}
	return done(Works, fmt.Sprintf("refused to the second client while held, granted %s after release", after))
}

// errText is err's message, or "granted" for none.
func errText(err error) string {
	if err == nil {
		return "granted"
	}
	return "refused: " + err.Error()
}
