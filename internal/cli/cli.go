// Package cli holds what every command shares: streams, global flags, the
// store, output formats and exit codes. Each command lives in a package of
// its own under internal/cli.
package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// Exit codes storbench returns; FromLibrary holds the one map from an
// error to its code.
const (
	ExitOK          = 0
	ExitFailed      = 1 // a workload failed
	ExitUsage       = 2 // bad flags, bad suite, refused target
	ExitWarn        = 3 // a verdict warned
	ExitVerdictFail = 4 // a verdict failed
	ExitInterrupted = 130
)

// Streams are where a command reads and writes.
type Streams struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
}

// Globals are the flags every command has.
type Globals struct {
	DB string
}

// Deps is what commands get from the application.
type Deps struct {
	Streams
	Globals *Globals
	Getenv  func(string) string
}

// ExitError carries an exit code out of a command.
type ExitError struct {
	Code int
	Err  error
}

func (e *ExitError) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("exit code %d", e.Code)
	}
	return e.Err.Error()
}
func (e *ExitError) Unwrap() error { return e.Err }

// Usage wraps a usage or configuration error (exit code 2).
func Usage(err error) error { return &ExitError{Code: ExitUsage, Err: err} }

// Usagef formats a usage error.
func Usagef(format string, args ...any) error { return Usage(fmt.Errorf(format, args...)) }

// DefaultDBPath is $XDG_DATA_HOME/storbench/results.db, falling back to
// ~/.local/share/storbench/results.db.
func DefaultDBPath(getenv func(string) string) string {
	if d := getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "storbench", "results.db")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".local", "share", "storbench", "results.db")
}

// DBPath is the database the --db flag names, or the default.
func (d Deps) DBPath() string {
	if d.Globals.DB != "" {
		return d.Globals.DB
	}
	return DefaultDBPath(d.Getenv)
}

// OpenStore opens the database the --db flag names. A database storbench
// may not write is opened read-only: reads work and writes fail with
// "read-only: PATH".
func (d Deps) OpenStore(ctx context.Context) (store.Store, error) {
	return store.Open(ctx, d.DBPath())
}

// LazyStore is the database the --db flag names, opened on first use, for
// commands that must create nothing when they refuse to start.
func (d Deps) LazyStore() *store.Lazy {
	return store.NewLazy(d.DBPath())
}

// IsTerminal reports whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Color reports whether to colour output written to w: a terminal, and
// NO_COLOR unset.
func (d Deps) Color(w io.Writer) bool {
	return IsTerminal(w) && d.Getenv("NO_COLOR") == ""
}

// OutputFlag adds --output with the given formats (the first is the default)
// and returns a validator for it.
func OutputFlag(cmd *cobra.Command, dst *string, formats ...string) func() error {
	cmd.Flags().StringVar(dst, "output", formats[0], "output format: "+strings.Join(formats, ", "))
	return func() error {
		for _, f := range formats {
			if *dst == f {
				return nil
			}
		}
		return Usagef("--output %q: choose one of %s", *dst, strings.Join(formats, ", "))
	}
}

// ParseLabels reads k=v pairs from repeated --label flags.
func ParseLabels(pairs []string) (map[string]string, error) {
	out := map[string]string{}
	for _, p := range pairs {
		k, v, ok := strings.Cut(p, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, Usagef("--label %q: write it as key=value", p)
		}
		v = strings.TrimSpace(v)
		if err := result.CheckUserLabel(k, v); err != nil {
			return nil, Usage(fmt.Errorf("--label: %w", err))
		}
		out[k] = v
	}
	return out, nil
}
