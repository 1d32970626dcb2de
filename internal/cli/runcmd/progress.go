package runcmd

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// progress prints what the engine reports: a live line per workload on a
// terminal, a final line per workload in text mode, nothing on stdout in
// JSON mode. Notices always go to stderr.
type progress struct {
	out    io.Writer
	errOut io.Writer
	live   bool
	quiet  bool
	open   bool // a live line is on screen
}

var _ engine.Observer = (*progress)(nil)

func newProgress(d cli.Deps, jsonOutput bool) *progress {
	return &progress{out: d.Out, errOut: d.ErrOut, quiet: jsonOutput, live: !jsonOutput && cli.IsTerminal(d.Out)}
}

func (p *progress) RunStarted(r *result.Run) {
	if p.quiet {
		return
	}
	fmt.Fprintf(p.out, "Run %s: suite %s, %d workload(s) on %s\n", r.ID, r.Suite, len(r.Workloads), strings.Join(r.Targets, ", "))
}

func (p *progress) Notice(target, msg string) {
	p.clear()
	fmt.Fprintf(p.errOut, "notice: %s: %s\n", target, msg)
}

func (p *progress) WorkloadStarted(s engine.Step) {
	if p.live {
		p.line(s, fmt.Sprintf("starting (%s)", plannedTime(s.Expected)))
	}
}

func (p *progress) WorkloadProgress(s engine.Step, pr fio.Progress) {
	if !p.live {
		return
	}
	t := fmtClock(pr.Elapsed)
	if s.Expected > 0 {
		remaining := s.Expected - pr.Elapsed
		if pr.Remaining > 0 {
			remaining = pr.Remaining
		}
		t += fmt.Sprintf(" elapsed, %s left", fmtClock(max(remaining, 0)))
	} else {
		t += " elapsed"
	}
	p.line(s, fmt.Sprintf("%s  %s IOPS  %s", t, units.IOPS(pr.IOPS), units.MBps(pr.BytesPerSec)))
}

func (p *progress) WorkloadFinished(s engine.Step, r *result.Result) {
	if p.quiet {
		return
	}
	p.clear()
	fmt.Fprintf(p.out, "%s%s\n", prefix(s), summary(r))
}

func (p *progress) finish() { p.clear() }

func (p *progress) line(s engine.Step, text string) {
	fmt.Fprintf(p.out, "\r\033[K%s%s", prefix(s), text)
	p.open = true
}

func (p *progress) clear() {
	if p.open {
		fmt.Fprint(p.out, "\r\033[K")
		p.open = false
	}
}

func prefix(s engine.Step) string {
	rep := ""
	if s.Repetitions > 1 {
		rep = fmt.Sprintf(" rep %d/%d", s.Repetition, s.Repetitions)
	}
	return fmt.Sprintf("[%d/%d%s] %-20s ", s.Index, s.Count, rep, s.Workload)
}

func summary(r *result.Result) string {
	if r.Status == result.StatusFailed {
		return "FAILED: " + r.Error
	}
	var parts []string
	for _, d := range r.Directions() {
		p99 := "-"
		if v, ok := d.Completion.At(99); ok {
			p99 = units.Latency(v)
		}
		parts = append(parts, fmt.Sprintf("%s %s IOPS %s p99 %s", d.Name, units.IOPS(d.IOPS), units.MBps(d.BytesPerSec), p99))
	}
	if r.Sync != nil {
		if v, ok := r.Sync.At(99); ok {
			parts = append(parts, "sync p99 "+units.Latency(v))
		}
	}
	return strings.Join(parts, "; ")
}

func plannedTime(d time.Duration) string {
	if d == 0 {
		return "until its size is written"
	}
	return d.String()
}

func fmtClock(d time.Duration) string {
	s := int(d.Round(time.Second).Seconds())
	return fmt.Sprintf("%02d:%02d", s/60, s%60)
}
