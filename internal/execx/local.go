package execx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/proc"
)

// Local runs commands on this host.
type Local struct{}

var _ Cmder = Local{}

var _ FileWriter = Local{}

// WriteFile implements FileWriter.
func (Local) WriteFile(ctx context.Context, dir, name string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !filepath.IsAbs(name) {
		name = filepath.Join(dir, name)
	}
	return os.WriteFile(name, data, 0o644)
}

// StopGrace is how long a cancelled command has to exit after SIGTERM
// before it and every process below it get SIGKILL.
const StopGrace = 5 * time.Second

// Command implements Cmder. On cancellation the process gets SIGTERM, so
// fio can stop its jobs and close its files; after StopGrace the process
// and all its descendants get SIGKILL.
//
// The command dies with storbench, even when storbench is killed outright:
// it gets SIGTERM the moment storbench's thread that started it ends
// (PR_SET_PDEATHSIG). SIGTERM, not SIGKILL, because fio forks a process per
// job and each of them starts a session of its own: SIGKILL would end fio's
// main process alone and leave the jobs writing as orphans, while on SIGTERM
// fio stops its jobs and exits within a fraction of a second.
func (Local) Command(ctx context.Context, name string, args ...string) Cmd {
	c := exec.CommandContext(ctx, name, args...)
	lc := &localCmd{cmd: c, name: name, args: args}
	c.Cancel = lc.stop
	// A backstop only: stop's own timer kills the whole tree first.
	c.WaitDelay = StopGrace + 2*time.Second
	c.SysProcAttr = &syscall.SysProcAttr{
		// fio and its children form a group of their own, so a terminal's
		// Ctrl-C reaches storbench alone and storbench decides how fio stops.
		Setpgid:   true,
		Pdeathsig: syscall.SIGTERM,
	}
	return lc
}

type localCmd struct {
	cmd    *exec.Cmd
	name   string
	args   []string
	stderr io.Writer

	mu     sync.Mutex
	exited bool
	kill   *time.Timer
	// started identifies the process once it runs, to find what it
	// forked once it is gone.
	started proc.Command
}

func (c *localCmd) SetDir(dir string) Cmd     { c.cmd.Dir = dir; return c }
func (c *localCmd) SetEnv(env ...string) Cmd  { c.cmd.Env = append(c.cmd.Environ(), env...); return c }
func (c *localCmd) SetStdin(r io.Reader) Cmd  { c.cmd.Stdin = r; return c }
func (c *localCmd) SetStdout(w io.Writer) Cmd { c.cmd.Stdout = w; return c }
func (c *localCmd) SetStderr(w io.Writer) Cmd { c.stderr = w; return c }

// stop asks the process to exit and arms the hard stop.
func (c *localCmd) stop() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.kill == nil {
		c.kill = time.AfterFunc(StopGrace, c.killTree)
	}
	return c.cmd.Process.Signal(syscall.SIGTERM)
}

// killTree sends SIGKILL to the process and everything below it, gathered
// before the first signal so no orphan escapes to init unseen.
func (c *localCmd) killTree() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.exited {
		return
	}
	below, _ := proc.Reader{}.Descendants(c.cmd.Process.Pid)
	_ = c.cmd.Process.Kill() // through a pidfd: cannot hit a reused pid
	for _, p := range below {
		// Gathered a moment ago: a pid freed and reused within that moment
		// is the one risk left, and the children of a process that has not
		// yet been told to stop rarely exit in it.
		_ = syscall.Kill(p.PID, syscall.SIGKILL)
	}
}

func (c *localCmd) start() error {
	// PR_SET_PDEATHSIG fires when the thread that forked the child exits,
	// not the process. The Go runtime ends a thread only when a goroutine
	// locked to it returns still locked; storbench locks threads nowhere
	// else, and this lock is released before returning, so the forking
	// thread lives as long as storbench does.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := c.cmd.Start(); err != nil {
		return err
	}
	c.started = proc.Command{Stat: proc.Stat{PID: c.cmd.Process.Pid}, Args: c.cmd.Args, Dir: c.cmd.Dir}
	if c.started.Dir == "" {
		c.started.Dir, _ = os.Getwd()
	}
	// Read once exec has happened (Start returns after it): a process that
	// has exited already forked nothing that outlives it unseen, or
	// started after this moment if it did.
	if st, err := (proc.Reader{}).Stat(c.cmd.Process.Pid); err == nil {
		c.started.Stat = st
	}
	return nil
}

// OrphanWait bounds waiting for a failed command's orphans to go after
// SIGKILL.
const OrphanWait = 5 * time.Second

// killOrphans kills what a command that ended in failure (killed, crashed,
// stopped) forked and left running: fio's job processes, each in a session
// of its own, outlive a main process killed with SIGKILL and would sleep
// forever, ignoring SIGTERM, in a work directory removed under them.
func (c *localCmd) killOrphans() error {
	rd := proc.Reader{}
	left, err := rd.Forks(c.started)
	if err != nil || len(left) == 0 {
		return err
	}
	if err := rd.Kill(left, OrphanWait); err != nil {
		return fmt.Errorf("%s left processes behind: %w", c.name, err)
	}
	return nil
}

func (c *localCmd) Run() error {
	var tail bytes.Buffer
	if c.stderr != nil {
		c.cmd.Stderr = io.MultiWriter(c.stderr, &tail)
	} else {
		c.cmd.Stderr = &tail
	}
	err := c.start()
	if err == nil {
		err = c.cmd.Wait()
		c.mu.Lock()
		c.exited = true
		if c.kill != nil {
			c.kill.Stop()
		}
		c.mu.Unlock()
	}
	if err == nil {
		return nil
	}
	if c.started.PID != 0 {
		if kerr := c.killOrphans(); kerr != nil {
			err = errors.Join(err, kerr)
		}
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
