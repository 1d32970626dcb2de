package store

import (
	"context"
	"sync"

	"github.com/storbench/storbench/internal/result"
)

// Lazy is a Store that opens its SQLite database on first use. A run that
// is refused before it starts (bad target, unsafe device) then creates
// nothing: no folder, no empty database.
type Lazy struct {
	path string

	mu  sync.Mutex
	db  *SQLite
	err error
}

var _ Store = (*Lazy)(nil)

// NewLazy returns a Store for the database at path, not yet opened.
func NewLazy(path string) *Lazy { return &Lazy{path: path} }

// open opens the database once; a failure is kept and returned to every
// later call.
func (l *Lazy) open(ctx context.Context) (*SQLite, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil && l.err == nil {
		l.db, l.err = Open(ctx, l.path)
	}
	return l.db, l.err
}

// Path is the database file.
func (l *Lazy) Path() string { return l.path }

// Opened reports whether the database has been opened.
func (l *Lazy) Opened() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.db != nil
}

// use opens the database and calls f on it.
func use[T any](ctx context.Context, l *Lazy, f func(*SQLite) (T, error)) (T, error) {
	s, err := l.open(ctx)
	if err != nil {
		var zero T
		return zero, err
	}
	return f(s)
}

func (l *Lazy) CreateRun(ctx context.Context, r *result.Run) error {
	_, err := use(ctx, l, func(s *SQLite) (struct{}, error) { return struct{}{}, s.CreateRun(ctx, r) })
	return err
}

func (l *Lazy) UpdateRun(ctx context.Context, r *result.Run) error {
	_, err := use(ctx, l, func(s *SQLite) (struct{}, error) { return struct{}{}, s.UpdateRun(ctx, r) })
	return err
}

func (l *Lazy) AddResult(ctx context.Context, r *result.Result) error {
	_, err := use(ctx, l, func(s *SQLite) (struct{}, error) { return struct{}{}, s.AddResult(ctx, r) })
	return err
}

func (l *Lazy) ImportRun(ctx context.Context, imp *Import) error {
	_, err := use(ctx, l, func(s *SQLite) (struct{}, error) { return struct{}{}, s.ImportRun(ctx, imp) })
	return err
}

func (l *Lazy) BeginImport(ctx context.Context, r *result.Run, files []ImportedFile) (*ImportWriter, error) {
	return use(ctx, l, func(s *SQLite) (*ImportWriter, error) { return s.BeginImport(ctx, r, files) })
}

func (l *Lazy) Run(ctx context.Context, idOrPrefix string) (*result.Run, error) {
	return use(ctx, l, func(s *SQLite) (*result.Run, error) { return s.Run(ctx, idOrPrefix) })
}

func (l *Lazy) Runs(ctx context.Context, f RunFilter) ([]result.Run, error) {
	return use(ctx, l, func(s *SQLite) ([]result.Run, error) { return s.Runs(ctx, f) })
}

func (l *Lazy) Results(ctx context.Context, f ResultFilter) ([]result.Result, error) {
	return use(ctx, l, func(s *SQLite) ([]result.Result, error) { return s.Results(ctx, f) })
}

func (l *Lazy) RawFioJSON(ctx context.Context, resultID int64) ([]byte, error) {
	return use(ctx, l, func(s *SQLite) ([]byte, error) { return s.RawFioJSON(ctx, resultID) })
}

func (l *Lazy) Figures(ctx context.Context, f ResultFilter) ([]result.Figures, error) {
	return use(ctx, l, func(s *SQLite) ([]result.Figures, error) { return s.Figures(ctx, f) })
}

func (l *Lazy) Health(ctx context.Context, f HealthFilter) ([]result.Health, error) {
	return use(ctx, l, func(s *SQLite) ([]result.Health, error) { return s.Health(ctx, f) })
}

func (l *Lazy) RunImports(ctx context.Context, runID string) ([]ImportedFile, error) {
	return use(ctx, l, func(s *SQLite) ([]ImportedFile, error) { return s.RunImports(ctx, runID) })
}

func (l *Lazy) ImportedFiles(ctx context.Context, sha256s []string) ([]ImportedFile, error) {
	return use(ctx, l, func(s *SQLite) ([]ImportedFile, error) { return s.ImportedFiles(ctx, sha256s) })
}

func (l *Lazy) Targets(ctx context.Context) ([]TargetSummary, error) {
	return use(ctx, l, func(s *SQLite) ([]TargetSummary, error) { return s.Targets(ctx) })
}

func (l *Lazy) History(ctx context.Context, f HistoryFilter) ([]MeasuredFigures, error) {
	return use(ctx, l, func(s *SQLite) ([]MeasuredFigures, error) { return s.History(ctx, f) })
}

func (l *Lazy) Latest(ctx context.Context, prev *LatestFigures) (*LatestFigures, error) {
	return use(ctx, l, func(s *SQLite) (*LatestFigures, error) { return s.Latest(ctx, prev) })
}

// ReadOnly reports whether the database, once opened, is read-only; false
// before it is opened.
func (l *Lazy) ReadOnly() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.db != nil && l.db.ReadOnly()
}

// Close closes the database if it was opened.
func (l *Lazy) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.db == nil {
		return nil
	}
	return l.db.Close()
}
