// Package reportcmd implements "storbench report": a comparison with
// verdicts, charts, stability warnings and each target's environment, as
// terminal text, Markdown, self-contained HTML, JSON or CSV.
package reportcmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.ReportRequest
	out    string
	format string
}

// NewCommand returns the report command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "report RUN-ID... [-o report.html|report.md|report.json|report.csv]",
		Short: "Write a report of stored runs: verdicts, charts, efficiency, stability, environment",
		Long: `Write a report of one or more runs: verdicts first, then per workload a
table and a bar chart, latency percentiles (HTML), efficiency against the
baseline, change between rounds, outliers, stability warnings and the
environment of every target.

The format follows the -o file's extension: .html (one self-contained page
with SVG charts that opens offline), .md (Markdown for GitHub issues and blog
posts), .json and .csv (stable schemas, see docs/analysis.md). Without -o the
report is printed for the terminal. Verdicts are those the runs hold data for
unless --for names them.`,
		Example: `  storbench report 20261122-1423 -o report.html
  storbench report RUN1 RUN2 --group-by storage --baseline storage=nvme -o report.md
  storbench report RUN --for etcd -o etcd.json`,
		Args: cli.RunIDArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.req.GroupBy, "group-by", "", "group targets by this result label (e.g. storage, node) and average each group")
	fl.StringVar(&f.req.Baseline, "baseline", "", "show efficiency against KEY=VALUE (a label) or a target name")
	fl.StringVar(&f.req.Round, "round", "", "report only this round (isolated, parallel, contention)")
	fl.StringSliceVar(&f.req.For, "for", nil, "verdicts to include: "+strings.Join(analysis.Kinds, ", ")+" (default: every one the runs hold data for)")
	fl.StringVarP(&f.out, "output", "o", "", "write the report to this file; the extension chooses the format (.html, .md, .json, .csv, .txt); a bare format name (json, markdown, csv, html, text) prints it")
	fl.StringVar(&f.format, "format", "", "format when -o has no known extension or is -: html, markdown, json, csv, text")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		format, path, err := render.ReportFormat(f.out, f.format)
		if err != nil {
			return cli.Usage(err)
		}
		st := d.LazyStore() // a refused request creates no database
		defer st.Close()
		f.req.RunIDs = args
		rep, err := storbench.Report(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		return cli.WriteReport(d, rep, format, path)
	}
	return cmd
}
