package render

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// ClassQualificationText writes a class's declared facts, each check's
// answer and its stages' p50 (and p95 from enough samples).
func ClassQualificationText(w io.Writer, doc analysis.ClassQualificationDocument) error {
	q := doc.Qualification
	if q == nil {
		_, err := fmt.Fprintln(w, "No qualification stored.")
		return err
	}
	fmt.Fprintf(w, "%s: %s profile, run %s, %s\n", q.Class, q.Profile, q.RunID, q.When.Format("2006-01-02 15:04:05 MST"))
	fmt.Fprintf(w, "declared: %s\n\n", q.Declared)
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "CHECK\tANSWER")
	for _, c := range q.Checks {
		fmt.Fprintf(tw, "%s\t%s\n", c.Name, c.Answer())
		for _, s := range c.Stages {
			p95 := "-"
			if s.HasP95 {
				p95 = units.Latency(s.P95)
			}
			fmt.Fprintf(tw, "  %s\tp50 %s  p95 %s  (%d samples)\n", s.Name, units.Latency(s.P50), p95, s.Samples)
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, n := range doc.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, l := range doc.Leaks {
		fmt.Fprintf(w, "LEFT BEHIND: %s\n", l)
	}
	_, err := fmt.Fprintf(w, "\npick two: %s\n", doc.PickTwo)
	return err
}
