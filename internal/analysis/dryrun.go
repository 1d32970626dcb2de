package analysis

import "time"

// DryRun is a raw fio job checked for one target before the run: what
// storbench run --fio-job --dry-run shows. internal/storbench builds it
// from fio's reading of the job and internal/safety's verdict.
type DryRun struct {
	Target string
	// Text is the job file fio would run; Jobs are fio's own reading of
	// it, one a job section.
	Text []byte
	Jobs []DryRunJob
	// Touches are the files and devices the jobs read or write; Writers
	// name the jobs that write.
	Touches []DryRunTouch
	Writers []string
	// WorkDir is storbench's work directory, shown as <work>.
	WorkDir string
	// TimeBased is the time-based jobs' ramp and runtime added up;
	// UntilDone counts the jobs that run until their I/O is done.
	TimeBased time.Duration
	UntilDone int
}

// DryRunJob is one job section as fio reads it.
type DryRunJob struct {
	Section string
	// Options are fio's reading of the section, in fio's words.
	Options string
}

// DryRunTouch is one file or device a job reads or writes.
type DryRunTouch struct {
	Job    string
	Path   string
	Writes bool
	// Own says the path is storbench's (in its work directory); Kind
	// says what else it is (a regular file, a block device...).
	Own  bool
	Kind string
}
