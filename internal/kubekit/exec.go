package kubekit

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/httpstream"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/remotecommand"
	utilexec "k8s.io/client-go/util/exec"

	"github.com/storbench/storbench/internal/execx"
)

// Executor runs one command in a container and streams its output. It
// returns nil when the command succeeded; a failing command yields an error
// that, where the transport knows it, implements utilexec.ExitError.
type Executor interface {
	Exec(ctx context.Context, req ExecRequest) error
}

// ExecRequest is one command to run in a container.
type ExecRequest struct {
	Namespace, Pod, Container string
	Command                   []string
	Stdin                     io.Reader
	Stdout, Stderr            io.Writer
}

// RemoteExecutor is Executor over the API server's pods/exec subresource,
// WebSocket first and SPDY where WebSocket upgrades are refused, as kubectl
// does.
type RemoteExecutor struct {
	Config *rest.Config
	Client kubernetes.Interface
}

// Exec implements Executor.
func (r *RemoteExecutor) Exec(ctx context.Context, req ExecRequest) error {
	u := r.Client.CoreV1().RESTClient().Post().
		Resource("pods").Namespace(req.Namespace).Name(req.Pod).SubResource("exec").
		VersionedParams(&corev1.PodExecOptions{
			Container: req.Container,
			Command:   req.Command,
			Stdin:     req.Stdin != nil,
			Stdout:    req.Stdout != nil,
			Stderr:    req.Stderr != nil,
		}, scheme.ParameterCodec).URL()
	ws, err := remotecommand.NewWebSocketExecutor(r.Config, "GET", u.String())
	if err != nil {
		return fmt.Errorf("exec into %s/%s: %w", req.Namespace, req.Pod, err)
	}
	spdy, err := remotecommand.NewSPDYExecutor(r.Config, "POST", u)
	if err != nil {
		return fmt.Errorf("exec into %s/%s: %w", req.Namespace, req.Pod, err)
	}
	ex, err := remotecommand.NewFallbackExecutor(ws, spdy, func(err error) bool {
		return httpstream.IsUpgradeFailure(err) || httpstream.IsHTTPSProxyError(err)
	})
	if err != nil {
		return err
	}
	return ex.StreamWithContext(ctx, remotecommand.StreamOptions{Stdin: req.Stdin, Stdout: req.Stdout, Stderr: req.Stderr})
}

// StopTimeout bounds the second exec that stops a cancelled command.
const StopTimeout = 15 * time.Second

// StopGrace is how long a cancelled command's stream stays open after the
// second exec stopped it, for what it prints as it ends.
const StopGrace = 3 * time.Second

// PodCmder is an execx.Cmder whose commands run in one container.
//
// Every command runs under a small sh wrapper that records its process ID in
// the container's working directory, so that a cancelled command can be
// stopped by a second exec: closing an exec stream does not reliably stop the
// process on every kubelet.
type PodCmder struct {
	Exec      Executor
	Namespace string
	Pod       string
	Container string
}

var _ execx.Cmder = (*PodCmder)(nil)

// Command implements execx.Cmder.
func (p *PodCmder) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	return &podCmd{p: p, ctx: ctx, name: name, args: args}
}

type podCmd struct {
	p              *PodCmder
	ctx            context.Context
	name           string
	args           []string
	dir            string
	env            []string
	stdin          io.Reader
	stdout, stderr io.Writer
}

func (c *podCmd) SetDir(dir string) execx.Cmd     { c.dir = dir; return c }
func (c *podCmd) SetEnv(env ...string) execx.Cmd  { c.env = append(c.env, env...); return c }
func (c *podCmd) SetStdin(r io.Reader) execx.Cmd  { c.stdin = r; return c }
func (c *podCmd) SetStdout(w io.Writer) execx.Cmd { c.stdout = w; return c }
func (c *podCmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

// wrapper runs "$@" in the background so its PID can be recorded, then
// waits for it and passes its exit status on. Its stdin goes through fd 3:
// sh gives a background command /dev/null otherwise. $1 is the command's ID, $2 the
// directory to run in ("" for the container's working directory), $3 the
// program's name as the kernel shows it (its comm).
//
// A command that fails may leave processes it forked behind: fio's jobs,
// each in a session of its own, outlive a main process that was killed or
// crashed, orphaned to the container's init, and sleep there forever. The
// wrapper then kills the orphans (parent 1) with the program's name that
// work in its directory, and waits for them to go.
const wrapper = `f="$PWD/.storbench-exec-$1.pid"; d=$2; n=$3; shift 3
if [ -n "$d" ]; then cd "$d" || exit 126; fi
reap() { k=""; for s in /proc/[0-9]*; do
    read -r c m _ pp _ < "$s/stat" 2>/dev/null || continue
    [ "$pp" = 1 ] && [ "$m" = "($n)" ] || continue
    case "$(readlink "$s/cwd" 2>/dev/null)" in
      "$PWD"|"$PWD (deleted)") kill -KILL "$c" 2>/dev/null && k="$k $c";;
    esac
  done
  i=0; for c in $k; do
    while [ "$i" -lt 50 ] && read -r _ _ st _ < "/proc/$c/stat" 2>/dev/null && [ "$st" != Z ]; do sleep 0.1; i=$((i+1)); done
  done; }
exec 3<&0
"$@" <&3 3<&- &
p=$!
echo "$p" > "$f"
wait "$p"; rc=$?
rm -f "$f"
if [ "$rc" -ne 0 ]; then reap; fi
exit "$rc"`

// SignalTree is a sh function: signal a process and its children (fio runs
// each job in a child process that outlives a killed parent). It reads
// /proc, which every container has.
const SignalTree = `sigtree() { for s in /proc/[0-9]*/stat; do
    read -r c _ _ pp _ < "$s" 2>/dev/null && [ "$pp" = "$2" ] && kill "-$1" "$c" 2>/dev/null
  done; kill "-$1" "$2" 2>/dev/null; }
`

// stopper sends SIGTERM to the recorded process and its children, waits up
// to 5 s, then SIGKILL. It waits briefly for the PID file in case the
// command was cancelled while starting.
const stopper = SignalTree + `f=".storbench-exec-$1.pid"; i=0
while [ ! -s "$f" ] && [ "$i" -lt 20 ]; do sleep 0.1; i=$((i+1)); done
[ -s "$f" ] || exit 0
p=$(cat "$f")
kill -0 "$p" 2>/dev/null || { rm -f "$f"; exit 0; }
sigtree TERM "$p"
i=0
while kill -0 "$p" 2>/dev/null && [ "$i" -lt 50 ]; do sleep 0.1; i=$((i+1)); done
sigtree KILL "$p"
rm -f "$f"
exit 0`

func (c *podCmd) argv(id string) []string {
	argv := []string{"sh", "-c", wrapper, "storbench-exec", id, c.dir, comm(c.name)}
	if len(c.env) > 0 {
		argv = append(argv, "env")
		argv = append(argv, c.env...)
	}
	argv = append(argv, c.name)
	return append(argv, c.args...)
}

// comm is the name the kernel gives a process running program: its base
// name, cut to 15 bytes (TASK_COMM_LEN).
func comm(program string) string {
	name := path.Base(program)
	if len(name) > 15 {
		name = name[:15]
	}
	return name
}

// Run implements execx.Cmd.
func (c *podCmd) Run() error {
	id := newExecID()
	var tail bytes.Buffer
	stderr := io.Writer(&tail)
	if c.stderr != nil {
		stderr = io.MultiWriter(c.stderr, &tail)
	}
	stdout := c.stdout
	if stdout == nil {
		stdout = io.Discard
	}
	// The stream outlives a cancel, as a local command's pipes outlive its
	// SIGTERM: the process is stopped by a second exec and what it prints
	// as it goes (fio's report of what it did until then) still arrives;
	// the stream is closed only if it has not ended StopGrace after that.
	streamCtx, closeStream := context.WithCancel(context.WithoutCancel(c.ctx))
	defer closeStream()
	ended, stopped := make(chan struct{}), make(chan error, 1)
	go func() {
		select {
		case <-ended:
			stopped <- nil
		case <-c.ctx.Done():
			err := c.stop(id)
			select {
			case <-ended:
			case <-time.After(StopGrace):
				closeStream()
			}
			stopped <- err
		}
	}()
	err := c.p.Exec.Exec(streamCtx, ExecRequest{
		Namespace: c.p.Namespace, Pod: c.p.Pod, Container: c.p.Container,
		Command: c.argv(id), Stdin: c.stdin, Stdout: stdout, Stderr: stderr,
	})
	close(ended)
	stopErr := <-stopped
	if c.ctx.Err() != nil {
		re := &execx.RunError{Command: c.command(), ExitCode: -1, Stderr: tail.String(), Inner: c.ctx.Err()}
		if stopErr != nil {
			re.Inner = errors.Join(c.ctx.Err(), fmt.Errorf("stopping %s in pod %s/%s: %w", c.name, c.p.Namespace, c.p.Pod, stopErr))
		}
		return re
	}
	if err == nil {
		return nil
	}
	code := -1
	var ee utilexec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitStatus()
	}
	// sh reports a missing program as "NAME: not found" with status 127.
	if (code == 127 || code == -1) && strings.Contains(tail.String(), c.name+": not found") {
		return &execx.NotFoundError{Name: c.name}
	}
	return &execx.RunError{Command: c.command(), ExitCode: code, Stderr: tail.String(), Inner: err}
}

func (c *podCmd) command() []string { return append([]string{c.name}, c.args...) }

// stop runs the stopper with a fresh, bounded context.
func (c *podCmd) stop(id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(c.ctx), StopTimeout)
	defer cancel()
	var errb bytes.Buffer
	err := c.p.Exec.Exec(ctx, ExecRequest{
		Namespace: c.p.Namespace, Pod: c.p.Pod, Container: c.p.Container,
		Command: []string{"sh", "-c", stopper, "storbench-stop", id}, Stdout: io.Discard, Stderr: &errb,
	})
	if err != nil && errb.Len() > 0 {
		return fmt.Errorf("%w: %s", err, strings.TrimSpace(errb.String()))
	}
	return err
}

func newExecID() string {
	var b [6]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Linux
	return hex.EncodeToString(b[:])
}
