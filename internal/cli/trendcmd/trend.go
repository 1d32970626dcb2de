// Package trendcmd implements "storbench trend": each target × workload
// judged against its own history, with exit codes for cron and CI.
package trendcmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/trend"
)

type flags struct {
	req    storbench.TrendRequest
	labels []string
	since  string
	output string
}

// NewCommand returns the trend command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "trend",
		Short: "Judge each target × workload against its own history: baseline, noise band, regressions",
		Long: `Judge the latest results of each target × workload × round against the
earlier ones: the baseline is their median, the noise band comes from their
spread, and a step or a steady drift beyond the noise is a regression. A drop
seen only in the latest run (or two) is a warning until more runs confirm it.
Series with too little history say so. See docs/trend.md.

Exit codes: 0 nothing wrong (or too little history), 3 a warning, 4 a
regression, 2 a bad request (such as a filter no result matches).`,
		Example: `  storbench trend
  storbench trend --target nas-disk-2 --since 90d
  storbench trend --label storage=hdd --workload rand-write-4k-qd32 --output json`,
		Args: cobra.NoArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.req.Target, "target", "", "only this target")
	fl.StringVar(&f.req.Workload, "workload", "", "only this workload")
	fl.StringVar(&f.req.Round, "round", "", "only this round (isolated, parallel, contention)")
	fl.StringArrayVar(&f.labels, "label", nil, "only results with this label, KEY=VALUE (repeatable)")
	fl.StringVar(&f.since, "since", "", "only results measured since: a span (90d, 12w, 36h), a date (2026-03-02) or an RFC 3339 time")
	fl.StringVar(&f.req.Metric, "metric", "", "judge this metric (iops, bw, lat_mean, lat_p99...) instead of each workload's primary one")
	fl.IntVar(&f.req.Options.MinHistory, "min-history", trend.DefaultMinHistory, "earlier runs needed before a series is judged")
	check := cli.OutputFlag(cmd, &f.output, "table", "json", "markdown")
	cmd.PreRunE = func(*cobra.Command, []string) error { return check() }
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		labels, err := cli.ParseLabels(f.labels)
		if err != nil {
			return err
		}
		f.req.Labels = labels
		if f.since != "" {
			if f.req.Since, err = storbench.ParseSince(f.since, time.Now(), time.Local); err != nil {
				return cli.FromLibrary(err)
			}
		}
		if f.req.Options.MinHistory < 1 {
			return cli.Usagef("--min-history %d: give at least 1", f.req.Options.MinHistory)
		}
		st, err := d.OpenStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		rep, err := storbench.Trend(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		js := make([]trend.Assessment, len(rep.Series))
		for i, s := range rep.Series {
			js[i] = s.Assessment
		}
		switch f.output {
		case "json":
			err = render.JSON(d.Out, rep)
		case "markdown":
			err = render.TrendMarkdown(d.Out, js)
		default:
			err = render.TrendText(d.Out, js, d.Color(d.Out))
		}
		if err != nil {
			return err
		}
		switch rep.Verdict {
		case trend.Regression:
			return &cli.ExitError{Code: cli.ExitVerdictFail, Err: fmt.Errorf("trend: %d regression(s)", rep.Count(trend.Regression))}
		case trend.Warning:
			return &cli.ExitError{Code: cli.ExitWarn, Err: fmt.Errorf("trend: %d warning(s)", rep.Count(trend.Warning))}
		}
		return nil
	}
	return cmd
}
