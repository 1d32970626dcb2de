package result

import "fmt"

// ImportReport is what an import did (or would do, on a dry run); its JSON
// is what storbench import --output json prints.
type ImportReport struct {
	// RunID is the new run; empty on a dry run or when every file had been
	// imported before.
	RunID string `json:"run_id"`
	// MoreRuns are the runs of CSV/JSON rows measured at other times than
	// RunID's (one run per measured time).
	MoreRuns   []string             `json:"more_runs,omitempty"`
	DryRun     bool                 `json:"dry_run"`
	Files      []ImportedFileReport `json:"files"`
	Duplicates []ImportedFile       `json:"duplicates"`
	Results    int                  `json:"results"`
	Health     []Health             `json:"health"`
	Preview    []Result             `json:"preview,omitempty"`
	// SameTwice says which inputs were skipped because an earlier one had
	// the same content.
	SameTwice []string `json:"-"`
}

// ImportedFileReport describes one imported file; Formats are the
// formats read in it (importer.Format values).
type ImportedFileReport struct {
	File        string   `json:"file"`
	SHA256      string   `json:"sha256"`
	Formats     []string `json:"formats"`
	Tool        string   `json:"tool"`
	ToolVersion string   `json:"tool_version,omitempty"`
	Results     int      `json:"results"`
	Health      int      `json:"health_records"`
	Rows        int      `json:"rows"`
	Skipped     []int    `json:"skipped_lines,omitempty"`
	Notes       []string `json:"notes,omitempty"`
	// Problems say what was cut, refused, skipped or flagged, with lines.
	Problems []ImportProblem `json:"problems,omitempty"`
	Cut      bool            `json:"cut"`
	Refused  int             `json:"refused"`
}

// ProblemKind says what happened to part of an input.
type ProblemKind string

// The kinds of problems an import reports.
const (
	// ProblemCut: the input ends in the middle of something (a truncated
	// file); what follows the point named was not read.
	ProblemCut ProblemKind = "cut"
	// ProblemRefused: a result was read but not kept, because a figure is
	// outside what any storage device can do, or negative.
	ProblemRefused ProblemKind = "refused"
	// ProblemSkipped: a block of the input looked like output of a known
	// tool but could not be read; the rest of the file was.
	ProblemSkipped ProblemKind = "skipped"
	// ProblemInconsistent: a result's figures disagree with each other
	// (bandwidth against IOPS times block size, I/O count against runtime);
	// it is kept as the file says, and flagged with the numbers.
	ProblemInconsistent ProblemKind = "inconsistent"
)

// ImportProblem is one thing an import did not take as it was, with
// where.
type ImportProblem struct {
	Line int         `json:"line,omitempty"`
	Kind ProblemKind `json:"kind"`
	Msg  string      `json:"message"`
}

func (p ImportProblem) String() string {
	if p.Line > 0 {
		return fmt.Sprintf("line %d: %s: %s", p.Line, p.Kind, p.Msg)
	}
	return fmt.Sprintf("%s: %s", p.Kind, p.Msg)
}
