// Package showcmd implements "storbench show": one run's results.
package showcmd

import (
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/contention"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

type flags struct {
	output string
}

// NewCommand returns the show command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "show RUN-ID",
		Short: "Show a stored run: IOPS, MB/s and latency percentiles per workload",
		Args:  cobra.ExactArgs(1),
	}
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		ctx := cmd.Context()
		st, err := d.OpenStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		run, err := st.Run(ctx, args[0])
		if err != nil {
			return cli.NotFound(err)
		}
		proc.Reader{}.Abandon(run)
		results, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}})
		if err != nil {
			return err
		}
		if results == nil {
			results = []result.Result{}
		}
		if f.output == "json" {
			return render.JSON(d.Out, struct {
				Run     *result.Run     `json:"run"`
				Results []result.Result `json:"results"`
				// Contention pairs the probe alone and under load.
				Contention []contention.Report `json:"contention,omitempty"`
			}{run, results, contention.Reports(results)})
		}
		if err := render.RunHeader(d.Out, run); err != nil {
			return err
		}
		if len(results) == 0 {
			_, err := d.Out.Write([]byte("No results stored for this run.\n"))
			return err
		}
		if err := render.ResultsTable(d.Out, results); err != nil {
			return err
		}
		return render.ContentionSection(d.Out, results)
	}
	return cmd
}
