package render

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/units"
)

// SuitesText writes a table of suites: workloads, largest file, estimated
// time and the first sentence of each description.
func SuitesText(w io.Writer, suites []analysis.SuiteDocument) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tWORKLOADS\tFILE\tTIME\tDESCRIPTION")
	for _, s := range suites {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", s.Name, len(s.Workloads), units.Bytes(s.LargestFileBytes), estimate(s), firstSentence(s.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(w, "\nstorbench suites show NAME prints a suite's workloads and the fio job it runs.")
	return err
}

// SuiteText writes one suite: its description, a table of its workloads,
// the estimated time and the fio job file it generates.
func SuiteText(w io.Writer, s analysis.SuiteDocument) error {
	fmt.Fprintf(w, "Suite %s (%s): %s\n\n", s.Name, s.Source, strings.Join(strings.Fields(s.Description), " "))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKLOAD\tRW\tBS\tQD\tJOBS\tSIZE\tTIME\tENGINE\tDIRECT\tDESCRIPTION")
	for _, wl := range s.Workloads {
		t := "until size written"
		if wl.Runtime > 0 {
			t = time.Duration(wl.Runtime).String()
			if wl.Ramp > 0 {
				t = time.Duration(wl.Ramp).String() + " ramp + " + t
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%s\t%s\t%s\t%v\t%s\n", wl.Name, wl.RW, wl.BlockSize, *wl.IODepth, *wl.NumJobs,
			wl.FileSize, t, wl.IOEngine, *wl.Direct, wl.Description)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(w, "\nEstimated time per target: %s. Each workload runs as its own fio invocation, one after the other;\n", estimate(s))
	fmt.Fprintln(w, "this job file is the same suite in one file (run it with: fio --output-format=json FILE).")
	fmt.Fprintln(w, "storbench picks the file from --target and falls back from libaio to psync where fio lacks libaio.")
	fmt.Fprintln(w)
	_, err := fmt.Fprint(w, s.FioJob)
	return err
}

func estimate(s analysis.SuiteDocument) string {
	out := s.Estimated().String()
	if s.SizeBased > 0 {
		out += fmt.Sprintf(" + %d size-based", s.SizeBased)
	}
	return out
}

func firstSentence(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.Index(s, ": "); i > 0 && i < 60 {
		return s[:i]
	}
	if i := strings.Index(s, ". "); i > 0 {
		return s[:i]
	}
	return s
}
