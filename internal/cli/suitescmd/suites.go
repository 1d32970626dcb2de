// Package suitescmd implements "storbench suites": the built-in suites and
// the exact fio jobs they generate.
package suitescmd

import (
	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
)

// NewCommand returns the suites command.
func NewCommand(d cli.Deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "suites",
		Short: "List the built-in suites",
		Args:  cobra.NoArgs,
	}
	check := cli.OutputFlag(cmd, &output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		suites, err := storbench.Suites()
		if err != nil {
			return err
		}
		return render.Formatted(d.Out, output, suites, render.SuitesText)
	}
	cmd.AddCommand(newShow(d))
	return cmd
}

func newShow(d cli.Deps) *cobra.Command {
	var output string
	cmd := &cobra.Command{
		Use:   "show NAME|FILE.yaml",
		Short: "Show a suite's workloads and the exact fio job they generate",
		Args:  cobra.ExactArgs(1),
	}
	check := cli.OutputFlag(cmd, &output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		s, err := storbench.Suite(args[0])
		if err != nil {
			return cli.Usage(err)
		}
		return render.Formatted(d.Out, output, s, render.SuiteText)
	}
	return cmd
}
