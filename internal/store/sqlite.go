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
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/storbench/storbench/internal/result"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// SQLite is a Store in one SQLite file, in WAL mode.
type SQLite struct {
	db   sqlDB
	path string
	// version is the schema version found (read-only databases are not
	// migrated, so it may be below len(migrations)).
	version int
}

var _ Store = (*SQLite)(nil)

// ReadOnlyError is a write asked of a database storbench may only read.
type ReadOnlyError struct {
	Path string
}

func (e *ReadOnlyError) Error() string { return "read-only: " + e.Path }

// sqlDB is the connection pool. On a read-only database it refuses every
// statement that writes, so each write names the database and why.
type sqlDB struct {
	*sql.DB
	readOnly string // the database's path when it is read-only
}

// BeginTx starts a transaction; on a read-only database only a read-only
// one (a snapshot for several reads).
func (d sqlDB) BeginTx(ctx context.Context, opts *sql.TxOptions) (*sql.Tx, error) {
	if d.readOnly != "" && (opts == nil || !opts.ReadOnly) {
		return nil, &ReadOnlyError{Path: d.readOnly}
	}
	return d.DB.BeginTx(ctx, opts)
}

func (d sqlDB) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if d.readOnly != "" {
		return nil, &ReadOnlyError{Path: d.readOnly}
	}
	return d.DB.ExecContext(ctx, query, args...)
}

// oldestReadable is the oldest schema a read-only database may have: reads
// assume the tables of migrations up to it (result_figures).
const oldestReadable = 3

// Open opens (creating if needed) the database at path and brings its
// schema up to date.
//
// Nothing in an existing file changes before it is known to be storbench's:
// a file that is not SQLite, holds another program's tables, or was written
// by a newer storbench is refused from its schema version and tables, read
// through an immutable connection (no locks, no journal or WAL files). A new
// database is set up aside and linked into place whole (see create);
// migrations of an existing one run in one IMMEDIATE transaction that checks
// the version again, so processes opening it at once migrate it once.
//
// A database that cannot be written (file mode without write permission,
// a read-only mount, a folder where SQLite cannot create its journal) is
// opened read-only: every read works and every write returns a
// *ReadOnlyError.
func Open(ctx context.Context, path string) (*SQLite, error) {
	s, err := openDB(ctx, path)
	if err != nil {
		return nil, fmt.Errorf("opening database %s: %w", path, err)
	}
	return s, nil
}

func openDB(ctx context.Context, path string) (*SQLite, error) {
	access, err := inspect(ctx, path)
	if err != nil {
		return nil, err
	}
	if access == accessCreate {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return nil, fmt.Errorf("creating the database folder: %w", err)
		}
		if err := create(ctx, path); err != nil {
			return nil, err
		}
		if access, err = inspect(ctx, path); err != nil {
			return nil, err
		}
	}
	return openWith(ctx, path, access)
}

func openWith(ctx context.Context, path string, access access) (*SQLite, error) {
	q := "?_pragma=busy_timeout(10000)&_pragma=foreign_keys(1)"
	switch access {
	case accessReadOnly:
		q += "&mode=ro"
	case accessImmutable:
		q += "&mode=ro&immutable=1"
	default:
		q += "&_pragma=synchronous(NORMAL)&_txlock=immediate"
	}
	db, err := sql.Open("sqlite", fileURI(path)+q)
	if err != nil {
		return nil, err
	}
	s := &SQLite{db: sqlDB{DB: db}, path: path}
	if access == accessReadOnly || access == accessImmutable {
		s.db.readOnly = path
	}
	if err := s.prepare(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// create makes a new database at path whole, or leaves path to whoever
// made it first. The schema and WAL mode are set up in a file of its own
// and then linked into place, which fails if path exists: processes opening
// a new database at once never see a half-made one nor race to set it up.
func create(ctx context.Context, path string) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".new-*")
	if err != nil {
		return fmt.Errorf("creating the database: %w", err)
	}
	tmp := f.Name()
	defer os.Remove(tmp) // once linked, path keeps the database
	if err := errors.Join(f.Chmod(0o644), f.Close()); err != nil {
		return fmt.Errorf("creating the database: %w", err)
	}
	s, err := openWith(ctx, tmp, accessReadWrite)
	if err != nil {
		return err
	}
	if err := s.Close(); err != nil {
		return err
	}
	// SQLite shares its lock and WAL-index state between connections to one
	// inode: none may remain under the temporary name once the file can be
	// opened as path.
	for _, side := range []string{tmp + "-wal", tmp + "-shm", tmp + "-journal"} {
		if err := os.Remove(side); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("creating the database: %w", err)
		}
	}
	err = os.Link(tmp, path)
	switch {
	case err == nil, errors.Is(err, os.ErrExist):
		return nil
	case errors.Is(err, syscall.EPERM), errors.Is(err, syscall.ENOTSUP), errors.Is(err, syscall.EOPNOTSUPP):
		// No hard links here (FAT, some FUSE): a new empty file, set up in
		// place under the IMMEDIATE transaction.
		f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil && !errors.Is(err, os.ErrExist) {
			return fmt.Errorf("creating the database: %w", err)
		}
		if f != nil {
			return f.Close()
		}
		return nil
	default:
		return fmt.Errorf("creating the database: %w", err)
	}
}

// ReadOnly reports whether the database was opened read-only.
func (s *SQLite) ReadOnly() bool { return s.db.readOnly != "" }

// Path is the database file.
func (s *SQLite) Path() string { return s.path }

// Close closes the database.
func (s *SQLite) Close() error { return s.db.Close() }

// prepare migrates a writable database and switches it to WAL; a read-only
// one is only checked.
func (s *SQLite) prepare(ctx context.Context) error {
	if s.ReadOnly() {
		v, err := s.schemaVersion(ctx, s.db.DB)
		if err != nil {
			return err
		}
		if v < oldestReadable {
			return fmt.Errorf("%w: schema %d is too old to read without upgrading it", &ReadOnlyError{Path: s.path}, v)
		}
		s.version = v
		return nil
	}
	started := time.Now()
	tx, err := s.db.BeginTx(ctx, nil) // IMMEDIATE: one writer migrates
	if err != nil {
		return err
	}
	defer tx.Rollback()
	v, err := s.schemaVersion(ctx, tx)
	if err != nil {
		return err
	}
	for ; v < len(migrations); v++ {
		if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
			return fmt.Errorf("schema migration %d: %w", v+1, err)
		}
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", v+1)); err != nil {
			return fmt.Errorf("schema migration %d: %w", v+1, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return err
	}
	s.version = v
	var mode string
	if err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return err
	}
	// Switching needs the database to itself and does not wait for
	// readers (the busy timeout does not apply), and processes switching
	// at once race to delete the rollback journal: another process opening
	// the new database at this moment is waited for here, and the switch
	// tried again.
	for wait := 10 * time.Millisecond; !strings.EqualFold(mode, "wal"); wait = min(2*wait, 500*time.Millisecond) {
		err := s.db.QueryRowContext(ctx, "PRAGMA journal_mode=WAL").Scan(&mode)
		if err == nil {
			continue
		}
		if time.Since(started) > busyTimeout {
			return fmt.Errorf("switching to WAL: %w", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
	}
	return nil
}

// busyTimeout bounds waiting for another process that holds the database.
const busyTimeout = 10 * time.Second

type queryRower interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// schemaVersion reads the schema version and refuses a newer database or
// another program's, as inspect did from the header; here it sees what the
// write-ahead log holds too.
func (s *SQLite) schemaVersion(ctx context.Context, q queryRower) (int, error) {
	var v int
	if err := q.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return 0, err
	}
	if v > len(migrations) {
		return 0, newerError(v)
	}
	if v == 0 {
		var n int
		if err := q.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table'").Scan(&n); err != nil {
			return 0, err
		}
		if n > 0 {
			return 0, errForeign
		}
	}
	return v, nil
}

func newerError(v int) error {
	return fmt.Errorf("the database was written by a newer storbench (schema %d, this one knows %d): upgrade storbench", v, len(migrations))
}

var errForeign = errors.New("this SQLite file holds other tables and no storbench schema: choose another --db")

type access int

const (
	accessCreate    access = iota // no file yet
	accessReadWrite               // an existing database storbench may write
	accessReadOnly                // may not be written, has a WAL to read: SQLite's mode=ro
	accessImmutable               // may not be written, nothing else writes it: no locks, no -shm
)

// inspect judges an existing file from its schema version and tables
// without changing it, and says how to open it.
func inspect(ctx context.Context, path string) (access, error) {
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		return accessCreate, nil
	}
	if err != nil {
		return 0, err
	}
	if !fi.Mode().IsRegular() {
		return 0, fmt.Errorf("not a regular file (%s)", fi.Mode().Type())
	}
	mode := writable(path, fi)
	if mode == accessReadOnly {
		// Without a write-ahead log to read, reading needs no lock and no
		// -shm file: nothing beside the database appears.
		if wal, err := os.Stat(path + "-wal"); err != nil || wal.Size() == 0 {
			mode = accessImmutable
		}
	}
	if fi.Size() == 0 {
		if mode != accessReadWrite {
			return 0, &ReadOnlyError{Path: path}
		}
		return accessReadWrite, nil
	}
	// Read through SQLite itself, never through a file descriptor of our
	// own: closing any descriptor of a file drops every POSIX lock this
	// process holds on it, also those of SQLite connections already open.
	// immutable=1 reads with no locks and no journal or WAL files at all,
	// so a file refused is left as it was. But a file another storbench is
	// writing right now (upgrading it) can be caught half checkpointed and
	// look malformed that way: one that may be written is then read again
	// as a reader, under SQLite's locks.
	v, tables, err := readSchema(ctx, path, "?mode=ro&immutable=1")
	if err != nil && mode == accessReadWrite {
		v, tables, err = readSchema(ctx, path, "?mode=ro&_pragma=busy_timeout(10000)")
	}
	if err != nil {
		return 0, err
	}
	if v > len(migrations) {
		return 0, newerError(v)
	}
	if v == 0 && tables > 0 {
		return 0, errForeign
	}
	return mode, nil
}

// readSchema reads a database's schema version and its number of tables,
// opening it with the URI parameters q.
func readSchema(ctx context.Context, path, q string) (version, tables int, err error) {
	db, err := sql.Open("sqlite", fileURI(path)+q)
	if err != nil {
		return 0, 0, err
	}
	defer db.Close()
	if err := db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, 0, fmt.Errorf("not a SQLite database (%w): choose another --db", err)
	}
	if version > len(migrations) {
		return version, 0, nil
	}
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_master WHERE type='table'").Scan(&tables); err != nil {
		return 0, 0, fmt.Errorf("reading the schema: %w", err)
	}
	return version, tables, nil
}

// writable says how a database file may be opened. A file whose mode
// grants no write permission is treated as read-only even for root, who
// could write it: the mode says the owner wants it kept.
func writable(path string, fi os.FileInfo) access {
	var fs unix.Statfs_t
	if err := unix.Statfs(path, &fs); err == nil && fs.Flags&unix.ST_RDONLY != 0 {
		return accessImmutable
	}
	if fi.Mode().Perm()&0o222 == 0 || unix.Access(path, unix.W_OK) != nil {
		return accessReadOnly
	}
	// SQLite writes its journal beside the database.
	if unix.Access(filepath.Dir(path), unix.W_OK) != nil {
		return accessReadOnly
	}
	return accessReadWrite
}

// fileURI makes a file: URI of path for SQLite, escaping what would end
// the path early.
func fileURI(path string) string {
	return "file:" + strings.NewReplacer("%", "%25", "?", "%3f", "#", "%23").Replace(path)
}

func (s *SQLite) CreateRun(ctx context.Context, r *result.Run) error {
	if r.ID == "" {
		return errors.New("run has no ID")
	}
	labels, workloads, targets, err := runJSON(r)
	if err != nil {
		return err
	}
	var p result.Process
	if r.Process != nil {
		p = *r.Process
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO runs(id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note, pid, proc_start, boot_id, host)
		VALUES(?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, r.ID, r.Suite, r.Source, string(r.Status), nanos(r.Started), nanos(r.Finished), labels, workloads, targets, r.Note,
		p.PID, int64(p.StartTicks), p.BootID, p.Host)
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
	if _, err := tx.ExecContext(ctx, `INSERT OR IGNORE INTO result_labels(key, value, run_id) SELECT key, value, ? FROM json_each(?)`,
		r.RunID, string(labels)); err != nil {
		return 0, fmt.Errorf("storing labels of %s on %s: %w", r.Workload, r.Target, err)
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

// runColumns are the columns scanRuns reads; a read-only database older
// than migration 4 has no process columns and reads as recording none.
func (s *SQLite) runColumns() string {
	cols := `id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note, `
	if s.version < 4 {
		return cols + `0, 0, '', ''`
	}
	return cols + `pid, proc_start, boot_id, host`
}

func (s *SQLite) Run(ctx context.Context, idOrPrefix string) (*result.Run, error) {
	idOrPrefix = strings.TrimSpace(idOrPrefix)
	if idOrPrefix == "" {
		return nil, fmt.Errorf("empty run ID: %w", ErrNotFound)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+s.runColumns()+` FROM runs WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id = ? DESC, id LIMIT 6`,
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
	where, args, err := runWhere(f, s.version)
	if err != nil {
		return nil, err
	}
	q := `SELECT ` + s.runColumns() + ` FROM runs WHERE ` + where + ` ORDER BY started_ns DESC, id DESC`
	switch {
	case f.Limit > 0:
		q += fmt.Sprintf(` LIMIT %d OFFSET %d`, f.Limit, max(f.Offset, 0))
	case f.Offset > 0:
		q += fmt.Sprintf(` LIMIT -1 OFFSET %d`, f.Offset)
	}
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return scanRuns(rows)
}

// runWhere is the WHERE clause of a RunFilter and its arguments on a
// database of this schema version.
func runWhere(f RunFilter, version int) (string, []any, error) {
	conds := []string{"1=1"}
	var args []any
	add := func(cond string, a ...any) {
		conds = append(conds, cond)
		args = append(args, a...)
	}
	if f.Suite != "" {
		add(`suite = ?`, f.Suite)
	}
	if f.Status != "" {
		add(`status = ?`, string(f.Status))
	}
	if !f.Since.IsZero() {
		add(`started_ns >= ?`, f.Since.UnixNano())
	}
	if !f.Until.IsZero() {
		add(`started_ns < ?`, f.Until.UnixNano())
	}
	if f.Target != "" {
		// A running run names its targets before any result is stored.
		add(`(id IN (SELECT run_id FROM result_figures WHERE target = ?) OR EXISTS (SELECT 1 FROM json_each(runs.targets) WHERE value = ?))`,
			f.Target, f.Target)
	}
	keys := make([]string, 0, len(f.Labels))
	for k := range f.Labels {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		path, err := labelPath(k)
		if err != nil {
			return "", nil, err
		}
		if version < 5 { // no result_labels: look into every result
			add(`(json_extract(runs.labels, ?) = ? OR EXISTS (SELECT 1 FROM result_figures rf WHERE rf.run_id = runs.id AND json_extract(rf.labels, ?) = ?))`,
				path, f.Labels[k], path, f.Labels[k])
			continue
		}
		// A run's labels are on its results too, but a run with none
		// stored yet has only its own.
		add(`(id IN (SELECT run_id FROM result_labels WHERE key = ? AND value = ?) OR json_extract(runs.labels, ?) = ?)`,
			k, f.Labels[k], path, f.Labels[k])
	}
	return strings.Join(conds, " AND "), args, nil
}

// labelPath is the JSON path of a label key in a labels column; a key is
// quoted whole, so dots and brackets in it are not path syntax.
func labelPath(key string) (string, error) {
	if key == "" || strings.ContainsAny(key, "\"\\") {
		return "", fmt.Errorf("label key %q: a key is not empty and has no quote or backslash", key)
	}
	return `$."` + key + `"`, nil
}

func scanRuns(rows *sql.Rows) ([]result.Run, error) {
	defer rows.Close()
	var out []result.Run
	for rows.Next() {
		var r result.Run
		var status, labels, workloads, targets string
		var started, finished, procStart int64
		var p result.Process
		if err := rows.Scan(&r.ID, &r.Suite, &r.Source, &status, &started, &finished, &labels, &workloads, &targets, &r.Note,
			&p.PID, &procStart, &p.BootID, &p.Host); err != nil {
			return nil, err
		}
		if p.PID != 0 {
			p.StartTicks = uint64(procStart)
			r.Process = &p
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
