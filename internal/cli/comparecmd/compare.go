// Package comparecmd implements "storbench compare": stored runs side by
// side, per workload and metric, with efficiency against a baseline,
// change between rounds, the best per workload and outliers.
package comparecmd

import (
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.CompareRequest
	output string
}

// NewCommand returns the compare command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "compare RUN-ID... [--group-by KEY] [--baseline KEY=VALUE|TARGET] [--round NAME]",
		Short: "Compare stored runs side by side: efficiency, rounds, best per workload, outliers",
		Long: `Compare the results of one or more runs per workload and metric.

Every target is a column of its own, or, with --group-by KEY, every group of
targets sharing a label value (storage=nvme): a group's figure is the mean of
its targets' means. --baseline shows each target or group as a percentage of
the baseline (a label KEY=VALUE or a target name). Results of several rounds
(isolated, parallel, contention) show the change between rounds. The best
per workload is marked with ★; a target below 0.5x the median of its peers'
IOPS or throughput (or above 2x their p99 latency) is flagged as an outlier;
repetitions spreading more than 10% (coefficient of variation) are flagged
unstable.`,
		Example: `  storbench compare 20261122-1423 20261122-1510
  storbench compare RUN1 RUN2 RUN3 --group-by storage --baseline storage=nvme
  storbench compare RUN --baseline /mnt/nvme --output markdown
  storbench compare RUN --round parallel --output json`,
		Args: cli.RunIDArgs,
	}
	fl := cmd.Flags()
	fl.StringVar(&f.req.GroupBy, "group-by", "", "group targets by this result label (e.g. storage, node) and average each group")
	fl.StringVar(&f.req.Baseline, "baseline", "", "show efficiency against KEY=VALUE (a label) or a target name")
	fl.StringVar(&f.req.Round, "round", "", "compare only this round (isolated, parallel, contention)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json", "markdown")
	cmd.PreRunE = func(*cobra.Command, []string) error { return check() }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st := d.LazyStore() // a refused request creates no database
		defer st.Close()
		f.req.RunIDs = args
		cmp, err := storbench.Compare(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		return render.WriteReport(d.Out, &render.Report{View: cmp.View, Runs: cmp.Runs}, f.output, d.Color(d.Out))
	}
	return cmd
}
