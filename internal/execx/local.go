package execx

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os/exec"
	"syscall"
	"time"
)

// Local runs commands on this host.
type Local struct{}

var _ Cmder = Local{}

// Command implements Cmder. On cancellation the process gets SIGTERM, then
// SIGKILL after a grace period, so fio can close its files.
func (Local) Command(ctx context.Context, name string, args ...string) Cmd {
	c := exec.CommandContext(ctx, name, args...)
	c.Cancel = func() error { return c.Process.Signal(syscall.SIGTERM) }
	c.WaitDelay = 5 * time.Second
	// fio and its children form a group of their own, so a terminal's Ctrl-C
	// reaches storbench alone and storbench decides how fio stops.
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return &localCmd{cmd: c, name: name, args: args}
}

type localCmd struct {
	cmd    *exec.Cmd
	name   string
	args   []string
	stderr io.Writer
}

func (c *localCmd) SetDir(dir string) Cmd     { c.cmd.Dir = dir; return c }
func (c *localCmd) SetEnv(env ...string) Cmd  { c.cmd.Env = append(c.cmd.Environ(), env...); return c }
func (c *localCmd) SetStdin(r io.Reader) Cmd  { c.cmd.Stdin = r; return c }
func (c *localCmd) SetStdout(w io.Writer) Cmd { c.cmd.Stdout = w; return c }
func (c *localCmd) SetStderr(w io.Writer) Cmd { c.stderr = w; return c }

func (c *localCmd) Run() error {
	var tail bytes.Buffer
	if c.stderr != nil {
		c.cmd.Stderr = io.MultiWriter(c.stderr, &tail)
	} else {
		c.cmd.Stderr = &tail
	}
	err := c.cmd.Run()
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.Is(err, exec.ErrNotFound) || (errors.As(err, &pe) && errors.Is(pe.Err, fs.ErrNotExist) && pe.Path == c.cmd.Path) {
		return &NotFoundError{Name: c.name}
	}
	re := &RunError{Command: append([]string{c.name}, c.args...), ExitCode: -1, Stderr: tail.String(), Inner: err}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		re.ExitCode = ee.ExitCode()
	}
	return re
}
