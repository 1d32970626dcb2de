package render

import (
	"fmt"
	"io"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
)

// DryRun says what a raw fio job would do on a target: the file fio would
// run, fio's reading of it, the files and devices it touches, the safety
// verdict and the estimated time.
func DryRun(w io.Writer, j analysis.DryRun) {
	fmt.Fprintf(w, "Target %s: fio would run this job file (in %s):\n\n", j.Target, "storbench's work directory")
	for _, l := range strings.SplitAfter(string(j.Text), "\n") {
		if l != "" {
			fmt.Fprintf(w, "    %s", l)
		}
	}
	fmt.Fprintf(w, "\nAs fio reads it:\n")
	for _, job := range j.Jobs {
		fmt.Fprintf(w, "  [%s] %s\n", job.Section, job.Options)
	}
	fmt.Fprintf(w, "\nFiles and devices:\n")
	for _, tc := range j.Touches {
		what := "reads"
		if tc.Writes {
			what = "writes"
		}
		where := "in storbench's work directory, removed afterwards"
		if !tc.Own {
			where = tc.Kind
		}
		path := tc.Path
		if tc.Own && strings.HasPrefix(path, j.WorkDir) {
			path = "<work>" + strings.TrimPrefix(path, j.WorkDir)
		}
		fmt.Fprintf(w, "  %s %s %s (%s)\n", tc.Job, what, path, where)
	}
	fmt.Fprintf(w, "\nSafety: allowed")
	if len(j.Writers) > 0 {
		fmt.Fprintf(w, " (writing jobs: %s)", strings.Join(j.Writers, ", "))
	}
	est := "at most " + j.TimeBased.String()
	if j.UntilDone > 0 {
		est += fmt.Sprintf(" for the time-based jobs, plus %d job(s) that run until their I/O is done", j.UntilDone)
	}
	fmt.Fprintf(w, "\nEstimated time: %s\n", est)
}
