// Package render turns runs and results into what people read: terminal
// tables, Markdown, HTML and SVG, and JSON and CSV for scripts. It formats
// internal/result types and internal/analysis views and computes nothing:
// what a document shows (a comparison, a contention report, a suite's
// estimate) is worked out before it gets here. Renderers write to an
// io.Writer and return errors; they never decide where output goes.
package render

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// JSON writes v as indented JSON.
func JSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// RunHeader writes a run's identity, labels and status.
func RunHeader(w io.Writer, run *result.Run) error {
	dur := "-"
	if !run.Finished.IsZero() {
		dur = run.Finished.Sub(run.Started).Round(time.Second).String()
	}
	fmt.Fprintf(w, "Run %s  suite %s  %s  started %s  took %s\n", Terminal(run.ID), Terminal(run.Suite), Terminal(string(run.Status)),
		run.Started.Local().Format("2006-01-02 15:04:05"), dur)
	if len(run.Labels) > 0 {
		fmt.Fprintf(w, "Labels: %s\n", Terminal(Labels(run.Labels)))
	}
	if run.Note != "" && run.Status != result.StatusComplete {
		fmt.Fprintf(w, "Note: %s\n", Terminal(firstLine(run.Note)))
	}
	_, err := fmt.Fprintln(w)
	return err
}

// RunDetail writes what show prints: the run's header, its results table
// with their checks, and the contention round's comparison.
func RunDetail(w io.Writer, run *result.Run, results []result.Result, contention []analysis.ContentionReport) error {
	if err := RunHeader(w, run); err != nil {
		return err
	}
	if len(results) == 0 {
		_, err := io.WriteString(w, "No results stored for this run.\n")
		return err
	}
	if err := ResultsTable(w, results); err != nil {
		return err
	}
	return ContentionSection(w, contention)
}

// ResultsTable writes one row per result and direction: IOPS, MB/s and the
// completion-latency mean and percentiles, plus the fsync/fdatasync p99 when
// any workload synced. Failed results show their reason.
func ResultsTable(w io.Writer, results []result.Result) error {
	hasSync := false
	multiTarget := false
	hasLimit := false
	for i, r := range results {
		if r.Sync != nil {
			hasSync = true
		}
		if r.Bottleneck != nil {
			hasLimit = true
		}
		if i > 0 && r.Target != results[0].Target {
			multiTarget = true
		}
	}
	g := &grid{left: 3}
	head := []string{"WORKLOAD", "REP", "DIR", "IOPS", "MB/s", "LAT MEAN", "P50", "P99", "P99.9"}
	if hasSync {
		head = append(head, "SYNC P99")
	}
	if hasLimit {
		head = append(head, "LIMITED BY")
	}
	if multiTarget {
		head = append([]string{"TARGET"}, head...)
		g.left++
	}
	g.add(head...)
	var failed []result.Result
	for _, r := range results {
		lead := []string{r.Workload, fmt.Sprint(r.Repetition)}
		if multiTarget {
			lead = append([]string{r.Target}, lead...)
		}
		dirs := r.Directions()
		if r.Status == result.StatusFailed {
			failed = append(failed, r)
			if len(dirs) == 0 {
				row := append(lead, "failed", "-", "-", "-", "-", "-", "-")
				if hasSync {
					row = append(row, "-")
				}
				if hasLimit {
					row = append(row, "-")
				}
				g.add(row...)
				continue
			}
			// Figures of a failed workload are shown, marked as such.
			lead[len(lead)-2] += " (failed)"
		}
		for i, d := range dirs {
			row := append(append([]string(nil), lead...), d.Name,
				orDash(d.IOPS, units.IOPS), orDash(d.BytesPerSec, func(v float64) string { return fmt.Sprintf("%.1f", v/1e6) }),
				units.Latency(d.Completion.Mean), pct(d.Completion, 50), pct(d.Completion, 99), pct(d.Completion, 99.9))
			if hasSync {
				s := "-"
				if r.Sync != nil && i == 0 {
					s = pct(*r.Sync, 99)
				}
				row = append(row, s)
			}
			if hasLimit {
				row = append(row, limitedBy(r, i))
			}
			g.add(row...)
		}
	}
	if err := g.write(w); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nMB/s = 10^6 bytes/s. Latency: fio's completion latency (clat); SYNC: fsync/fdatasync latency.")
	for _, r := range failed {
		fmt.Fprintf(w, "FAILED %s: %s\n", Terminal(r.Workload), Terminal(r.Error))
	}
	if err := whatRan(w, results); err != nil {
		return err
	}
	if err := asImported(w, results); err != nil {
		return err
	}
	if err := Bottlenecks(w, results); err != nil {
		return err
	}
	return ResultChecks(w, results) // validity.go
}

func pct(l result.Latency, p float64) string {
	v, ok := l.At(p)
	if !ok {
		return "-"
	}
	return units.Latency(v)
}

// RunsTable lists runs, newest first; none says how to make one, and
// where (dbPath) runs are stored.
func RunsTable(w io.Writer, runs []result.Run, dbPath string) error {
	if len(runs) == 0 {
		_, err := fmt.Fprintf(w, "No runs stored in %s yet: try storbench run --suite quick --target /tmp\n", dbPath)
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTARTED\tTOOK\tSUITE\tSTATUS\tTARGETS\tLABELS")
	for _, r := range runs {
		took := "-"
		if !r.Finished.IsZero() {
			took = r.Finished.Sub(r.Started).Round(time.Second).String()
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", Terminal(r.ID), r.Started.Local().Format("2006-01-02 15:04"), took,
			Terminal(r.Suite), Terminal(string(r.Status)), Terminal(strings.Join(r.Targets, ",")), Terminal(userLabels(r.Labels)))
	}
	return tw.Flush()
}

func userLabels(l map[string]string) string {
	u := map[string]string{}
	for k, v := range l {
		if !result.Automatic(k) { // shown by show, not in the runs list
			u[k] = v
		}
	}
	return Labels(u)
}

// Labels formats labels as k=v pairs in key order.
func Labels(l map[string]string) string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, k+"="+l[k])
	}
	return strings.Join(parts, " ")
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// orDash formats v, or "-" when the figure was not measured (an imported
// result may carry only some metrics).
func orDash(v float64, format func(float64) string) string {
	if v <= 0 {
		return "-"
	}
	return format(v)
}

// measuredHere reports whether storbench ran the workload itself (its
// engine labels every such result with the kind of target), as opposed to
// reading it from another tool's output.
func measuredHere(r result.Result) bool { return result.LabelTargetKind.Of(r.Labels) != "" }

// whatRan lists, for results of the user's own fio job files, the job and
// the options fio reported it ran with.
func whatRan(w io.Writer, results []result.Result) error {
	first := true
	for _, r := range results {
		if !measuredHere(r) || r.Method == "" {
			continue
		}
		if first {
			if _, err := fmt.Fprintln(w, "\nWhat ran (fio's own report of each job's options):"); err != nil {
				return err
			}
			first = false
		}
		if _, err := fmt.Fprintf(w, "  %s on %s: %s\n", Terminal(r.Workload), Terminal(r.Target), Terminal(r.Method)); err != nil {
			return err
		}
	}
	return nil
}

// asImported shows imported figures again in the units their source used,
// with the method that produced them.
func asImported(w io.Writer, results []result.Result) error {
	first := true
	for _, r := range results {
		if measuredHere(r) || (len(r.DisplayUnits) == 0 && r.Method == "") {
			continue
		}
		if first {
			fmt.Fprintln(w, "\nAs imported (in the units of the source):")
			first = false
		}
		var parts []string
		for _, m := range result.Metrics {
			v, ok := r.Metric(m)
			if !ok {
				continue
			}
			unit := r.DisplayUnits[m]
			if unit == "" {
				unit = result.MetricUnit(m)
			}
			parts = append(parts, m+" "+units.In(v, unit))
		}
		line := fmt.Sprintf("  %s on %s: %s", Terminal(r.Workload), Terminal(r.Target), Terminal(strings.Join(parts, ", ")))
		if r.Method != "" {
			line += " (" + Terminal(r.Method) + ")"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}
