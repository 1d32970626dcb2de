// Package fiotest is a fake fio for unit tests: an execx.Cmder that
// answers as fio does (its version, whether an engine loads) and replays a
// recorded fio JSON document (internal/fio/testdata) for every job it is
// given, recording each command line. Tests of what storbench does with
// fio's answers (parsing, the flow of a run, what is stored) use it and
// stay in the unit tier; tests of fio's own behaviour run the real fio
// (testenv.Fio, the host tier).
package fiotest

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/testenv"
)

// DefaultVersion is what fio --version prints when Fio.Version is empty:
// the version the recorded documents come from.
const DefaultVersion = "fio-3.33"

// Fio is the fake. A command line counts as fio's when one of its words is
// "fio" (a runner may put a wrapper before it); every other command is
// answered by Other.
type Fio struct {
	// JSON is the document every job prints (Recorded reads one).
	JSON []byte
	// Version is what fio --version prints (DefaultVersion when empty).
	Version string
	// NoLibaio answers --enghelp=libaio as a fio built without libaio.
	NoLibaio bool
	// Block makes every job wait until its context ends, as a job still
	// running when the run is cancelled; Started says when one began.
	Block bool
	// Other answers commands that are not fio's (nil: they succeed and
	// print nothing).
	Other func(args []string, stdout io.Writer) error

	mu      sync.Mutex
	calls   [][]string
	started chan struct{}
}

var _ execx.Cmder = (*Fio)(nil)

// Command returns the fake's answer to one command line.
func (f *Fio) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return &Cmd{f: f, ctx: ctx, args: append([]string{name}, args...)}
}

// Calls are the fio command lines run so far, from the word "fio" on, in
// order.
func (f *Fio) Calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// Started is closed once a blocked job has begun.
func (f *Fio) Started() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.started == nil {
		f.started = make(chan struct{})
	}
	return f.started
}

func (f *Fio) record(args []string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, args)
}

func (f *Fio) begin() {
	f.Started()
	f.mu.Lock()
	defer f.mu.Unlock()
	select {
	case <-f.started:
	default:
		close(f.started)
	}
}

// Cmd is one command given to the fake.
type Cmd struct {
	f      *Fio
	ctx    context.Context
	args   []string
	stdout io.Writer
	stderr io.Writer
}

func (c *Cmd) SetDir(string) execx.Cmd         { return c }
func (c *Cmd) SetEnv(...string) execx.Cmd      { return c }
func (c *Cmd) SetStdin(io.Reader) execx.Cmd    { return c }
func (c *Cmd) SetStdout(w io.Writer) execx.Cmd { c.stdout = w; return c }
func (c *Cmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

// Run answers the command: fio --version, fio --enghelp=ENGINE, and any
// other fio command line as a job printing the recorded JSON.
func (c *Cmd) Run() error {
	stdout := c.stdout
	if stdout == nil {
		stdout = io.Discard
	}
	i := slices.Index(c.args, "fio")
	if i < 0 {
		if c.f.Other == nil {
			return nil
		}
		return c.f.Other(c.args, stdout)
	}
	args := c.args[i:]
	c.f.record(args)
	if len(args) > 1 {
		switch {
		case args[1] == "--version":
			v := c.f.Version
			if v == "" {
				v = DefaultVersion
			}
			_, err := io.WriteString(stdout, v+"\n")
			return err
		case strings.HasPrefix(args[1], "--enghelp="):
			if c.f.NoLibaio && args[1] == "--enghelp=libaio" {
				return &execx.RunError{Command: args, ExitCode: 1, Stderr: "fio: engine libaio not loadable"}
			}
			return nil
		}
	}
	if c.f.Block {
		c.f.begin()
		<-c.ctx.Done()
		return &execx.RunError{Command: args, ExitCode: -1, Inner: c.ctx.Err()}
	}
	_, err := stdout.Write(c.f.JSON)
	return err
}

// Recorded reads a recorded fio JSON document from internal/fio/testdata
// (for example "libaio-randread.json"), whichever package's test asks.
func Recorded(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.SourcePath(t, "internal/fio/testdata"), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}
