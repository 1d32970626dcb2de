package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// AppFit writes a run's app fitness: the SQLite verdict's summary, then
// per target each filesystem semantic's answer and each SQLite mode's
// commits. Nothing is written for a run without any.
func AppFit(w io.Writer, rep *analysis.AppReport) error {
	if rep == nil {
		return nil
	}
	fmt.Fprintf(w, "\nFit for SQLite apps: %s\n  %s\n", strings.ToUpper(string(rep.Verdict.Status)), rep.Verdict.Summary)
	for _, a := range rep.Fits {
		clients := ""
		if len(a.Semantics) > 0 {
			clients = " (" + a.Semantics[0].Clients + ")"
		}
		fmt.Fprintf(w, "\n%s%s\n", a.Target, clients)
		g := &grid{left: 3}
		g.add("SEMANTIC", "OUTCOME", "SEEN")
		for _, s := range a.Semantics {
			g.add(s.Name, s.Outcome, s.Seen)
		}
		if err := g.write(w); err != nil {
			return err
		}
		if len(a.SQLite) == 0 {
			continue
		}
		fmt.Fprintln(w)
		g = &grid{left: 3}
		g.add("SQLITE", "CLIENTS", "INTEGRITY", "COMMITS/S", "P50", "P99", "FLUSHES/COMMIT")
		for _, s := range a.SQLite {
			flushes := "-"
			if s.FlushesPerCommit >= 0 {
				flushes = fmt.Sprintf("%.2f", s.FlushesPerCommit)
			}
			integrity := s.Integrity
			if integrity == "" {
				integrity = "-"
			}
			g.add(s.Journal+"/"+s.Synchronous, fmt.Sprint(s.Clients), integrity, units.IOPS(s.CommitsPerSec),
				units.Latency(s.P50), units.Latency(s.P99), flushes)
		}
		if err := g.write(w); err != nil {
			return err
		}
	}
	return nil
}

// appHeads are classes' app-profile columns' heads, each after a tab.
func appHeads() string {
	var b strings.Builder
	for _, p := range analysis.AppProfiles {
		b.WriteString("\t" + strings.ToUpper(p))
	}
	return b.String()
}

// appCells are a class's answers in its app-profile columns.
func appCells(q *analysis.ClassQualification) string {
	var b strings.Builder
	for _, p := range analysis.AppProfiles {
		b.WriteString("\t" + analysis.ClassAppAnswer(q, p))
	}
	return b.String()
}
