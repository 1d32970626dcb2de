package fio

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
)

// Runner runs fio somewhere a Cmder reaches.
type Runner struct {
	Cmder execx.Cmder
	// Dir is the working directory; relative file names resolve there.
	Dir string
	// Binary is the fio executable; "fio" when empty.
	Binary string
	// Env is added to fio's environment (KEY=VALUE): what an engine
	// target's engine needs (File.Engine.Env).
	Env []string
}

// Outcome is what one fio invocation produced.
type Outcome struct {
	Final Output
	// Raw is the final JSON document exactly as fio printed it.
	Raw []byte
	// Noise is text fio printed on stdout outside its JSON (warnings).
	Noise  []string
	Stderr string
}

// MissingError says fio is not installed where the runner runs.
type MissingError struct{ Binary string }

func (e *MissingError) Error() string {
	return fmt.Sprintf("%s not found: install fio (Debian/Ubuntu: apt-get install fio; Fedora: dnf install fio; Alpine: apk add fio; Arch: pacman -S fio)", e.Binary)
}

// Error is fio failing: Message is fio's own explanation.
type Error struct {
	Message string
	Stderr  string
	// Outcome holds whatever fio printed before failing; may be nil.
	Outcome *Outcome
	Err     error
}

func (e *Error) Error() string { return e.Message }
func (e *Error) Unwrap() error { return e.Err }

func (r Runner) binary() string {
	if r.Binary == "" {
		return "fio"
	}
	return r.Binary
}

func (r Runner) command(ctx context.Context, args ...string) execx.Cmd {
	c := r.Cmder.Command(ctx, r.binary(), args...)
	if r.Dir != "" {
		c.SetDir(r.Dir)
	}
	if len(r.Env) > 0 {
		c.SetEnv(r.Env...)
	}
	return c
}

// Version returns fio's version string, e.g. "fio-3.33".
func (r Runner) Version(ctx context.Context) (string, error) {
	out, err := execx.Output(r.command(ctx, "--version"))
	if err != nil {
		if execx.IsNotFound(err) || strings.Contains(err.Error(), "executable file not found") {
			return "", &MissingError{Binary: r.binary()}
		}
		return "", fmt.Errorf("asking fio for its version: %w", err)
	}
	return strings.TrimSpace(string(out)), nil
}

// HasEngine reports whether fio can load the named I/O engine. fio
// --enghelp=NAME exits 0 when it lists the engine's options, and 1 both for
// an engine it lacks ("not found") and for one without options ("has no
// options").
func (r Runner) HasEngine(ctx context.Context, engine string) (bool, error) {
	var out bytes.Buffer
	err := r.command(ctx, "--enghelp="+engine).SetStdout(&out).SetStderr(io.Discard).Run()
	if err == nil {
		return true, nil
	}
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	var re *execx.RunError
	if errors.As(err, &re) {
		return strings.Contains(out.String(), "has no options"), nil
	}
	return false, err
}

// Run runs job and returns fio's final output. With onProgress set, fio
// reports its status every second and onProgress sees the live rate.
func (r Runner) Run(ctx context.Context, job Job, onProgress func(result.Progress)) (*Outcome, error) {
	if job.Path != "" {
		return r.RunFile(ctx, job.Path, onProgress)
	}
	return r.run(ctx, job.Args(), onProgress)
}

// RunFile runs the job file at path (where the runner runs, relative to its
// Dir) as fio runs a job file: storbench adds only its output options on the
// command line.
func (r Runner) RunFile(ctx context.Context, path string, onProgress func(result.Progress)) (*Outcome, error) {
	return r.run(ctx, []string{path}, onProgress)
}

func (r Runner) run(ctx context.Context, jobArgs []string, onProgress func(result.Progress)) (*Outcome, error) {
	args := []string{"--output-format=json"}
	if onProgress != nil {
		args = append(args, "--status-interval=1")
	}
	args = append(args, jobArgs...)

	pr, pw := io.Pipe()
	var (
		wg    sync.WaitGroup
		out   Outcome
		docs  int
		prev  *Output
		perr  error
		start = time.Now()
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		perr = scanDocuments(pr, func(raw []byte) error {
			o, err := decode(raw)
			if err != nil {
				return err
			}
			docs++
			out.Final, out.Raw = o, raw
			if onProgress != nil {
				onProgress(progressBetween(prev, &o, time.Since(start)))
			}
			prev = &o
			return nil
		}, func(line string) { out.Noise = append(out.Noise, line) })
		// Drain so fio never blocks on a full pipe after a parse error.
		_, _ = io.Copy(io.Discard, pr)
	}()

	var stderr bytes.Buffer
	runErr := r.command(ctx, args...).SetStdout(pw).SetStderr(&stderr).Run()
	pw.Close()
	wg.Wait()
	out.Stderr = stderr.String()

	if ctx.Err() != nil {
		return &out, ctx.Err()
	}
	if runErr != nil {
		if execx.IsNotFound(runErr) {
			return nil, &MissingError{Binary: r.binary()}
		}
		return &out, &Error{Message: failureMessage(&out, runErr), Stderr: out.Stderr, Outcome: &out, Err: runErr}
	}
	if perr != nil {
		return &out, &Error{Message: perr.Error(), Stderr: out.Stderr, Outcome: &out, Err: perr}
	}
	if docs == 0 {
		return &out, &Error{Message: "fio printed no JSON result" + stderrSuffix(out.Stderr), Stderr: out.Stderr, Outcome: &out}
	}
	return &out, nil
}

func decode(raw []byte) (Output, error) {
	var o Output
	if err := json.Unmarshal(raw, &o); err != nil {
		return o, fmt.Errorf("fio printed JSON that does not parse: %w", err)
	}
	return o, nil
}

// progressBetween turns two cumulative status documents into a live rate.
func progressBetween(prev, cur *Output, wall time.Duration) result.Progress {
	var p result.Progress
	jobs := cur.AllJobs()
	if len(jobs) == 0 {
		return p
	}
	p.Elapsed = wall
	if eta := jobs[0].ETA; eta >= 0 && eta < 1<<30 {
		p.Remaining = time.Duration(eta) * time.Second
	}
	if prev == nil {
		ios, bytes := totals(cur)
		if s := float64(jobs[0].Elapsed); s > 0 {
			p.IOPS, p.BytesPerSec = float64(ios)/s, float64(bytes)/s
		}
		return p
	}
	dt := float64(cur.TimestampMS-prev.TimestampMS) / 1000
	ios1, b1 := totals(prev)
	ios2, b2 := totals(cur)
	if dt > 0 && ios2 >= ios1 {
		p.IOPS = float64(ios2-ios1) / dt
		p.BytesPerSec = float64(b2-b1) / dt
	}
	return p
}

func totals(o *Output) (ios, bytes int64) {
	for _, j := range o.AllJobs() {
		for _, d := range []*Direction{j.Read, j.Write, j.Trim} {
			if d != nil {
				ios += int64(value(d.TotalIOs))
				bytes += int64(value(d.IOBytes))
			}
		}
	}
	return ios, bytes
}

// failureMessage picks fio's own words for why it failed: its "fio:" and
// "error=" lines, else the job's errno, else the command error.
func failureMessage(out *Outcome, runErr error) string {
	var lines []string
	// fio prints some errors on stdout beside its JSON, others on stderr.
	for _, l := range append(out.Noise, strings.Split(out.Stderr, "\n")...) {
		l = strings.TrimSpace(l)
		if l != "" && (strings.HasPrefix(l, "fio:") || strings.Contains(l, "error=") || strings.Contains(l, "err=")) && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	for _, j := range out.Final.AllJobs() {
		if l := fmt.Sprintf("job %s: error %d (%s)", j.Name, j.Error, errnoText(j.Error)); j.Error != 0 && !slices.Contains(lines, l) {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		return "fio failed: " + runErr.Error()
	}
	if len(lines) > 6 {
		lines = lines[len(lines)-6:]
	}
	return "fio failed: " + strings.Join(lines, "; ")
}

func stderrSuffix(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + s
}
