// Package runscmd implements "storbench runs": stored runs, newest first.
package runscmd

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

type flags struct {
	output string
	limit  int
	suite  string
	status string
}

// NewCommand returns the runs command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "runs",
		Short: "List stored runs, newest first",
		Args:  cobra.NoArgs,
	}
	cmd.Flags().IntVar(&f.limit, "limit", 50, "show at most this many runs (0: all)")
	cmd.Flags().StringVar(&f.suite, "suite", "", "only runs of this suite")
	cmd.Flags().StringVar(&f.status, "status", "", "only runs with this status: complete, failed, interrupted, running, abandoned (running, but its storbench process is gone)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		status := result.Status(f.status)
		switch status {
		case "", result.StatusComplete, result.StatusFailed, result.StatusInterrupted, result.StatusRunning, result.StatusAbandoned:
		default:
			return cli.Usagef("--status %q: choose complete, failed, interrupted, running or abandoned", f.status)
		}
		st, err := d.OpenStore(cmd.Context())
		if err != nil {
			return err
		}
		defer st.Close()
		filter := store.RunFilter{Limit: f.limit, Suite: f.suite, Status: status}
		// Whether a run stored as running is abandoned is judged now: both
		// statuses are read from running runs and filtered here.
		judged := status == result.StatusRunning || status == result.StatusAbandoned
		if judged {
			filter.Limit, filter.Status = 0, ""
		}
		all, err := st.Runs(cmd.Context(), filter)
		if err != nil {
			return err
		}
		runs := all[:0]
		for _, r := range all {
			proc.Reader{}.Abandon(&r)
			if judged && (r.Status != status || (f.limit > 0 && len(runs) == f.limit)) {
				continue
			}
			runs = append(runs, r)
		}
		if f.output == "json" {
			if runs == nil {
				runs = []result.Run{}
			}
			return render.JSON(d.Out, runs)
		}
		if len(runs) == 0 {
			_, err := fmt.Fprintf(d.Out, "No runs stored in %s yet: try storbench run --suite quick --target /tmp\n", st.Path())
			return err
		}
		return render.RunsTable(d.Out, runs)
	}
	return cmd
}
