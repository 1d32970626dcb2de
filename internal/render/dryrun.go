package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/engine"
)

// DryRun says what a raw fio job would do on a target, judged before the
// run: the file fio would run, fio's reading of it, the files and devices
// it touches, the safety verdict and the estimated time (timeBased for the
// time-based jobs, untilDone jobs that run until their I/O is done).
func DryRun(w io.Writer, target string, j *engine.Judged, timeBased time.Duration, untilDone int) {
	fmt.Fprintf(w, "Target %s: fio would run this job file (in %s):\n\n", target, "storbench's work directory")
	for _, l := range strings.SplitAfter(string(j.Text), "\n") {
		if l != "" {
			fmt.Fprintf(w, "    %s", l)
		}
	}
	fmt.Fprintf(w, "\nAs fio reads it:\n")
	for _, job := range j.Reading.Jobs {
		fmt.Fprintf(w, "  [%s] %s\n", job.Section, job.String())
	}
	fmt.Fprintf(w, "\nFiles and devices:\n")
	for _, tc := range j.Verdict.Touches {
		what := "reads"
		if tc.Writes {
			what = "writes"
		}
		where := "in storbench's work directory, removed afterwards"
		if !tc.Own {
			where = tc.Kind.String()
		}
		path := tc.Path
		if tc.Own && strings.HasPrefix(path, j.WorkDir) {
			path = "<work>" + strings.TrimPrefix(path, j.WorkDir)
		}
		fmt.Fprintf(w, "  %s %s %s (%s)\n", tc.Job, what, path, where)
	}
	fmt.Fprintf(w, "\nSafety: allowed")
	if len(j.Verdict.Writers) > 0 {
		fmt.Fprintf(w, " (writing jobs: %s)", strings.Join(j.Verdict.Writers, ", "))
	}
	est := "at most " + timeBased.String()
	if untilDone > 0 {
		est += fmt.Sprintf(" for the time-based jobs, plus %d job(s) that run until their I/O is done", untilDone)
	}
	fmt.Fprintf(w, "\nEstimated time: %s\n", est)
}
