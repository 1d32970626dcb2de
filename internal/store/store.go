// Package store keeps runs and results. Store is the contract; SQLite is the
// implementation. No other package knows SQL.
package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/storbench/storbench/internal/result"
)

// Store persists runs and their results. Every method is safe to call from
// several goroutines. AddResult commits before it returns, so a crash loses
// at most the result in flight.
type Store interface {
	// CreateRun records a new run; r.ID must be set and unused.
	CreateRun(ctx context.Context, r *result.Run) error
	// UpdateRun replaces a run's status, finish time, labels, targets,
	// workloads and note.
	UpdateRun(ctx context.Context, r *result.Run) error
	// AddResult stores one workload result and sets its ID.
	AddResult(ctx context.Context, r *result.Result) error
	// Run returns the run with this ID or unique ID prefix.
	Run(ctx context.Context, idOrPrefix string) (*result.Run, error)
	// Runs lists runs, newest first.
	Runs(ctx context.Context, f RunFilter) ([]result.Run, error)
	// Results returns results in the order they were stored, without raw fio
	// output (see RawFioJSON).
	Results(ctx context.Context, f ResultFilter) ([]result.Result, error)
	// RawFioJSON returns fio's original JSON for a result, if kept.
	RawFioJSON(ctx context.Context, resultID int64) ([]byte, error)
	Close() error
}

// RunFilter narrows Runs. Zero values mean no restriction.
type RunFilter struct {
	Limit  int
	Suite  string
	Status result.Status
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
