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

func (l *Lazy) CreateRun(ctx context.Context, r *result.Run) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.CreateRun(ctx, r)
}

func (l *Lazy) UpdateRun(ctx context.Context, r *result.Run) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.UpdateRun(ctx, r)
}

func (l *Lazy) AddResult(ctx context.Context, r *result.Result) error {
	s, err := l.open(ctx)
	if err != nil {
		return err
	}
	return s.AddResult(ctx, r)
}

func (l *Lazy) Run(ctx context.Context, idOrPrefix string) (*result.Run, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Run(ctx, idOrPrefix)
}

func (l *Lazy) Runs(ctx context.Context, f RunFilter) ([]result.Run, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Runs(ctx, f)
}

func (l *Lazy) Results(ctx context.Context, f ResultFilter) ([]result.Result, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.Results(ctx, f)
}

func (l *Lazy) RawFioJSON(ctx context.Context, resultID int64) ([]byte, error) {
	s, err := l.open(ctx)
	if err != nil {
		return nil, err
	}
	return s.RawFioJSON(ctx, resultID)
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
