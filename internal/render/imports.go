package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

// maxProblemsShown bounds the problems listed per file; --output json has
// them all.
const maxProblemsShown = 20

// ImportText writes an import report for a terminal: skipped and
// duplicate inputs, a table of the files read with their notes and
// problems, a dry run's preview, device health, and the run stored.
func ImportText(w io.Writer, rep *result.ImportReport) error {
	for _, s := range rep.SameTwice {
		fmt.Fprintf(w, "Skipped: %s.\n", s)
	}
	for _, dup := range rep.Duplicates {
		fmt.Fprintf(w, "Already imported: %s (sha256 %s...) is in run %s, imported %s. Not imported again.\n",
			dup.File, dup.SHA256[:12], dup.RunID, dup.Imported.Local().Format("2006-01-02 15:04"))
	}
	if len(rep.Files) == 0 {
		_, err := fmt.Fprintln(w, "Nothing new to import.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tFORMAT\tTOOL\tRESULTS\tHEALTH\tROWS\tSTATE")
	for _, fr := range rep.Files {
		tool := strings.TrimSpace(fr.Tool + " " + fr.ToolVersion)
		if strings.HasPrefix(fr.ToolVersion, fr.Tool) {
			tool = fr.ToolVersion
		}
		state := "read"
		switch {
		case fr.Cut:
			state = "CUT"
		case fr.Refused > 0:
			state = fmt.Sprintf("%d REFUSED", fr.Refused)
		case len(fr.Problems) > 0 || len(fr.Skipped) > 0:
			state = "read, with notes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", fr.File, strings.Join(fr.Formats, "+"), tool, fr.Results, fr.Health, fr.Rows, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, fr := range rep.Files {
		for _, n := range fr.Notes {
			fmt.Fprintf(w, "  %s: %s\n", fr.File, n)
		}
		if len(fr.Skipped) > 0 {
			fmt.Fprintf(w, "  %s: lines skipped: %s\n", fr.File, lineList(fr.Skipped))
		}
		for i, p := range fr.Problems {
			if i == maxProblemsShown {
				fmt.Fprintf(w, "  %s: and %d more (see --output json)\n", fr.File, len(fr.Problems)-i)
				break
			}
			if p.Line > 0 {
				fmt.Fprintf(w, "  %s:%d: %s: %s\n", fr.File, p.Line, p.Kind, p.Msg)
			} else {
				fmt.Fprintf(w, "  %s: %s: %s\n", fr.File, p.Kind, p.Msg)
			}
		}
	}
	if rep.DryRun {
		fmt.Fprintf(w, "\nDry run: would store %d results", rep.Results)
		if len(rep.Health) > 0 {
			fmt.Fprintf(w, " and %d device health records", len(rep.Health))
		}
		fmt.Fprintln(w, ":")
		if err := previewTable(w, rep.Preview); err != nil {
			return err
		}
		if rep.Results > len(rep.Preview) {
			fmt.Fprintf(w, "(the first %d of %d results)\n", len(rep.Preview), rep.Results)
		}
	}
	if len(rep.Health) > 0 {
		fmt.Fprintln(w)
		if err := HealthText(w, rep.Health); err != nil {
			return err
		}
	}
	if rep.RunID != "" {
		fmt.Fprintf(w, "\nImported %d results from %d file(s) as run %s (see: storbench show %s).\n", rep.Results, len(rep.Files), rep.RunID, rep.RunID)
		if n := len(rep.MoreRuns); n > 0 {
			fmt.Fprintf(w, "Rows measured at %d other times were stored as %d more runs, one per time (see: storbench runs).\n", n, n)
		}
	} else if !rep.DryRun {
		fmt.Fprintln(w, "\nNothing was imported.")
	}
	return nil
}

func lineList(ls []int) string {
	var s []string
	for i, l := range ls {
		if i == 10 {
			s = append(s, fmt.Sprintf("and %d more", len(ls)-10))
			break
		}
		s = append(s, fmt.Sprint(l))
	}
	return strings.Join(s, ", ")
}

// previewTable shows what a dry run would store, in the units of the source.
func previewTable(w io.Writer, results []result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tWORKLOAD\tROUND\tREP\tIOPS\tBANDWIDTH\tLAT P99\tLABELS")
	for _, r := range results {
		iops, bw, p99 := "-", "-", "-"
		if v, ok := r.Metric(result.MetricIOPS); ok {
			iops = units.IOPS(v)
		}
		if v, ok := r.Metric(result.MetricBW); ok {
			bw = units.In(v, unitOr(r.DisplayUnits[result.MetricBW], "MB/s"))
		}
		if v, ok := r.Metric(result.MetricLatP99); ok {
			if u := r.DisplayUnits[result.MetricLatP99]; u != "" {
				p99 = units.In(v, u)
			} else {
				p99 = units.Latency(time.Duration(v))
			}
		} else if r.Sync != nil {
			if v, ok := r.Sync.At(99); ok {
				p99 = "sync " + units.Latency(v)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Target, r.Workload, r.Round, r.Repetition, iops, bw, p99, Labels(r.Labels))
	}
	return tw.Flush()
}

func unitOr(u, d string) string {
	if u == "" {
		return d
	}
	return u
}
