package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
)

// The start line: in a parallel round each target's fio command waits at a
// gate that reports on stderr that it is ready, then waits for a line on
// stdin. When every target is ready (or has failed), a "go" line to each
// releases them together, so the skew left is the delivery of that line,
// not the time a transport (a Kubernetes exec, an SSH session) takes to set
// a command up, nor fio's own start-up.
//
// A built-in workload (fio's options on its command line) waits inside fio:
// its exec_prerun, which fio runs in each job's process once the job is set
// up (I/O engine, buffers, files laid out, random map) and just before its
// first I/O. Ten fio processes starting on two cores take hundreds of
// milliseconds; behind this gate they have all started before the line
// opens. The prerun is "eval $STORBENCH_GATE #": the "#" comments out the
// redirection fio appends to it ("CMD > JOB.prerun.txt 2>&1"), so nothing is
// written where fio runs and the gate's stderr is fio's. fio announces the
// prerun on stdout ("JOB : Saving output of prerun in JOB.prerun.txt");
// that line is taken out of the stream before it is parsed. Every clone of
// a numjobs job passes the gate, each with a line of its own. A failing
// prerun (no "go": the run was interrupted) ends the job before any I/O.
// The clones read their lines from one pipe at once, and sh's read takes a
// byte at a time, so their bytes interleave ("go\ngo\n" may reach one
// clone as "gg" and the other as "oo"): a clone tests only that it read a
// whole line, of which each gets exactly one, never what the line says.
//
// The end line: such a job also reports on stderr when its I/O is over,
// from its exec_postrun (fio runs it once the job's measuring ended, before
// the I/O engine closes), and the start line notes when each target's last
// report arrived, on storbench's one clock. Less fio's job_runtime, that is
// when the target began measuring (startSkew). fio's report time is no
// such end: it comes after the engine closed, which for gfapi (glfs_fini)
// and rbd takes seconds, and made targets that began together look
// seconds apart.
//
// A job file (--fio-job, a suite's job) is gated by sh before fio starts.
const (
	gateMarker = "storbench-gate-ready"
	gateGo     = "go"
	gateScript = `printf '%s\n' "` + gateMarker + `" >&2; read -r _ || exit 125; exec "$@"`

	gateEnv       = "STORBENCH_GATE"
	gateBody      = `echo ` + gateMarker + ` >&2; read -r _`
	endMarker     = "storbench-io-end"
	endEnv        = "STORBENCH_IO_END"
	fioGateScript = gateEnv + `='` + gateBody + `' ` + endEnv + `='echo ` + endMarker + ` >&2'; export ` + gateEnv + ` ` + endEnv + `; exec "$@"`
	fioGatePrerun = `--exec_prerun=eval $` + gateEnv + ` #`
	fioEndPostrun = `--exec_postrun=eval $` + endEnv + ` #`

	// gateWait bounds how long the barrier waits for slow targets.
	gateWait = 2 * time.Minute
)

// startLine releases the commands of one parallel workload together, and
// keeps when each slot's (target's) I/O ended, where its command said so.
type startLine struct {
	mu      sync.Mutex
	ready   chan struct{}
	writers []gateWriter
	ended   map[int]time.Time
}

type gateWriter struct {
	w *os.File
	// lines is how many "go" lines the command reads: one per fio job
	// clone when it waits inside fio, else one.
	lines int
}

func newStartLine(n int) *startLine {
	return &startLine{ready: make(chan struct{}, n), ended: map[int]time.Time{}}
}

// cmder wraps c so its commands wait at the start line; slot names the
// target whose I/O end they report.
func (s *startLine) cmder(slot int, c execx.Cmder) execx.Cmder {
	return gatedCmder{inner: c, line: s, slot: slot}
}

// ioEnded notes that a slot's command reported its I/O over: the latest
// report counts (each fio job clone sends one).
func (s *startLine) ioEnded(slot int, at time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if at.After(s.ended[slot]) {
		s.ended[slot] = at
	}
}

// endsByTarget maps each target's name to when its I/O ended, where its
// command said so (the slots are the targets' places).
func (s *startLine) endsByTarget(targets []*readyTarget) map[string]time.Time {
	ends := map[string]time.Time{}
	for slot, rt := range targets {
		if at, ok := s.endOf(slot); ok {
			ends[rt.prepared.Name] = at
		}
	}
	return ends
}

// endOf is when the slot's I/O ended, and whether its command said so.
func (s *startLine) endOf(slot int) (time.Time, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	at, ok := s.ended[slot]
	return at, ok
}

// release lets every waiting command go, or with run false (the run was
// interrupted) makes each exit without running.
func (s *startLine) release(run bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	if run {
		for _, g := range s.writers {
			if _, err := g.w.Write([]byte(strings.Repeat(gateGo+"\n", g.lines))); err != nil {
				errs = append(errs, fmt.Errorf("releasing a command: %w", err))
			}
		}
	}
	for _, g := range s.writers {
		if err := g.w.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	s.writers = nil
	return errors.Join(errs...)
}

type gatedCmder struct {
	inner execx.Cmder
	line  *startLine
	slot  int
}

func (g gatedCmder) Command(ctx context.Context, name string, args ...string) execx.Cmd {
	if job, clones, postrun, ok := inFioGate(args); ok {
		argv := append([]string{"-c", fioGateScript, "storbench-gate", name}, args...)
		argv = append(argv, fioGatePrerun)
		announce := [][]byte{[]byte(job + " : Saving output of prerun in " + job + ".prerun.txt\n")}
		if !postrun {
			argv = append(argv, fioEndPostrun)
			announce = append(announce, []byte(job+" : Saving output of postrun in "+job+".postrun.txt\n"))
		}
		return &gatedCmd{Cmd: g.inner.Command(ctx, "sh", argv...), line: g.line, slot: g.slot, clones: clones, announce: announce}
	}
	argv := append([]string{"-c", gateScript, "storbench-gate", name}, args...)
	return &gatedCmd{Cmd: g.inner.Command(ctx, "sh", argv...), line: g.line, slot: g.slot, clones: 1}
}

// inFioGate reports whether a fio command can wait inside fio: one job,
// given entirely by options (no job file), with no prerun of its own. It
// returns the job's name, its number of clones, and whether it has a
// postrun of its own (then it reports no I/O end).
func inFioGate(args []string) (job string, clones int, postrun, ok bool) {
	clones = 1
	names := 0
	for _, a := range args {
		switch {
		case !strings.HasPrefix(a, "--"):
			return "", 0, false, false // a job file
		case strings.HasPrefix(a, "--name="):
			job = strings.TrimPrefix(a, "--name=")
			names++
		case strings.HasPrefix(a, "--exec_prerun="):
			return "", 0, false, false
		case strings.HasPrefix(a, "--exec_postrun="):
			postrun = true
		case strings.HasPrefix(a, "--numjobs="):
			n, err := strconv.Atoi(strings.TrimPrefix(a, "--numjobs="))
			if err != nil || n < 1 {
				return "", 0, false, false
			}
			clones = n
		}
	}
	if names != 1 || job == "" || strings.ContainsAny(job, "\n") {
		return "", 0, false, false
	}
	return job, clones, postrun, true
}

type gatedCmd struct {
	execx.Cmd
	line   *startLine
	stdout io.Writer
	stderr io.Writer
	// slot is the target's place on the start line.
	slot int
	// clones is how many gates the command passes (fio job clones).
	clones int
	// announce are fio's lines about the prerun and postrun, cut from
	// stdout.
	announce [][]byte
}

func (c *gatedCmd) SetDir(d string) execx.Cmd       { c.Cmd.SetDir(d); return c }
func (c *gatedCmd) SetEnv(e ...string) execx.Cmd    { c.Cmd.SetEnv(e...); return c }
func (c *gatedCmd) SetStdin(io.Reader) execx.Cmd    { return c } // stdin carries the start signal
func (c *gatedCmd) SetStdout(w io.Writer) execx.Cmd { c.stdout = w; return c }
func (c *gatedCmd) SetStderr(w io.Writer) execx.Cmd { c.stderr = w; return c }

func (c *gatedCmd) Run() error {
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	c.line.mu.Lock()
	c.line.writers = append(c.line.writers, gateWriter{w: w, lines: c.clones})
	c.line.mu.Unlock()
	defer r.Close()
	c.Cmd.SetStdin(r)
	mw := &markerWriter{next: c.stderr, ready: c.line.ready, need: c.clones,
		ended: func() { c.line.ioEnded(c.slot, time.Now()) }}
	c.Cmd.SetStderr(mw)
	// one cutWriter per announcement, the first one fio writes outermost
	var cws []*cutWriter
	if c.stdout != nil {
		out := c.stdout
		for i := len(c.announce) - 1; i >= 0; i-- {
			cw := &cutWriter{next: out, cut: c.announce[i]}
			cws, out = append([]*cutWriter{cw}, cws...), cw
		}
		c.Cmd.SetStdout(out)
	}
	runErr := c.Cmd.Run()
	var flushErr error
	for _, cw := range cws {
		flushErr = errors.Join(flushErr, cw.flush())
	}
	return errors.Join(runErr, flushErr, mw.flush())
}

// markerWriter passes stderr on, minus the gates' ready lines and the I/O
// end lines, signals ready once every clone's gate has reported, and calls
// ended for each end line.
type markerWriter struct {
	next    io.Writer
	ready   chan<- struct{}
	ended   func()
	need    int
	seen    int
	partial []byte
}

func (m *markerWriter) Write(p []byte) (int, error) {
	n := len(p)
	m.partial = append(m.partial, p...)
	var out []byte
	for {
		i := bytes.IndexByte(m.partial, '\n')
		if i < 0 {
			break
		}
		line := m.partial[:i+1]
		switch string(line[:i]) {
		case gateMarker:
			m.seen++
			if m.seen == m.need {
				m.ready <- struct{}{}
			}
		case endMarker:
			if m.ended != nil {
				m.ended()
			}
		default:
			out = append(out, line...)
		}
		m.partial = m.partial[i+1:]
	}
	// A partial line that cannot become a marker goes on at once.
	if len(m.partial) > 0 && !bytes.HasPrefix([]byte(gateMarker+"\n"), m.partial) && !bytes.HasPrefix([]byte(endMarker+"\n"), m.partial) {
		out = append(out, m.partial...)
		m.partial = nil
	}
	if m.next != nil && len(out) > 0 {
		if _, err := m.next.Write(out); err != nil {
			return n, err
		}
	}
	return n, nil
}

func (m *markerWriter) flush() error {
	if m.next == nil || len(m.partial) == 0 {
		return nil
	}
	_, err := m.next.Write(m.partial)
	m.partial = nil
	return err
}

// cutWriter passes a stream on without any occurrence of cut, wherever
// in the stream it falls (fio's job processes and its main process share
// stdout, so the announcement can land between two lines of a JSON
// document). It holds back only a tail that may begin an occurrence.
type cutWriter struct {
	next io.Writer
	cut  []byte
	buf  []byte
}

func (c *cutWriter) Write(p []byte) (int, error) {
	n := len(p)
	c.buf = append(c.buf, p...)
	for {
		i := bytes.Index(c.buf, c.cut)
		if i < 0 {
			break
		}
		c.buf = append(c.buf[:i], c.buf[i+len(c.cut):]...)
	}
	keep := 0
	for k := min(len(c.cut)-1, len(c.buf)); k > 0; k-- {
		if bytes.HasSuffix(c.buf, c.cut[:k]) {
			keep = k
			break
		}
	}
	send := c.buf[:len(c.buf)-keep]
	if len(send) > 0 {
		if _, err := c.next.Write(send); err != nil {
			return n, err
		}
	}
	c.buf = append([]byte(nil), c.buf[len(c.buf)-keep:]...)
	return n, nil
}

func (c *cutWriter) flush() error {
	if len(c.buf) == 0 {
		return nil
	}
	_, err := c.next.Write(c.buf)
	c.buf = nil
	return err
}
