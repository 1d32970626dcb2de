// Package suitescmd implements "storbench suites": the built-in suites and
// the exact fio jobs they generate.
package suitescmd

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/units"
)

type flags struct {
	output string
}

// NewCommand returns the suites command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "suites",
		Short: "List the built-in suites",
		Args:  cobra.NoArgs,
	}
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		return list(d, f)
	}
	cmd.AddCommand(newShow(d))
	return cmd
}

type suiteJSON struct {
	*spec.Suite
	EstimatedSeconds float64  `json:"estimated_seconds"`
	FioJob           string   `json:"fio_job,omitempty"`
	FioArgs          []string `json:"fio_args,omitempty"`
}

func list(d cli.Deps, f *flags) error {
	var suites []*spec.Suite
	for _, n := range spec.BuiltinNames {
		s, err := spec.Builtin(n)
		if err != nil {
			return err
		}
		suites = append(suites, s)
	}
	if f.output == "json" {
		out := make([]suiteJSON, 0, len(suites))
		for _, s := range suites {
			out = append(out, suiteJSON{Suite: s, EstimatedSeconds: s.Duration().Seconds()})
		}
		return render.JSON(d.Out, out)
	}
	tw := tabwriter.NewWriter(d.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SUITE\tWORKLOADS\tFILE\tTIME\tDESCRIPTION")
	for _, s := range suites {
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\n", s.Name, len(s.Workloads), units.Bytes(s.MaxFileSize()), estimate(s), firstSentence(s.Description))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintln(d.Out, "\nstorbench suites show NAME prints a suite's workloads and the fio job it runs.")
	return err
}

func newShow(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "show NAME|FILE.yaml",
		Short: "Show a suite's workloads and the exact fio job they generate",
		Args:  cobra.ExactArgs(1),
	}
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		s, err := spec.Resolve(args[0])
		if err != nil {
			return cli.Usage(err)
		}
		job := fio.FromSuite(s, fio.File{Name: "TARGET/storbench-RUNID/" + "storbench-test.dat"}, "")
		if f.output == "json" {
			return render.JSON(d.Out, suiteJSON{Suite: s, EstimatedSeconds: s.Duration().Seconds(), FioJob: job.String(), FioArgs: job.Args()})
		}
		return show(d, s, job)
	}
	return cmd
}

func show(d cli.Deps, s *spec.Suite, job fio.Job) error {
	w := d.Out
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
	_, err := fmt.Fprint(w, job.String())
	return err
}

func estimate(s *spec.Suite) string {
	d := s.Duration()
	sized := 0
	for _, w := range s.Workloads {
		if w.Runtime == 0 {
			sized++
		}
	}
	out := d.String()
	if sized > 0 {
		out += fmt.Sprintf(" + %d size-based", sized)
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
