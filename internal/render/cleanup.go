package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/result"
)

// KubeCleanupText writes one line per object found (deleted, would be
// deleted, or not deleted and why), the namespaces deleted, notes, and the
// released volumes with the command that removes each.
func KubeCleanupText(w io.Writer, rep *result.KubeCleanup) error {
	where := "all namespaces"
	if rep.Namespace != "" {
		where = "namespace " + rep.Namespace
	}
	if len(rep.Found) == 0 {
		fmt.Fprintf(w, "No storbench pods or PVCs in %s.\n", where)
	}
	verb := "deleted"
	if rep.DryRun {
		verb = "would delete"
	}
	failed := map[string]string{}
	for _, f := range rep.Failed {
		failed[f.String()] = f.Error
	}
	for _, o := range rep.Found {
		line := fmt.Sprintf("%s %s", verb, o)
		if o.RunID != "" {
			line += " (run " + o.RunID
			if o.Target != "" {
				line += ", " + o.Target
			}
			line += ")"
		}
		if e, bad := failed[o.String()]; bad {
			line = fmt.Sprintf("NOT deleted %s: %s", o, e)
		}
		fmt.Fprintln(w, line)
	}
	for _, ns := range rep.Namespaces {
		fmt.Fprintf(w, "deleted namespace %s\n", ns)
	}
	for _, n := range rep.Notes {
		fmt.Fprintf(w, "note: %s\n", n)
	}
	for _, v := range rep.Volumes {
		fmt.Fprintf(w, "PV %s (class %s) is %s after storbench's claim %s: remove it with: %s\n", v.Name, v.Class, v.Phase, v.Claim, v.Command)
	}
	return nil
}

// LocalCleanupText writes each abandoned run with what happened to it and
// to each of its work directories.
func LocalCleanupText(w io.Writer, rep *result.LocalCleanup) error {
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
		fmt.Fprintf(w, "run %s (%s): %s\n", Terminal(r.ID), Terminal(r.Why), verb)
		for _, d := range r.Dirs {
			switch {
			case d.Kept != "":
				fmt.Fprintf(w, "  kept %s: %s\n", Terminal(d.Path), Terminal(d.Kept))
			case rep.DryRun:
				fmt.Fprintf(w, "  would remove %s (%d files)\n", Terminal(d.Path), len(d.Files))
			default:
				fmt.Fprintf(w, "  removed %s (%d files)\n", Terminal(d.Path), len(d.Files))
			}
		}
	}
	return nil
}
