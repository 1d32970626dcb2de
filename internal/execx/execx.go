// Package execx is the seam through which storbench runs programs: on this
// host, inside a Kubernetes pod or over SSH. fio code is written once against
// Cmder and runs unchanged wherever a Cmder can take it.
package execx

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
)

// Cmder makes commands that run in one place (a host, a container).
type Cmder interface {
	// Command prepares name with args. The command must stop when ctx is done.
	Command(ctx context.Context, name string, args ...string) Cmd
}

// FileWriter is a Cmder that can also write a file where its commands run
// without running a program (no shell needed). Callers fall back to a
// command where a Cmder does not offer it.
type FileWriter interface {
	// WriteFile writes data to name, relative to dir when not absolute,
	// creating or truncating it with mode 0644.
	WriteFile(ctx context.Context, dir, name string, data []byte) error
}

// Cmd is one command, configured by its setters and then Run once.
type Cmd interface {
	// Run starts the command and waits for it. A command that exits non-zero
	// returns a *RunError.
	Run() error
	SetDir(dir string) Cmd
	SetEnv(env ...string) Cmd
	SetStdin(r io.Reader) Cmd
	SetStdout(w io.Writer) Cmd
	SetStderr(w io.Writer) Cmd
}

// RunError reports a command that ran but failed, with what it printed on
// stderr so callers can show the program's own message.
type RunError struct {
	Command  []string
	ExitCode int // -1 when unknown (killed, or the transport lost it)
	Stderr   string
	Inner    error
}

func (e *RunError) Error() string {
	msg := fmt.Sprintf("command %q failed", strings.Join(e.Command, " "))
	if e.ExitCode >= 0 {
		msg += fmt.Sprintf(" with exit code %d", e.ExitCode)
	}
	if e.Inner != nil {
		msg += ": " + e.Inner.Error()
	}
	if s := strings.TrimSpace(e.Stderr); s != "" {
		msg += ": " + lastLines(s, 5)
	}
	return msg
}

func (e *RunError) Unwrap() error { return e.Inner }

// NotFoundError says the program itself is missing where the Cmder runs.
type NotFoundError struct {
	Name string
}

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("%s: executable file not found", e.Name)
}

// IsNotFound reports whether err says the program was not found.
func IsNotFound(err error) bool {
	var nf *NotFoundError
	return errors.As(err, &nf)
}

// Output runs cmd and returns its stdout; stderr is kept in a RunError.
func Output(cmd Cmd) ([]byte, error) {
	var out, errb strings.Builder
	cmd.SetStdout(&out).SetStderr(&errb)
	err := cmd.Run()
	var re *RunError
	if errors.As(err, &re) && re.Stderr == "" {
		re.Stderr = errb.String()
	}
	return []byte(out.String()), err
}

func lastLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, " / ")
}
