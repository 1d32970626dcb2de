// Package exportcmd implements "storbench export": the latest results in
// another program's format (Prometheus's, for node_exporter).
package exportcmd

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/storbench"
)

type flags struct {
	req storbench.ExportRequest
}

// NewCommand returns the export command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "export [--format prometheus] FILE",
		Short: "Write the latest results for other tools: Prometheus's textfile format",
		Long: `Write the latest figure of every target, round and workload (and the verdicts
on them) in Prometheus's text format, for node_exporter's textfile collector:
the file is written beside FILE and renamed over it once complete. FILE - writes
to standard output. docs/metrics.md lists the metrics.`,
		Example: "  storbench export --format prometheus /var/lib/node_exporter/textfile_collector/storbench.prom",
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return cli.Usagef("%s: name one file to write, or - for standard output", cmd.CommandPath())
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&f.req.Format, "format", storbench.ExportPrometheus, "format to write: "+strings.Join(storbench.ExportFormats, ", "))
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		st := d.LazyStore() // a refused request creates no database
		defer st.Close()
		f.req.Path, f.req.Stdout = args[0], d.Out
		return cli.FromLibrary(storbench.Export(cmd.Context(), st, f.req))
	}
	return cmd
}
