// Package healthcmd implements "storbench health": device health (SMART)
// stored by imports of smartctl output.
package healthcmd

import (
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req    storbench.HealthRequest
	output string
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
	cmd.Flags().StringVar(&f.req.Target, "target", "", "only this target")
	cmd.Flags().BoolVar(&f.req.All, "all", false, "every stored record, not only the latest of each target")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		st, err := d.OpenStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		f.req.Runs = args
		hs, err := storbench.Health(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		return render.Formatted(d.Out, f.output, hs, render.StoredHealthText)
	}
	return cmd
}
