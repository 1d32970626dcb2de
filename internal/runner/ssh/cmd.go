package ssh

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	xssh "golang.org/x/crypto/ssh"

	"github.com/storbench/storbench/internal/execx"
)

// wrapper is the remote side of every command (see wrapper.sh).
//
//go:embed wrapper.sh
var wrapper string

var _ execx.Cmder = (*Client)(nil)

// stopBackstop is how long after the remote command was told to stop
// storbench waits for it before giving up on the session: the remote
// wrapper needs execx.StopGrace, and a little for its last KILL.
const stopBackstop = execx.StopGrace + 5*time.Second

// Command implements execx.Cmder. The command runs under the wrapper on
// the host: when ctx is done it gets TERM (in a process group of its own)
// and, after execx.StopGrace, everything below it gets KILL; when the
// connection or the session goes, the same happens on the host by itself.
func (c *Client) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return &cmd{client: c, ctx: ctx, name: name, args: args}
}

type cmd struct {
	client *Client
	ctx    context.Context
	name   string
	args   []string
	dir    string
	env    []string
	stdin  io.Reader
	stdout io.Writer
	stderr io.Writer
}

func (c *cmd) SetDir(dir string) execx.Cmd     { c.dir = dir; return c }
func (c *cmd) SetEnv(env ...string) execx.Cmd  { c.env = append(c.env, env...); return c }
func (c *cmd) SetStdin(r io.Reader) execx.Cmd  { c.stdin = r; return c }
func (c *cmd) SetStdout(w io.Writer) execx.Cmd { c.stdout = w; return c }
func (c *cmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// commandLine is what sshd hands to the login shell: exec sh -c WRAPPER
// with every argument single-quoted, so nothing in them is ever read by a
// shell as code.
func (c *cmd) commandLine() (string, error) {
	mode := "line"
	if c.stdin != nil {
		mode = "pipe"
	}
	// "$PPID" is the login shell's parent, the sshd process of this
	// session: the wrapper's watch in pipe mode (its own parent may be
	// sudo, which outlives the session).
	words := append(append([]string{"exec"}, c.client.become...), "env", connEnv+"="+c.client.id, "sh", "-c", quote(wrapper), "storbench-ssh", `"$PPID"`,
		quote(c.dir), strconv.Itoa(int(execx.StopGrace/time.Second)), mode, strconv.Itoa(len(c.env)))
	for _, e := range c.env {
		if !envName.MatchString(e) {
			return "", fmt.Errorf("environment entry %q is not NAME=VALUE", e)
		}
		words = append(words, quote(e))
	}
	words = append(words, quote(c.name))
	for _, a := range c.args {
		words = append(words, quote(a))
	}
	return strings.Join(words, " "), nil
}

// quote makes s one word for a POSIX shell: single quotes keep everything
// literal (newlines, $, backquotes, double quotes); a single quote itself
// is closed, escaped and reopened.
func quote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ErrConnectionLost says the connection went away while a command ran.
var ErrConnectionLost = errors.New("connection lost")

func (c *cmd) Run() error {
	argv := append([]string{c.name}, c.args...)
	line, err := c.commandLine()
	if err != nil {
		return fmt.Errorf("%s: %w", c.client.name, err)
	}
	if err := c.ctx.Err(); err != nil {
		return &execx.RunError{Command: argv, ExitCode: -1, Inner: fmt.Errorf("on %s: %w", c.client.name, err)}
	}
	if cause := c.client.lost(); cause != nil {
		return &execx.RunError{Command: argv, ExitCode: -1, Inner: errLostBefore(c.client.name, cause)}
	}
	sess, err := c.client.conn.NewSession()
	var refused *xssh.OpenChannelError
	if errors.As(err, &refused) {
		return &execx.RunError{Command: argv, ExitCode: -1, Inner: fmt.Errorf("on %s: the host refused a new session (too many at once? sshd's MaxSessions is 10 by default): %w", c.client.name, err)}
	}
	if err != nil {
		if cause := c.client.lost(); cause != nil {
			return &execx.RunError{Command: argv, ExitCode: -1, Inner: errLostBefore(c.client.name, cause)}
		}
		if c.client.closed.Load() {
			return &execx.RunError{Command: argv, ExitCode: -1, Inner: fmt.Errorf("on %s: opening a session: the connection was closed: %w", c.client.name, err)}
		}
		lost := c.client.afterLoss(fmt.Errorf("opening a session: %w", err))
		return &execx.RunError{Command: argv, ExitCode: -1, Inner: fmt.Errorf("on %s: %w", c.client.name, lost)}
	}
	defer sess.Close()
	lifeline, err := sess.StdinPipe()
	if err != nil {
		return fmt.Errorf("%s: %w", c.client.name, err)
	}
	var closeLine sync.Once
	cut := func() { closeLine.Do(func() { lifeline.Close() }) }
	defer cut()
	var tail bytes.Buffer
	var tailMu sync.Mutex
	tailW := writerFunc(func(p []byte) (int, error) {
		tailMu.Lock()
		defer tailMu.Unlock()
		tail.Write(p)
		if tail.Len() > 64<<10 {
			tail.Next(tail.Len() - 32<<10)
		}
		return len(p), nil
	})
	var stderr io.Writer = tailW
	if c.stderr != nil {
		stderr = io.MultiWriter(c.stderr, tailW)
	}
	var pidLine *pidWriter
	if c.stdin != nil {
		pidLine = &pidWriter{next: stderr, known: make(chan struct{})}
		stderr = pidLine
	}
	sess.Stderr = stderr
	sess.Stdout = c.stdout
	if err := sess.Start(line); err != nil {
		return &execx.RunError{Command: argv, ExitCode: -1, Inner: fmt.Errorf("on %s: starting: %w", c.client.name, err)}
	}
	if c.stdin != nil {
		go func() {
			io.Copy(lifeline, c.stdin)
			cut()
		}()
	}
	waited := make(chan error, 1)
	go func() { waited <- sess.Wait() }()
	cancelled := false
	select {
	case err = <-waited:
	case <-c.ctx.Done():
		cancelled = true
		// The wrapper stops the command when its lifeline breaks; a
		// command that owns stdin is stopped by TERM to its wrapper. Either
		// way Run waits for the wrapper's exit status, as the local Cmder
		// waits for the process: nothing runs on when Run returns.
		if c.stdin == nil {
			cut()
		} else if err := c.signalWrapper(pidLine); err != nil {
			// No way left to tell it: close the session and leave the
			// rest to the wrapper's watch on sshd.
			cut()
			sess.Close()
		}
		select {
		case err = <-waited:
		case <-time.After(stopBackstop):
			sess.Close()
			err = fmt.Errorf("the command did not stop within %s of being told to", stopBackstop)
		}
	}
	tailMu.Lock()
	errText := tail.String()
	tailMu.Unlock()
	return c.runError(argv, err, cancelled, errText)
}

// runError maps the outcome of a session to execx's errors, as the local
// Cmder does: NotFoundError for a missing program, RunError otherwise,
// naming the host.
func (c *cmd) runError(argv []string, err error, cancelled bool, stderr string) error {
	if err == nil && cancelled {
		// Stopped, it still exited 0 (fio does, having reported): a
		// cancelled command never reads as a success, as a local one.
		return &execx.RunError{Command: argv, ExitCode: -1, Stderr: stderr, Inner: fmt.Errorf("on %s: %w", c.client.name, c.ctx.Err())}
	}
	if err == nil {
		return nil
	}
	re := &execx.RunError{Command: argv, ExitCode: -1, Stderr: stderr}
	var ee *xssh.ExitError
	var missing *xssh.ExitMissingError
	switch {
	case errors.As(err, &ee) && ee.Signal() == "":
		if ee.ExitStatus() == 127 && strings.Contains(stderr, "storbench-ssh: "+c.name+": not found") {
			return &execx.NotFoundError{Name: c.name + " (on " + c.client.name + ")"}
		}
		re.ExitCode = ee.ExitStatus()
		re.Inner = fmt.Errorf("on %s", c.client.name)
	case errors.As(err, &ee):
		re.Inner = fmt.Errorf("on %s: killed by SIG%s", c.client.name, ee.Signal())
	case (errors.As(err, &missing) || errors.Is(err, io.EOF)) && c.client.closed.Load():
		re.Inner = fmt.Errorf("on %s: the connection was closed while the command ran; the wrapper stops the command on the host", c.client.name)
	case errors.As(err, &missing), errors.Is(err, io.EOF):
		// Reported once what the command started on the host is gone.
		lost := c.client.afterLoss(errors.New("the session ended without an exit status while the command ran (the host, the network or its sshd went away)"))
		re.Inner = fmt.Errorf("on %s: %w", c.client.name, lost)
	default:
		re.Inner = fmt.Errorf("on %s: %w", c.client.name, err)
	}
	if cancelled {
		re.ExitCode = -1
		re.Inner = fmt.Errorf("%w (%w)", re.Inner, c.ctx.Err())
	}
	return re
}

// signalWrapper sends TERM to the wrapper of a pipe-mode command from a
// session of its own.
func (c *cmd) signalWrapper(p *pidWriter) error {
	select {
	case <-p.known:
	case <-time.After(time.Second):
		return errors.New("the wrapper did not report its pid")
	}
	kill, err := c.client.conn.NewSession()
	if err != nil {
		return err
	}
	defer kill.Close()
	return kill.Run(strings.Join(append(append([]string(nil), c.client.become...), "kill", "-s", "TERM", strconv.Itoa(p.pid)), " "))
}

// pidWriter takes the wrapper's "storbench-ssh: pid N" line out of
// stderr and passes everything else on. It looks for it among the first
// lines, since a login shell may print before the wrapper runs.
type pidWriter struct {
	next  io.Writer
	head  []byte
	seen  int
	done  bool
	pid   int
	known chan struct{}
}

const pidLinePrefix = "storbench-ssh: pid "

func (w *pidWriter) Write(p []byte) (int, error) {
	if w.done {
		return w.next.Write(p)
	}
	w.head = append(w.head, p...)
	for !w.done {
		i := bytes.IndexByte(w.head, '\n')
		if i < 0 {
			if len(w.head) > 4<<10 {
				w.done = true // no pid line: pass the rest on
			}
			break
		}
		line := w.head[:i+1]
		w.seen += len(line)
		if n, ok := strings.CutPrefix(strings.TrimSpace(string(line)), pidLinePrefix); ok {
			if pid, err := strconv.Atoi(n); err == nil {
				w.pid = pid
				close(w.known)
				w.done = true
				w.head = w.head[i+1:]
				break
			}
		}
		if _, err := w.next.Write(line); err != nil {
			return 0, err
		}
		w.head = w.head[i+1:]
		if w.seen > 4<<10 {
			w.done = true
		}
	}
	if w.done && len(w.head) > 0 {
		rest := w.head
		w.head = nil
		if _, err := w.next.Write(rest); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }
