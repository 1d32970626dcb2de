// Package healthcmd implements "storbench health": device health (SMART)
// stored by imports of smartctl output.
package healthcmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/importcmd"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

type flags struct {
	output string
	target string
	all    bool
}

// NewCommand returns the health command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "health [RUN-ID...]",
		Short: "Show device health (SMART) imported from smartctl: the latest record of each device, or those of the given runs",
		Example: `  storbench import smartctl-sda.txt --target pi4-1:/dev/sda
  storbench health
  storbench health --target pi4-1:/dev/sda --all --output json`,
	}
	cmd.Flags().StringVar(&f.target, "target", "", "only this target")
	cmd.Flags().BoolVar(&f.all, "all", false, "every stored record, not only the latest of each target")
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
		filter := store.HealthFilter{Target: f.target, Latest: !f.all && len(args) == 0}
		for _, a := range args {
			run, err := st.Run(ctx, a)
			if err != nil {
				return cli.NotFound(err)
			}
			filter.RunIDs = append(filter.RunIDs, run.ID)
		}
		hs, err := st.Health(ctx, filter)
		if err != nil {
			return err
		}
		if hs == nil {
			hs = []result.Health{}
		}
		if f.output == "json" {
			return render.JSON(d.Out, hs)
		}
		if len(hs) == 0 {
			_, err := fmt.Fprintln(d.Out, "No device health stored: import smartctl -a or smartctl --json output with storbench import.")
			return err
		}
		return importcmd.HealthTable(d.Out, hs)
	}
	return cmd
}
