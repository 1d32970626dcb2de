// Package app wires storbench's commands together. Main is the only place
// that exits the process.
package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/cli/appfitcmd"
	"github.com/storbench/storbench/internal/cli/classescmd"
	"github.com/storbench/storbench/internal/cli/cleanupcmd"
	"github.com/storbench/storbench/internal/cli/comparecmd"
	"github.com/storbench/storbench/internal/cli/doctorcmd"
	"github.com/storbench/storbench/internal/cli/exportcmd"
	"github.com/storbench/storbench/internal/cli/healthcmd"
	"github.com/storbench/storbench/internal/cli/importcmd"
	"github.com/storbench/storbench/internal/cli/qualifycmd"
	"github.com/storbench/storbench/internal/cli/reportcmd"
	"github.com/storbench/storbench/internal/cli/runcmd"
	"github.com/storbench/storbench/internal/cli/runscmd"
	"github.com/storbench/storbench/internal/cli/servecmd"
	"github.com/storbench/storbench/internal/cli/showcmd"
	"github.com/storbench/storbench/internal/cli/suitescmd"
	"github.com/storbench/storbench/internal/cli/trendcmd"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/version"
)

// StopSignals cancel whatever storbench is doing; it then cleans up and
// exits with 128 plus the signal's number, as a shell reports a process the
// signal killed. SIGHUP is a dropped SSH session or closed terminal;
// SIGQUIT would otherwise make Go print every goroutine and exit at once.
var StopSignals = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT}

// Main runs storbench with the process's arguments and exits.
func Main() {
	ctx, cancel := context.WithCancel(context.Background())
	// SIGPIPE is ignored, by storbench and (inherited through exec) by fio:
	// output to a reader that went away (a pipe into a closed session, or
	// storbench killed outright while fio reports to it) fails as an error
	// instead of killing the writer before it cleans up. fio killed that
	// way would leave its job processes writing as orphans.
	signal.Ignore(syscall.SIGPIPE)
	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, StopSignals...)
	var first atomic.Int32
	go func() {
		for s := range sigs {
			// Later signals are swallowed: the cleanup under way is the
			// quickest way out.
			first.CompareAndSwap(0, int32(s.(syscall.Signal)))
			cancel()
		}
	}()
	code := RunAs(ctx, filepath.Base(os.Args[0]), cli.Streams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}, os.Args[1:], os.Getenv)
	if n := first.Load(); n != 0 && code != cli.ExitOK {
		code = 128 + int(n)
	}
	os.Exit(code)
}

// Run runs storbench and returns its exit code.
func Run(ctx context.Context, streams cli.Streams, args []string, getenv func(string) string) int {
	return RunAs(ctx, "storbench", streams, args, getenv)
}

// KubectlPlugin is the name kubectl looks for on PATH to run
// `kubectl storbench ...`: the same binary under another name (the release
// archives hold both).
const KubectlPlugin = "kubectl-storbench"

// RunAs is Run for a binary invoked as program (its file name): as
// KubectlPlugin, help and usage name the command `kubectl storbench`.
func RunAs(ctx context.Context, program string, streams cli.Streams, args []string, getenv func(string) string) int {
	root := NewRootCommand(cli.Deps{Streams: streams, Globals: &cli.Globals{}, Getenv: getenv})
	if program == KubectlPlugin {
		root.Use = KubectlPlugin
		root.Annotations = map[string]string{cobra.CommandDisplayNameAnnotation: "kubectl storbench"}
	}
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return cli.ExitOK
	}
	fmt.Fprintf(streams.ErrOut, "storbench: %v\n", err)
	var ee *cli.ExitError
	if errors.As(err, &ee) {
		return ee.Code
	}
	if ctx.Err() != nil {
		return cli.ExitInterrupted
	}
	return cli.ExitFailed
}

// NewRootCommand builds the command tree.
func NewRootCommand(d cli.Deps) *cobra.Command {
	root := &cobra.Command{
		Use:           "storbench",
		Short:         "Benchmark and qualify storage for small Kubernetes clusters and their hosts",
		Version:       version.Version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetVersionTemplate(versionText(version.Get()))
	root.SetIn(d.In)
	root.SetOut(d.Out)
	root.SetErr(d.ErrOut)
	root.PersistentFlags().StringVar(&d.Globals.DB, "db", "", "results database (default $XDG_DATA_HOME/storbench/results.db)")
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return cli.Usage(fmt.Errorf("%s: %w (see %s --help)", c.CommandPath(), tooLargeDuration(err), c.CommandPath()))
	})
	root.AddCommand(
		suitescmd.NewCommand(d),
		runcmd.NewCommand(d),
		runscmd.NewCommand(d),
		showcmd.NewCommand(d),
		comparecmd.NewCommand(d),
		reportcmd.NewCommand(d),
		qualifycmd.NewCommand(d),
		importcmd.NewCommand(d),
		healthcmd.NewCommand(d),
		doctorcmd.NewCommand(d),
		classescmd.NewCommand(d),
		cleanupcmd.NewCommand(d),
		trendcmd.NewCommand(d),
		exportcmd.NewCommand(d),
		servecmd.NewCommand(d),
		appfitcmd.NewCommand(d),
	)
	return root
}

// durationFlagError is pflag's message for a duration flag it could not
// parse; time.ParseDuration says "invalid duration" for an overflow too.
var durationFlagError = regexp.MustCompile(`^invalid argument "(.*)" for "(.*)" flag: time: invalid duration`)

// tooLargeDuration says "too large" for a duration flag whose value is a
// well-formed duration beyond what time.Duration holds.
func tooLargeDuration(err error) error {
	m := durationFlagError.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	if _, perr := spec.ParseDuration(m[1]); perr != nil && strings.Contains(perr.Error(), "too large") {
		return fmt.Errorf("%s: %w", m[2], perr)
	}
	return err
}

// versionText is what --version prints: the version, then the commit, its
// date and the Go toolchain, one per line.
func versionText(i version.Info) string {
	commit, date := i.Commit, i.CommitDate
	if commit == "" {
		commit = "unknown"
	}
	if date == "" {
		date = "unknown"
	}
	// Braces would be read as template actions.
	esc := func(s string) string { return strings.NewReplacer("{{", "{{`{{`}}").Replace(s) }
	return esc(fmt.Sprintf("storbench %s\ncommit: %s\ncommit date: %s\ngo: %s %s\n", i.Version, commit, date, i.GoVersion, i.Platform))
}
