package store

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// SQLite is a Store in one SQLite file, in WAL mode.
type SQLite struct {
	db   *sql.DB
	path string
}

var _ Store = (*SQLite)(nil)

// Open opens (creating if needed) the database at path and brings its
// schema up to date. An existing file that is not a storbench database is
// refused, never overwritten.
func Open(ctx context.Context, path string) (*SQLite, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("creating the database folder: %w", err)
		}
	}
	dsn := "file:" + path + "?_pragma=busy_timeout(10000)&_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)&_pragma=foreign_keys(1)&_txlock=immediate"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	s := &SQLite{db: db, path: path}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	return s, nil
}

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

func (s *SQLite) migrate(ctx context.Context) error {
	var version int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return err
	}
	if version > len(migrations) {
		return fmt.Errorf("the database was written by a newer storbench (schema %d, this one knows %d): upgrade storbench", version, len(migrations))
	}
	if version == 0 {
		// A file with tables but no storbench schema is someone else's database.
		var n int
		if err := s.db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table'").Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return errors.New("this SQLite file holds other tables and no storbench schema: choose another --db")
		}
	}
	for v := version; v < len(migrations); v++ {
		tx, err := s.db.BeginTx(ctx, nil)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			tx.Rollback()
			return fmt.Errorf("schema migration %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

func (s *SQLite) CreateRun(ctx context.Context, r *result.Run) error {
	if r.ID == "" {
		return errors.New("run has no ID")
	}
	labels, workloads, targets, err := runJSON(r)
	if err != nil {
		return err
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs(id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note)
		VALUES(?,?,?,?,?,?,?,?,?,?)`, r.ID, r.Suite, r.Source, string(r.Status), nanos(r.Started), nanos(r.Finished), labels, workloads, targets, r.Note)
	if err != nil {
		return fmt.Errorf("storing run %s: %w", r.ID, err)
	}
	return nil
}

func (s *SQLite) UpdateRun(ctx context.Context, r *result.Run) error {
	labels, workloads, targets, err := runJSON(r)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE runs SET status=?, finished_ns=?, labels=?, workloads=?, targets=?, note=? WHERE id=?`,
		string(r.Status), nanos(r.Finished), labels, workloads, targets, r.Note, r.ID)
	if err != nil {
		return fmt.Errorf("updating run %s: %w", r.ID, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return fmt.Errorf("updating run %s: %w", r.ID, ErrNotFound)
	}
	return nil
}

func runJSON(r *result.Run) (labels, workloads, targets string, err error) {
	var b []byte
	if b, err = json.Marshal(nonNil(r.Labels)); err != nil {
		return
	}
	labels = string(b)
	if b, err = json.Marshal(nonNilSlice(r.Workloads)); err != nil {
		return
	}
	workloads = string(b)
	if b, err = json.Marshal(nonNilSlice(r.Targets)); err != nil {
		return
	}
	targets = string(b)
	return
}

// resultData is the part of a result kept as one JSON document.
type resultData struct {
	Read  *result.Direction `json:"read,omitempty"`
	Write *result.Direction `json:"write,omitempty"`
	Trim  *result.Direction `json:"trim,omitempty"`
	Sync  *result.Latency   `json:"sync,omitempty"`
	CPU   result.CPU        `json:"cpu"`
	// Bottleneck is kept here so reports need no second query.
	Bottleneck *result.Attribution `json:"bottleneck,omitempty"`
	Telemetry  *result.Telemetry   `json:"telemetry,omitempty"`
	// DisplayUnits keeps an imported result's original units.
	DisplayUnits map[string]string `json:"display_units,omitempty"`
	// Measurement checks (steady state, write cliff, cache, preconditioning).
	SteadyState  *result.SteadyState  `json:"steady_state,omitempty"`
	WriteCliff   *result.WriteCliff   `json:"write_cliff,omitempty"`
	CacheRisk    *result.CacheRisk    `json:"cache_risk,omitempty"`
	Precondition *result.Precondition `json:"precondition,omitempty"`
}

func (s *SQLite) AddResult(ctx context.Context, r *result.Result) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing result: %w", err)
	}
	defer tx.Rollback()
	id, err := insertResult(ctx, tx, r)
	if err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("storing result of %s on %s: %w", r.Workload, r.Target, err)
	}
	r.ID = id
	return nil
}

// insertResult writes one result and its raw output inside tx.
func insertResult(ctx context.Context, tx *sql.Tx, r *result.Result) (int64, error) {
	labels, err := json.Marshal(nonNil(r.Labels))
	if err != nil {
		return 0, err
	}
	data, err := json.Marshal(resultData{Read: r.Read, Write: r.Write, Trim: r.Trim, Sync: r.Sync, CPU: r.CPU, Bottleneck: r.Bottleneck, Telemetry: r.Telemetry, DisplayUnits: r.DisplayUnits,
		SteadyState: r.SteadyState, WriteCliff: r.WriteCliff, CacheRisk: r.CacheRisk, Precondition: r.Precondition})
	if err != nil {
		return 0, err
	}
	res, err := tx.ExecContext(ctx, `INSERT INTO results(run_id, target, round, repetition, workload, status, error, started_ns, finished_ns, method, labels, data)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`, r.RunID, r.Target, r.Round, r.Repetition, r.Workload, string(r.Status), r.Error,
		nanos(r.Started), nanos(r.Finished), r.Method, string(labels), string(data))
	if err != nil {
		return 0, fmt.Errorf("storing result of %s on %s: %w", r.Workload, r.Target, err)
	}
	id, err := res.LastInsertId()
	if err != nil {
		return 0, err
	}
	if err := insertFigures(ctx, tx, id, r, string(labels)); err != nil {
		return 0, err
	}
	if len(r.RawFioJSON) > 0 {
		gz, err := compress(r.RawFioJSON)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO raw_outputs(result_id, encoding, body) VALUES(?, 'gzip', ?)`, id, gz); err != nil {
			return 0, fmt.Errorf("storing fio output of %s: %w", r.Workload, err)
		}
	}
	return id, nil
}

const runColumns = `id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note`

func (s *SQLite) Run(ctx context.Context, idOrPrefix string) (*result.Run, error) {
	idOrPrefix = strings.TrimSpace(idOrPrefix)
	if idOrPrefix == "" {
		return nil, fmt.Errorf("empty run ID: %w", ErrNotFound)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC, id LIMIT 6`,
		idOrPrefix, escapeLike(idOrPrefix)+"%", idOrPrefix)
	if err != nil {
		return nil, err
	}
	runs, err := scanRuns(rows)
	if err != nil {
		return nil, err
	}
	switch {
	case len(runs) == 0:
		return nil, fmt.Errorf("run %q: %w", idOrPrefix, ErrNotFound)
	case runs[0].ID == idOrPrefix || len(runs) == 1:
		return &runs[0], nil
	default:
		var ids []string
		for _, r := range runs {
			ids = append(ids, r.ID)
		}
		return nil, &AmbiguousError{Prefix: idOrPrefix, Matches: ids}
	}
}

func (s *SQLite) Runs(ctx context.Context, f RunFilter) ([]result.Run, error) {
	q := `SELECT ` + runColumns + ` FROM runs WHERE 1=1`
	var args []any
	if f.Suite != "" {
		q += ` AND suite = ?`
		args = append(args, f.Suite)
	}
	if f.Status != "" {
		q += ` AND status = ?`
		args = append(args, string(f.Status))
	}
	q += ` ORDER BY started_ns DESC, id DESC`
	if f.Limit > 0 {
		q += fmt.Sprintf(` LIMIT %d`, f.Limit)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}

func scanRuns(rows *sql.Rows) ([]result.Run, error) {
	defer rows.Close()
	var out []result.Run
	for rows.Next() {
		var r result.Run
		var status, labels, workloads, targets string
		var started, finished int64
		if err := rows.Scan(&r.ID, &r.Suite, &r.Source, &status, &started, &finished, &labels, &workloads, &targets, &r.Note); err != nil {
			return nil, err
		}
		r.Status = result.Status(status)
		r.Started, r.Finished = fromNanos(started), fromNanos(finished)
		if err := unmarshalAll(&r.Labels, labels, &r.Workloads, workloads, &r.Targets, targets); err != nil {
			return nil, fmt.Errorf("run %s: %w", r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *SQLite) Results(ctx context.Context, f ResultFilter) ([]result.Result, error) {
	q := `SELECT id, run_id, target, round, repetition, workload, status, error, started_ns, finished_ns, method, labels, data FROM results WHERE 1=1`
	var args []any
	if len(f.RunIDs) > 0 {
		q += ` AND run_id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(f.RunIDs)), ",") + `)`
		for _, id := range f.RunIDs {
			args = append(args, id)
		}
	}
	for _, c := range []struct{ col, val string }{{"workload", f.Workload}, {"target", f.Target}, {"round", f.Round}, {"status", string(f.Status)}} {
		if c.val != "" {
			q += ` AND ` + c.col + ` = ?`
			args = append(args, c.val)
		}
	}
	q += ` ORDER BY id`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []result.Result
	for rows.Next() {
		var r result.Result
		var status, labels, data string
		var started, finished int64
		if err := rows.Scan(&r.ID, &r.RunID, &r.Target, &r.Round, &r.Repetition, &r.Workload, &status, &r.Error, &started, &finished, &r.Method, &labels, &data); err != nil {
			return nil, err
		}
		r.Status = result.Status(status)
		r.Started, r.Finished = fromNanos(started), fromNanos(finished)
		var d resultData
		if err := unmarshalAll(&r.Labels, labels, &d, data); err != nil {
			return nil, fmt.Errorf("result %d: %w", r.ID, err)
		}
		r.Read, r.Write, r.Trim, r.Sync, r.CPU, r.Bottleneck = d.Read, d.Write, d.Trim, d.Sync, d.CPU, d.Bottleneck
		r.Telemetry = d.Telemetry
		r.SteadyState, r.WriteCliff, r.CacheRisk, r.Precondition = d.SteadyState, d.WriteCliff, d.CacheRisk, d.Precondition
		r.DisplayUnits = d.DisplayUnits
		out = append(out, r)
	}
	return out, rows.Err()
}

func (s *SQLite) RawFioJSON(ctx context.Context, resultID int64) ([]byte, error) {
	var body []byte
	err := s.db.QueryRowContext(ctx, `SELECT body FROM raw_outputs WHERE result_id = ?`, resultID).Scan(&body)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("raw output of result %d: %w", resultID, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	zr, err := gzip.NewReader(bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("raw output of result %d: %w", resultID, err)
	}
	return io.ReadAll(zr)
}

func compress(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

func unmarshalAll(pairs ...any) error {
	for i := 0; i+1 < len(pairs); i += 2 {
		if s := pairs[i+1].(string); s != "" {
			if err := json.Unmarshal([]byte(s), pairs[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

func nanos(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromNanos(n int64) time.Time {
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

func nonNil(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func escapeLike(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`)
	return r.Replace(s)
}
