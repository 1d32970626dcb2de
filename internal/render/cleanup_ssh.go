package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/result"
)

// SSHCleanupText writes, per target, what happened to each work directory
// found there.
func SSHCleanupText(w io.Writer, rep *result.SSHCleanup) error {
	for _, t := range rep.Targets {
		if t.Error != "" {
			fmt.Fprintf(w, "%s: NOT cleaned: %s\n", Terminal(t.Target), Terminal(t.Error))
			continue
		}
		if len(t.Dirs) == 0 {
			fmt.Fprintf(w, "%s: nothing left by storbench\n", Terminal(t.Target))
			continue
		}
		fmt.Fprintf(w, "%s:\n", Terminal(t.Target))
		for _, d := range t.Dirs {
			switch {
			case d.Kept != "":
				fmt.Fprintf(w, "  kept %s: %s\n", Terminal(d.Dir), Terminal(d.Kept))
			case rep.DryRun:
				fmt.Fprintf(w, "  would remove %s (%d files; run %s: %s)\n", Terminal(d.Dir), len(d.Files), Terminal(d.RunID), Terminal(d.Why))
			case d.Removed:
				fmt.Fprintf(w, "  removed %s (%d files; run %s: %s)\n", Terminal(d.Dir), len(d.Files), Terminal(d.RunID), Terminal(d.Why))
			default:
				fmt.Fprintf(w, "  NOT removed %s\n", Terminal(d.Dir))
			}
		}
	}
	return nil
}
