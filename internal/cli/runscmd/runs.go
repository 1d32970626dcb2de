// Package runscmd implements "storbench runs": stored runs, newest first.
package runscmd

import (
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.RunsRequest
	output string
}

// NewCommand returns the runs command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().IntVar(&f.req.Limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&f.req.Suite, "suite", "", "only runs of this suite")
	cmd.Flags().StringVar((*string)(&f.req.Status), "status", "", "only runs with this status: complete, failed, interrupted, running, abandoned (running, but its storbench process is gone)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.PreRunE = func(*cobra.Command, []string) error { return check() }
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st := d.LazyStore() // a refused request creates no database
		defer st.Close()
		runs, err := storbench.Runs(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		if f.output == "json" {
			return render.JSON(d.Out, runs)
		}
		return render.RunsTable(d.Out, runs, st.Path())
	}
	return cmd
}
