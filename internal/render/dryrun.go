package render

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/safety"
)

// DryRunView is a raw fio job judged for one target before the run.
type DryRunView struct {
	Target string
	// Text is the job file fio would run, Reading fio's own reading of it.
	Text    []byte
	Reading *fio.Reading
	Verdict *safety.JobVerdict
	// WorkDir is storbench's work directory, shown as <work>.
	WorkDir string
	// TimeBased is the time-based jobs' ramp and runtime added up;
	// UntilDone counts the jobs that run until their I/O is done.
	TimeBased time.Duration
	UntilDone int
}

// DryRun says what a raw fio job would do on a target: the file fio would
// run, fio's reading of it, the files and devices it touches, the safety
// verdict and the estimated time.
func DryRun(w io.Writer, j DryRunView) {
	fmt.Fprintf(w, "Target %s: fio would run this job file (in %s):\n\n", j.Target, "storbench's work directory")
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
	est := "at most " + j.TimeBased.String()
	if j.UntilDone > 0 {
		est += fmt.Sprintf(" for the time-based jobs, plus %d job(s) that run until their I/O is done", j.UntilDone)
	}
	fmt.Fprintf(w, "\nEstimated time: %s\n", est)
}
