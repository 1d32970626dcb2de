package render

import (
	"fmt"
	"io"

	"github.com/storbench/storbench/internal/result"
)

// KindCleanupText renders a cleanup of registered kinds' targets.
func KindCleanupText(w io.Writer, rep *result.KindCleanup) error {
	for _, t := range rep.Targets {
		if t.Error != "" {
			fmt.Fprintf(w, "%s: NOT cleaned: %s\n", Terminal(t.Target), Terminal(t.Error))
		}
		if len(t.Leftovers) == 0 {
			if t.Error == "" {
				fmt.Fprintf(w, "%s: nothing left by storbench\n", Terminal(t.Target))
			}
			continue
		}
		fmt.Fprintf(w, "%s:\n", Terminal(t.Target))
		for _, l := range t.Leftovers {
			what := fmt.Sprintf("%s (run %s", Terminal(l.Name), Terminal(l.RunID))
			if l.Detail != "" {
				what += ": " + Terminal(l.Detail)
			}
			what += ")"
			switch {
			case rep.DryRun:
				fmt.Fprintf(w, "  would remove %s\n", what)
			case l.Removed:
				fmt.Fprintf(w, "  removed %s\n", what)
			default:
				fmt.Fprintf(w, "  NOT removed %s: %s\n", what, Terminal(l.Error))
			}
		}
	}
	return nil
}
