package store

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/testenv"
)

// TestMain lets a test open a database from several processes at once.
func TestMain(m *testing.M) {
	if path := os.Getenv("STORE_TEST_OPEN"); path != "" {
		s, err := Open(context.Background(), path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		if err := s.CreateRun(context.Background(), &result.Run{ID: fmt.Sprint(os.Getpid()), Suite: "p", Status: result.StatusComplete}); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		s.Close()
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// Processes and goroutines opening one new database at once all succeed,
// and the schema is made once; so do those upgrading an older one at once.
func TestConcurrentFirstOpens(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "new.db")
		concurrentOpens(t, round, path)
	}
	for round := range 3 {
		path := filepath.Join(t.TempDir(), "v3.db")
		sqliteFile(t, path, "PRAGMA journal_mode=WAL", migrations[0], migrations[1], migrations[2], "PRAGMA user_version = 3")
		concurrentOpens(t, round, path)
	}
}

func concurrentOpens(t *testing.T, round int, path string) {
	t.Helper()
	ctx := context.Background()
	const procs, goroutines = 6, 6
	var wg sync.WaitGroup
	errs := make(chan error, procs+goroutines)
	start := make(chan struct{})
	for i := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "STORE_TEST_OPEN="+path)
			<-start
			if out, err := cmd.CombinedOutput(); err != nil {
				errs <- fmt.Errorf("process %d: %v: %s", i, err, out)
			}
		}()
	}
	for i := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			s, err := Open(ctx, path)
			if err != nil {
				errs <- fmt.Errorf("goroutine %d: %w", i, err)
				return
			}
			defer s.Close()
			if err := s.CreateRun(ctx, &result.Run{ID: fmt.Sprintf("g%d", i), Suite: "g", Status: result.StatusComplete}); err != nil {
				errs <- fmt.Errorf("goroutine %d: %w", i, err)
			}
		}()
	}
	close(start)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("round %d: %v", round, err)
	}
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	runs, err := s.Runs(ctx, RunFilter{})
	s.Close()
	if err != nil || len(runs) != procs+goroutines {
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		t.Fatalf("round %d: %d runs stored (%v), want %d (%v)", round, len(runs), ids, procs+goroutines, err)
	}
}

// snapshot is every file in a folder with its bytes.
func snapshot(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		out[e.Name()] = b
	}
	return out
}

func assertUnchanged(t *testing.T, dir string, before map[string][]byte) {
	t.Helper()
	after := snapshot(t, dir)
	for name, b := range after {
		if old, ok := before[name]; !ok {
			t.Errorf("%s appeared", name)
		} else if !bytes.Equal(old, b) {
			t.Errorf("%s changed", name)
		}
	}
	for name := range before {
		if _, ok := after[name]; !ok {
			t.Errorf("%s disappeared", name)
		}
	}
}

// sqliteFile makes a database with another SQLite client's defaults
// (rollback journal) and the given statements.
func sqliteFile(t *testing.T, path string, stmts ...string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range stmts {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// A file storbench must not use is refused from what it reads, and nothing
// in its folder changes: no byte, no WAL or journal file.
func TestRefusedDatabaseIsNotTouched(t *testing.T) {
	tests := []struct {
		name  string
		make  func(t *testing.T, path string)
		error string
	}{
		{"foreign", func(t *testing.T, p string) {
			sqliteFile(t, p, "CREATE TABLE customers(id INTEGER)", "INSERT INTO customers VALUES(1)")
		},
			"other tables"},
		{"foreign in WAL mode", func(t *testing.T, p string) {
			sqliteFile(t, p, "PRAGMA journal_mode=WAL", "CREATE TABLE customers(id INTEGER)")
		}, "other tables"},
		{"newer storbench", func(t *testing.T, p string) {
			sqliteFile(t, p, append(append([]string{}, migrations...), fmt.Sprintf("PRAGMA user_version = %d", len(migrations)+1))...)
		}, "newer storbench"},
		{"newer storbench in WAL mode", func(t *testing.T, p string) {
			sqliteFile(t, p, "PRAGMA journal_mode=WAL", migrations[0], "PRAGMA user_version = 99")
		}, "newer storbench"},
		{"not SQLite", func(t *testing.T, p string) {
			if err := os.WriteFile(p, []byte(strings.Repeat("not a database ", 100)), 0o644); err != nil {
				t.Fatal(err)
			}
		}, "not a SQLite database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "x.db")
			tt.make(t, path)
			before := snapshot(t, dir)
			_, err := Open(context.Background(), path)
			if err == nil || !strings.Contains(err.Error(), tt.error) {
				t.Fatalf("Open: %v, want an error saying %q", err, tt.error)
			}
			assertUnchanged(t, dir, before)
		})
	}
}

// filled makes a closed storbench database at path holding one run with
// one result.
func filled(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	run := &result.Run{ID: "20261122-101010-abcd", Suite: "quick", Status: result.StatusComplete, Started: time.Unix(100, 0),
		Process: &result.Process{PID: 42, StartTicks: 7, BootID: "b", Host: "h"}}
	if err := s.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	if err := s.AddResult(ctx, sample(run.ID, "seq-read")); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

// assertReadOnly reads everything and checks that each write says
// "read-only: PATH" and changes nothing.
func assertReadOnly(t *testing.T, path string) {
	t.Helper()
	ctx := context.Background()
	dir := filepath.Dir(path)
	before := snapshot(t, dir)
	s, err := Open(ctx, path)
	if err != nil {
		t.Fatalf("opening a read-only database: %v", err)
	}
	defer s.Close()
	if !s.ReadOnly() {
		t.Error("not opened read-only")
	}
	runs, err := s.Runs(ctx, RunFilter{})
	if err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %v", runs, err)
	}
	rs, err := s.Results(ctx, ResultFilter{RunIDs: []string{runs[0].ID}})
	if err != nil || len(rs) != 1 {
		t.Fatalf("results: %v %v", rs, err)
	}
	if _, err := s.Figures(ctx, ResultFilter{}); err != nil {
		t.Errorf("figures: %v", err)
	}
	if _, err := s.RawFioJSON(ctx, rs[0].ID); err != nil {
		t.Errorf("raw output: %v", err)
	}
	want := "read-only: " + path
	var ro *ReadOnlyError
	for name, err := range map[string]error{
		"CreateRun": s.CreateRun(ctx, &result.Run{ID: "new", Suite: "x", Status: result.StatusRunning}),
		"UpdateRun": s.UpdateRun(ctx, &runs[0]),
		"AddResult": s.AddResult(ctx, sample(runs[0].ID, "x")),
		"ImportRun": s.ImportRun(ctx, &Import{Run: &result.Run{ID: "imp", Suite: "x"}}),
	} {
		if !errors.As(err, &ro) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s on a read-only database: %v, want %q", name, err, want)
		}
	}
	s.Close()
	assertUnchanged(t, dir, before)
}

func TestReadOnlyFileMode(t *testing.T) {
	path := filepath.Join(t.TempDir(), "results.db")
	filled(t, path)
	if err := os.Chmod(path, 0o444); err != nil {
		t.Fatal(err)
	}
	assertReadOnly(t, path)
}

func TestReadOnlyMount(t *testing.T) {
	testenv.Root(t)
	src := t.TempDir()
	filled(t, filepath.Join(src, "results.db"))
	mnt := t.TempDir()
	for _, args := range [][]string{{"--bind", src, mnt}, {"-o", "remount,bind,ro", mnt}} {
		if out, err := exec.Command("mount", args...).CombinedOutput(); err != nil {
			t.Fatalf("mount %v: %v: %s", args, err, out)
		}
		t.Cleanup(func() { exec.Command("umount", mnt).Run() })
	}
	assertReadOnly(t, filepath.Join(mnt, "results.db"))
}

// A read-only database made by an older storbench (schema 3) is read as it
// is; a writable one is upgraded with its runs kept.
func TestOlderSchema(t *testing.T) {
	ctx := context.Background()
	for _, readOnly := range []bool{true, false} {
		t.Run(fmt.Sprintf("read-only=%v", readOnly), func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "v3.db")
			sqliteFile(t, path, migrations[0], migrations[1], migrations[2], "PRAGMA user_version = 3",
				`INSERT INTO runs(id, suite, status, started_ns) VALUES('old', 'quick', 'complete', 1)`)
			if readOnly {
				if err := os.Chmod(path, 0o444); err != nil {
					t.Fatal(err)
				}
			}
			s, err := Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			runs, err := s.Runs(ctx, RunFilter{})
			if err != nil || len(runs) != 1 || runs[0].Process != nil {
				t.Fatalf("runs of schema 3: %+v %v", runs, err)
			}
			if want := len(migrations); !readOnly && s.version != want {
				t.Errorf("schema %d after opening, want %d", s.version, want)
			}
		})
	}
}

func TestProcessRoundTrip(t *testing.T) {
	path := filepath.Join(t.TempDir(), "p.db")
	filled(t, path)
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	r, err := s.Run(context.Background(), "20261122")
	if err != nil {
		t.Fatal(err)
	}
	if want := (result.Process{PID: 42, StartTicks: 7, BootID: "b", Host: "h"}); r.Process == nil || *r.Process != want {
		t.Errorf("process = %+v, want %+v", r.Process, want)
	}
}
