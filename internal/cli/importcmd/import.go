// Package importcmd implements "storbench import": other tools' outputs
// and storbench's generic CSV/JSON, stored as one run with provenance.
package importcmd

import (
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/units"
)

type flags struct {
	req     storbench.ImportRequest
	format  string
	labels  []string
	output  string
	maxSize string
	time    string
}

// NewCommand returns the import command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import fio, iozone, dd, hdparm, ceph osd bench and smartctl outputs, or a results CSV/JSON, as one run",
		Long: `Import results measured elsewhere so they can be compared with storbench's own.

Formats are detected (--format forces one): fio JSON/json+ (also --status-interval
and client/server output), fio text and terse (--minimal) output, iozone -a
tables, GNU dd and hdparm output, ceph tell osd.* bench, smartctl -a text and
--json, and storbench's CSV (header target,labels,round,workload,metric,value,unit
and an optional time) or the same fields as JSON. All files are stored as one
run, or nothing is: a file that cannot be read is reported with its line and
what was expected. CSV/JSON rows measured at different times (their time, in
RFC 3339) are stored as one run per time, each timed when it was measured;
--time gives the time of files that do not say (see docs/trend.md).
A file imported before (same SHA-256) is reported and skipped. "-" reads stdin.

Only regular files are read (and "-"): devices, pipes and directories are
refused, and so is any input larger than --max-size. A CSV is read as it
streams, so a file of millions of rows needs little memory. A file that is cut
(it ends in the middle of a line or a JSON document) gives what is complete
before the cut, says where, and the command exits 1; so does a result with a
figure no device can reach (refused, with its line).`,
		Example: `  storbench import fio-nvme.json --label node=pi4-1 --label storage=local
  storbench import results.csv --output json
  storbench import --dry-run iozone-nfs.txt smartctl-sda.txt
  storbench import old-nas-run.json --time 2026-03-02T03:00:00Z`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().StringVar(&f.format, "format", "", "read every file in this format instead of detecting it: "+importer.FormatNames())
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "add a label key=value to the run and every result (repeatable; a CSV row's own labels win)")
	cmd.Flags().StringVar(&f.req.Target, "target", "", "name the target of every result (default: what the file says, e.g. osd.N, the device or host, else the file name)")
	cmd.Flags().BoolVar(&f.req.DryRun, "dry-run", false, "parse and show what would be stored, without storing it")
	cmd.Flags().StringVar(&f.maxSize, "max-size", storbench.DefaultMaxSize, "refuse inputs larger than this (e.g. 64MiB, 2GiB)")
	cmd.Flags().StringVar(&f.time, "time", "", "when the results were measured, RFC 3339 (e.g. 2026-03-02T03:00:00Z), for files that do not say; a CSV/JSON row's own time wins")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		var err error
		f.req.Files, f.req.Stdin = args, d.In
		if f.req.Labels, err = cli.ParseLabels(f.labels); err != nil {
			return err
		}
		if f.req.Format, err = importer.ParseFormat(f.format); err != nil {
			return cli.Usage(fmt.Errorf("--format: %w", err))
		}
		if f.req.MaxSize, err = units.ParseSize(f.maxSize); err != nil || f.req.MaxSize <= 0 {
			if err == nil {
				err = fmt.Errorf("%q: give a size above 0", f.maxSize)
			}
			return cli.Usage(fmt.Errorf("--max-size: %w", err))
		}
		if f.time != "" {
			if f.req.Time, err = time.Parse(time.RFC3339Nano, f.time); err != nil {
				return cli.Usagef("--time %q: expected a time in RFC 3339, such as 2026-03-02T03:00:00Z", f.time)
			}
		}
		st := d.LazyStore() // opened once the inputs are read
		defer st.Close()
		rep, err := storbench.Import(cmd.Context(), st, f.req)
		if err != nil {
			return cli.FromLibrary(err)
		}
		if err := render.Formatted(d.Out, f.output, rep, render.ImportText); err != nil {
			return err
		}
		if err := storbench.ImportIncomplete(rep); err != nil {
			return &cli.ExitError{Code: cli.ExitFailed, Err: err}
		}
		return nil
	}
	return cmd
}
