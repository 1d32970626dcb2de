// Package appfitcmd implements the hidden "storbench appfit-probe": one
// client of the app-fitness probe (internal/appfit, through the library), run by storbench
// itself on a host, in a pod or over SSH. It prints its answer as JSON.
package appfitcmd

import (
	"encoding/json"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/storbench"
)

// NewCommand returns the probe command.
func NewCommand(d cli.Deps) *cobra.Command {
	j := storbench.AppProbeRequest{}
	cmd := &cobra.Command{Use: storbench.AppProbeCommand, Hidden: true, Args: cobra.NoArgs,
		Short: "Run one client of the app-fitness probe (storbench runs it itself)"}
	fl := cmd.Flags()
	fl.StringVar(&j.Role, "role", "", "first, second, sqlite, sqlite-check, remove or answer")
	fl.StringVar(&j.Dir, "dir", "", "the probe's work directory")
	fl.DurationVar(&j.Timeout, "timeout", 0, "each wait for the other client")
	fl.StringVar(&j.Journal, "journal", storbench.AppProbeJournal, "sqlite: journal mode")
	fl.StringVar(&j.Synchronous, "synchronous", storbench.AppProbeSynchronous, "sqlite: synchronous setting")
	fl.DurationVar(&j.Duration, "duration", 0, "sqlite: how long to commit")
	fl.IntVar(&j.MaxCommits, "max-commits", 0, "sqlite: stop after this many commits (0: no limit)")
	fl.IntVar(&j.Client, "client", 0, "sqlite: this client's number")
	fl.StringVar(&j.Of, "of", "", "answer: the role whose kept answer to print again")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		v, err := storbench.AppProbe(cmd.Context(), j)
		if err != nil {
			return err
		}
		return json.NewEncoder(d.Out).Encode(v)
	}
	return cmd
}
