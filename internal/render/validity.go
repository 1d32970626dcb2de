package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// measurementSection lists what the measurement checks found: results that
// never reached steady state or may measure a cache, write cliffs, sanity
// rules, and figures the comparison cannot tell apart (docs/measurement.md).
func measurementSection(d *doc, c *analysis.Comparison) {
	var l list
	for _, s := range c.Sanity {
		where := strings.TrimSpace(strings.Join([]string{s.Who, s.Workload}, " "))
		if where != "" {
			where += ": "
		}
		l.items = append(l.items, listItem{text: where + s.Text, tone: "warn"})
	}
	for _, m := range c.Marks {
		tone := "warn"
		if m.Kind == analysis.MarkPrecondition || m.Kind == analysis.MarkCliff {
			tone = ""
		}
		l.items = append(l.items, listItem{text: fmt.Sprintf("%s %s: %s", m.Target, m.Workload, m.Text), tone: tone})
	}
	for _, cl := range c.Cliffs {
		if !cl.Found {
			l.items = append(l.items, listItem{text: fmt.Sprintf("%s %s: %s", cl.Target, cl.Workload, cl.Text), tone: "good"})
		}
	}
	for _, x := range c.Indistinct {
		w := x.Workload
		if len(c.Rounds) > 1 {
			w += " (" + x.Round + ")"
		}
		l.items = append(l.items, listItem{text: fmt.Sprintf("%s %s: no measurable difference between %s and %s (%s apart, uncertainty ±%s)",
			w, MetricLabel(x.Metric), x.A, x.B, percent(x.DiffPercent), percent(x.UncertaintyPercent))})
	}
	if len(l.items) == 0 {
		return
	}
	d.h2("Measurement checks")
	d.add(l)
}

// ResultChecks writes, under a results table, what each result's own
// checks found: steady state not reached, a possible cache, I/O done inside
// submission, a write cliff, preconditioning, the precision --repeat auto
// achieved.
func ResultChecks(w io.Writer, results []result.Result) error {
	var lines []string
	for _, r := range results {
		name := r.Workload
		if r.Repetition > 1 {
			name += fmt.Sprintf(" (rep %d)", r.Repetition)
		}
		if ss := r.SteadyState; ss != nil {
			if ss.Reached {
				lines = append(lines, fmt.Sprintf("  %s: steady state (%s) after %s", name, ss.Criterion, ss.After.Round(time.Second)))
			} else {
				lines = append(lines, fmt.Sprintf("  %s: NEVER reached steady state (%s) in %s: the figure is not a settled one", name, ss.Criterion, ss.After.Round(time.Second)))
			}
		}
		if c := r.CacheRisk; c != nil {
			lines = append(lines, fmt.Sprintf("  %s: %s", name, result.LabelCacheRisk.Of(r.Labels)))
		}
		if v := result.LabelSubmissionBound.Of(r.Labels); v != "" {
			lines = append(lines, fmt.Sprintf("  %s: %s", name, v))
		}
		if c := r.WriteCliff; c != nil {
			lines = append(lines, fmt.Sprintf("  %s: write cliff: %s", name, analysis.CliffText(c.AtBytes, c.BeforeBytesPerSec, c.AfterBytesPerSec)))
		} else if v := result.LabelSustainedBPS.Of(r.Labels); v != "" {
			lines = append(lines, fmt.Sprintf("  %s: no write cliff", name))
		}
		if p := r.Precondition; p != nil {
			lines = append(lines, fmt.Sprintf("  %s: on a device preconditioned by %d sequential passes of %s", name, p.Passes, units.Bytes(p.Bytes)))
		}
		if v := result.LabelRepeatPrecision.Of(r.Labels); v != "" {
			lines = append(lines, fmt.Sprintf("  %s: IOPS known to ±%s%% (95%% confidence) after %d runs", name, v, r.Repetition))
		}
	}
	if len(lines) == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "\nMeasurement checks:\n%s\n", strings.Join(lines, "\n"))
	return err
}
