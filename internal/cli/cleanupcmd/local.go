package cleanupcmd

import (
	"context"
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/abandon"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/store"
)

// LocalReport is what cleanup did on this host.
type LocalReport struct {
	DryRun bool          `json:"dry_run"`
	Runs   []abandon.Run `json:"abandoned_runs"`
}

func runLocal(ctx context.Context, d cli.Deps, f *flags) error {
	st, err := d.OpenStore(ctx)
	if err != nil {
		return err
	}
	defer st.Close()
	runs, err := abandon.Find(ctx, st, proc.Reader{}, f.runID)
	if err != nil {
		return cli.NotFound(err)
	}
	if runs == nil {
		runs = []abandon.Run{}
	}
	if st.ReadOnly() && !f.dryRun && len(runs) > 0 {
		// Files removed from a run the store cannot then mark would look
		// like a run still holding them.
		return &store.ReadOnlyError{Path: st.Path()}
	}
	var cleanErr error
	if !f.dryRun {
		// Removing must finish even after Ctrl-C.
		cleanErr = abandon.Clean(context.WithoutCancel(ctx), st, runs)
	}
	rep := LocalReport{DryRun: f.dryRun, Runs: runs}
	if f.output == "json" {
		err = render.JSON(d.Out, rep)
	} else {
		err = writeLocal(d.Out, rep)
	}
	if cleanErr != nil {
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("cleanup: %w", cleanErr)}
	}
	return err
}

func writeLocal(w io.Writer, rep LocalReport) error {
	if len(rep.Runs) == 0 {
		_, err := fmt.Fprintln(w, "No abandoned runs: every run stored as running still has its storbench process.")
		return err
	}
	for _, r := range rep.Runs {
		verb := "marked abandoned"
		if rep.DryRun {
			verb = "would mark abandoned"
		} else if !r.Marked {
			verb = "NOT marked abandoned"
		}
		fmt.Fprintf(w, "run %s (%s): %s\n", render.Terminal(r.ID), render.Terminal(r.Why), verb)
		for _, d := range r.Dirs {
			switch {
			case d.Kept != "":
				fmt.Fprintf(w, "  kept %s: %s\n", render.Terminal(d.Path), render.Terminal(d.Kept))
			case rep.DryRun:
				fmt.Fprintf(w, "  would remove %s (%d files)\n", render.Terminal(d.Path), len(d.Files))
			default:
				fmt.Fprintf(w, "  removed %s (%d files)\n", render.Terminal(d.Path), len(d.Files))
			}
		}
	}
	return nil
}
