package appfit

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Role is which side of the probe a client plays.
type Role string

// The roles: the first client takes locks and writes; the second tries the
// locks and reads what the first wrote.
const (
	First  Role = "first"
	Second Role = "second"
)

// WorkDirPrefix starts the name of every directory a probe works in;
// Remove refuses any other.
const WorkDirPrefix = ".storbench-appfit-"

// ClientOptions say where one client works and how long it waits.
type ClientOptions struct {
	// Dir is the work directory, the same for both clients (its base name
	// starts with WorkDirPrefix); the first client creates it.
	Dir  string
	Role Role
	// Timeout bounds each wait for the other client; 0 means 1 minute.
	Timeout time.Duration
}

// RunClient runs one client of the semantics probe and returns the answers
// it judged (the other client's complete them: Merge).
func RunClient(ctx context.Context, o ClientOptions) ([]Answer, error) {
	if o.Timeout <= 0 {
		o.Timeout = time.Minute
	}
	if !strings.HasPrefix(filepath.Base(o.Dir), WorkDirPrefix) {
		return nil, fmt.Errorf("appfit: work directory %s: its name must start with %s", o.Dir, WorkDirPrefix)
	}
	switch o.Role {
	case First:
		if err := mkdirShared(o.Dir); err != nil {
			return nil, err
		}
		if err := makeBoard(o.Dir); err != nil {
			return nil, err
		}
		return first(ctx, o), nil
	case Second:
		if err := waitDir(ctx, o.Dir, o.Timeout); err != nil {
			return nil, err
		}
		return second(ctx, o), nil
	}
	return nil, fmt.Errorf("appfit: role %q: want %s or %s", o.Role, First, Second)
}

func first(ctx context.Context, o ClientOptions) []Answer {
	var out []Answer
	add := func(a *Answer) {
		if a != nil {
			out = append(out, *a)
		}
	}
	add(holdLock(ctx, o.Dir, lockers[FcntlLock], o.Timeout))
	add(holdLock(ctx, o.Dir, lockers[Flock], o.Timeout))
	d := oDirect(o.Dir)
	add(&d)
	add(renameWriter(ctx, o.Dir, o.Timeout))
	f := fsyncWriter(ctx, o.Dir, o.Timeout)
	add(&f)
	add(mmapWriter(o.Dir))
	if _, err := await(ctx, o.Dir, "second-finished", o.Timeout); err != nil {
		out = append(out, Answer{Name: "probe", Outcome: Broken, Seen: err.Error()})
	}
	return out
}

func second(ctx context.Context, o ClientOptions) []Answer {
	out := []Answer{
		tryLock(ctx, o.Dir, lockers[FcntlLock], o.Timeout),
		tryLock(ctx, o.Dir, lockers[Flock], o.Timeout),
		renameReader(ctx, o.Dir, o.Timeout),
		readBack(ctx, o.Dir, FsyncReadBack, "fsync", "written and fsynced by the first", o.Timeout),
		readBack(ctx, o.Dir, MmapMsync, "mmap", "written through the first's mapping and msynced", o.Timeout),
	}
	if err := signal(o.Dir, "second-finished", ""); err != nil {
		out = append(out, Answer{Name: "probe", Outcome: Broken, Seen: err.Error()})
	}
	return out
}

// waitDir waits for the first client to create the work directory and
// its signal board.
func waitDir(ctx context.Context, dir string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		if _, err := os.Stat(filepath.Join(dir, boardFile)); err == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("appfit: the first client did not create %s and its signal board within %s", dir, timeout)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("appfit: waiting for %s: %w", dir, ctx.Err())
		case <-time.After(pollEvery):
		}
	}
}

// rank orders outcomes for Merge: a broken side decides, then a working one.
func rank(o Outcome) int {
	switch o {
	case Broken:
		return 2
	case Works:
		return 1
	}
	return 0
}

// Merge joins the two clients' answers into one per semantic, in
// Semantics order: the worse outcome decides, what each side saw is kept.
func Merge(sides ...[]Answer) []Answer {
	by := map[string]*Answer{}
	var extra []string
	for _, side := range sides {
		for _, a := range side {
			m, ok := by[a.Name]
			if !ok {
				c := a
				c.Evidence = slices.Clone(a.Evidence)
				by[a.Name] = &c
				if !slices.Contains(Semantics, a.Name) {
					extra = append(extra, a.Name)
				}
				continue
			}
			if rank(a.Outcome) > rank(m.Outcome) {
				m.Outcome = a.Outcome
				m.Seen = joinSeen(a.Seen, m.Seen)
			} else {
				m.Seen = joinSeen(m.Seen, a.Seen)
			}
			m.Evidence = append(m.Evidence, a.Evidence...)
			m.Took = max(m.Took, a.Took)
		}
	}
	var out []Answer
	for _, n := range append(slices.Clone(Semantics), extra...) {
		if a, ok := by[n]; ok {
			out = append(out, *a)
		}
	}
	return out
}

func joinSeen(a, b string) string {
	switch {
	case a == "":
		return b
	case b == "" || a == b:
		return a
	}
	return a + "; " + b
}
