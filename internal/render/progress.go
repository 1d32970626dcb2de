package render

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// Progress prints what the engine reports while a run goes (the command
// adapts it to engine.Observer): a live line per workload on a terminal, a
// final line per workload as text, nothing on out for JSON output (the
// document comes at the end). Notices always go to errOut. It is safe for
// concurrent use: Kubernetes targets report cleanup notices from their own
// goroutines.
type Progress struct {
	mu     sync.Mutex
	out    io.Writer
	errOut io.Writer
	live   bool
	quiet  bool
	open   bool // a live line is on screen
}

// WorkloadStep is the workload a progress report is about: the engine's
// step, as the command hands it over.
type WorkloadStep struct {
	Workload    string
	Index       int // 1-based position of the workload within the suite
	Count       int // workloads in the suite
	Repetition  int
	Repetitions int
	// Expected is the planned duration (ramp + runtime); zero for
	// size-based workloads.
	Expected time.Duration
}

// ProgressOptions choose how Progress prints.
type ProgressOptions struct {
	// JSON output: nothing but notices until the document.
	JSON bool
	// Live redraws a line per workload every second (out is a terminal);
	// ignored for JSON output.
	Live bool
}

// NewProgress returns a printer of run progress.
func NewProgress(out, errOut io.Writer, o ProgressOptions) *Progress {
	return &Progress{out: out, errOut: errOut, quiet: o.JSON, live: o.Live && !o.JSON}
}

// Live reports whether it draws live lines, and so wants fio's status
// reports.
func (p *Progress) Live() bool { return p.live }

func (p *Progress) RunStarted(r *result.Run) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	fmt.Fprintf(p.out, "Run %s: suite %s, %d workload(s) on %s\n", r.ID, r.Suite, len(r.Workloads), strings.Join(r.Targets, ", "))
}

// Notice prints a notice about target, or about none when target is empty.
func (p *Progress) Notice(target, msg string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	if target == "" {
		fmt.Fprintf(p.errOut, "notice: %s\n", msg)
		return
	}
	fmt.Fprintf(p.errOut, "notice: %s: %s\n", target, msg)
}

func (p *Progress) WorkloadStarted(s WorkloadStep) {
	if !p.live {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(s, fmt.Sprintf("starting (%s)", plannedTime(s.Expected)))
}

func (p *Progress) WorkloadProgress(s WorkloadStep, pr result.Progress) {
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
	p.mu.Lock()
	defer p.mu.Unlock()
	p.line(s, fmt.Sprintf("%s  %s IOPS  %s", t, units.IOPS(pr.IOPS), units.MBps(pr.BytesPerSec)))
}

func (p *Progress) WorkloadFinished(s WorkloadStep, r *result.Result) {
	if p.quiet {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.out, "%s%s\n", stepPrefix(s), stepSummary(r))
}

// Finish clears a live line left on screen.
func (p *Progress) Finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
}

func (p *Progress) line(s WorkloadStep, text string) {
	fmt.Fprintf(p.out, "\r\033[K%s%s", stepPrefix(s), text)
	p.open = true
}

func (p *Progress) clear() {
	if p.open {
		fmt.Fprint(p.out, "\r\033[K")
		p.open = false
	}
}

func stepPrefix(s WorkloadStep) string {
	rep := ""
	if s.Repetitions > 1 {
		rep = fmt.Sprintf(" rep %d/%d", s.Repetition, s.Repetitions)
	}
	return fmt.Sprintf("[%d/%d%s] %-20s ", s.Index, s.Count, rep, s.Workload)
}

func stepSummary(r *result.Result) string {
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
