// Package store keeps runs and results. Store is the contract; SQLite is the
// implementation. No other package knows SQL.
package store

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Reader reads what is stored. Analyses, reports and every other consumer
// depend on it, never on the SQLite type.
type Reader interface {
	// Run returns the run with this ID or unique ID prefix.
	Run(ctx context.Context, idOrPrefix string) (*result.Run, error)
	// Runs lists runs, newest first.
	Runs(ctx context.Context, f RunFilter) ([]result.Run, error)
	// Results returns results in the order they were stored, without raw fio
	// output (see RawFioJSON).
	Results(ctx context.Context, f ResultFilter) ([]result.Result, error)
	// RawFioJSON returns fio's original JSON for a result, if kept.
	RawFioJSON(ctx context.Context, resultID int64) ([]byte, error)
	// Figures returns the compact figures of the results f selects, in the
	// order they were stored; callers must not modify their Labels.
	Figures(ctx context.Context, f ResultFilter) ([]result.Figures, error)
	// Health returns stored device health records, oldest first.
	Health(ctx context.Context, f HealthFilter) ([]result.Health, error)
	// RunImports returns the provenance of the files a run was imported from.
	RunImports(ctx context.Context, runID string) ([]ImportedFile, error)
	// ImportedFiles returns the stored provenance of those SHA-256 sums
	// that were imported before.
	ImportedFiles(ctx context.Context, sha256s []string) ([]ImportedFile, error)
	// History returns figures ordered by the time they were measured.
	History(ctx context.Context, f HistoryFilter) ([]MeasuredFigures, error)
	// Targets lists the targets holding results, newest first.
	Targets(ctx context.Context) ([]TargetSummary, error)
	// Latest returns the newest complete figures per target, round and
	// workload; prev, an earlier answer or nil, saves reading again what
	// it read. See SQLite.Latest.
	Latest(ctx context.Context, prev *LatestFigures) (*LatestFigures, error)
}

// Recorder records runs as they are measured. Every method is safe to call
// from several goroutines. AddResult commits before it returns, so a crash
// loses at most the result in flight.
type Recorder interface {
	// CreateRun records a new run; r.ID must be set and unused.
	CreateRun(ctx context.Context, r *result.Run) error
	// UpdateRun replaces a run's status, finish time, labels, targets,
	// workloads and note.
	UpdateRun(ctx context.Context, r *result.Run) error
	// AddResult stores one workload result and sets its ID.
	AddResult(ctx context.Context, r *result.Result) error
}

// Importer stores imports: all of one import or nothing.
type Importer interface {
	// ImportRun stores an import in one transaction; see SQLite.ImportRun.
	ImportRun(ctx context.Context, imp *Import) error
	// BeginImport starts a streamed import; see SQLite.BeginImport.
	BeginImport(ctx context.Context, r *result.Run, files []ImportedFile) (*ImportWriter, error)
}

// Store is a whole database: everything storbench reads and writes. The
// SQLite type implements it and is named only where a database is opened.
type Store interface {
	Reader
	Recorder
	Importer
	// Path is where the database lives.
	Path() string
	// ReadOnly reports whether the database was opened without write access.
	ReadOnly() bool
	Close() error
}

var _ Store = (*SQLite)(nil)

// RunFilter narrows Runs. Zero values mean no restriction.
type RunFilter struct {
	// Limit keeps at most Limit runs after skipping Offset of them, newest
	// first.
	Limit  int
	Offset int
	Suite  string
	Status result.Status
	// Target keeps runs that name this target or hold a result on it.
	Target string
	// Labels keeps runs carrying every one of these labels, on the run or
	// on one of its results (target labels such as storage=nvme are
	// merged into results).
	Labels map[string]string
	// Since and Until keep runs started at or after Since and before Until.
	Since, Until time.Time
}

// ResultFilter narrows Results. Zero values mean no restriction.
type ResultFilter struct {
	RunIDs   []string
	Workload string
	Target   string
	Round    string
	Status   result.Status
}

// ErrNotFound is returned when no run matches.
var ErrNotFound = errors.New("not found")

// AmbiguousError is a run ID prefix that matches more than one run.
type AmbiguousError struct {
	Prefix  string
	Matches []string
}

func (e *AmbiguousError) Error() string {
	return fmt.Sprintf("run ID prefix %q matches %d runs (%v...): type more of it", e.Prefix, len(e.Matches), e.Matches[0])
}
