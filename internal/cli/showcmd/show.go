// Package showcmd implements "storbench show": one run's results.
package showcmd

import (
	"errors"
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

// NewCommand returns the show command.
func NewCommand(d cli.Deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show RUN-ID",
		Short: "Show a stored run: IOPS, MB/s and latency percentiles per workload",
		Args:  cobra.ExactArgs(1),
	}
	check := cli.OutputFlag(cmd, &output, "table", "json")
	cmd.PreRunE = func(*cobra.Command, []string) error { return check() }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st := d.LazyStore()
		defer st.Close()
		detail, err := storbench.Show(cmd.Context(), st, storbench.ShowRequest{RunID: args[0]})
		if err != nil {
			return cli.FromLibrary(err)
		}
		if output == "json" {
			return render.JSON(d.Out, detail)
		}
		return errors.Join(render.RunDetail(d.Out, detail.Run, detail.Results, detail.Contention), render.SweepSection(d.Out, detail.Sweeps), render.Explained(d.Out, detail.Links, detail.Breakdowns), render.AppFit(d.Out, detail.Apps), render.OSDVerdicts(d.Out, detail.OSDs), render.BrickVerdicts(d.Out, detail.Bricks))
	}
	return cmd
}
