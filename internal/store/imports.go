package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// ImportedFile is the provenance of one imported input file, part of the
// data model so reports can show it.
type ImportedFile = result.ImportedFile

// Import is everything one "storbench import" stores: a run, its results,
// device health and the provenance of each input file.
type Import struct {
	Run     *result.Run
	Results []result.Result
	Health  []result.Health
	Files   []ImportedFile
}

// DuplicateError is returned by ImportRun when a file was imported before.
type DuplicateError struct {
	Files []ImportedFile
}

func (e *DuplicateError) Error() string {
	var parts []string
	for _, f := range e.Files {
		parts = append(parts, fmt.Sprintf("%s was already imported as run %s on %s", f.File, f.RunID, f.Imported.UTC().Format(time.RFC3339)))
	}
	return strings.Join(parts, "; ")
}

// ImportRun stores an import in one transaction: the run, every result,
// every health record and the files' provenance, or nothing at all. It
// refuses (DuplicateError) when any file's SHA-256 is already stored; it
// sets the IDs of results and health records.
func (s *SQLite) ImportRun(ctx context.Context, imp *Import) error {
	w, err := s.BeginImport(ctx, imp.Run, imp.Files)
	if err != nil {
		return err
	}
	defer w.Abort()
	for i := range imp.Results {
		if err := w.AddResult(ctx, &imp.Results[i]); err != nil {
			return err
		}
	}
	for i := range imp.Health {
		if err := w.AddHealth(ctx, &imp.Health[i]); err != nil {
			return err
		}
	}
	if err := w.Commit(ctx); err != nil {
		return err
	}
	for i := range imp.Files {
		imp.Files[i].RunID = imp.Run.ID
	}
	return nil
}

// ImportWriter stores one import result by result, so an input of any size
// is stored with bounded memory, still in one transaction: Commit stores
// it all, Abort (or an error) nothing.
type ImportWriter struct {
	tx    *sql.Tx
	run   *result.Run
	more  []*result.Run // see AddRun
	files []ImportedFile
	done  bool
}

// BeginImport starts storing an import: it refuses (DuplicateError) when
// any of the files was imported before, and records the run. The run's
// workloads, targets and note may still change until Commit.
func (s *SQLite) BeginImport(ctx context.Context, r *result.Run, files []ImportedFile) (*ImportWriter, error) {
	if r == nil || r.ID == "" {
		return nil, fmt.Errorf("import has no run ID")
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("storing import: %w", err)
	}
	w := &ImportWriter{tx: tx, run: r, files: files}
	var sums []string
	for _, f := range files {
		sums = append(sums, f.SHA256)
	}
	dups, err := importedFiles(ctx, tx, sums)
	if err != nil {
		w.Abort()
		return nil, err
	}
	if len(dups) > 0 {
		w.Abort()
		return nil, &DuplicateError{Files: dups}
	}
	labels, workloads, targets, err := runJSON(r)
	if err != nil {
		w.Abort()
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO runs(id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note)
		VALUES(?,?,?,?,?,?,?,?,?,?)`, r.ID, r.Suite, r.Source, string(r.Status), nanos(r.Started), nanos(r.Finished), labels, workloads, targets, r.Note); err != nil {
		w.Abort()
		return nil, fmt.Errorf("storing run %s: %w", r.ID, err)
	}
	return w, nil
}

// AddRun records another run of the import, in the same transaction:
// figures measured at different times are stored as one run per time.
// A result names it in RunID before AddResult. Like the first run, its
// workloads, targets, times, source and note may change until Commit.
func (w *ImportWriter) AddRun(ctx context.Context, r *result.Run) error {
	labels, workloads, targets, err := runJSON(r)
	if err != nil {
		return err
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO runs(id, suite, source, status, started_ns, finished_ns, labels, workloads, targets, note)
		VALUES(?,?,?,?,?,?,?,?,?,?)`, r.ID, r.Suite, r.Source, string(r.Status), nanos(r.Started), nanos(r.Finished), labels, workloads, targets, r.Note); err != nil {
		return fmt.Errorf("storing run %s: %w", r.ID, err)
	}
	w.more = append(w.more, r)
	return nil
}

// AddResult stores one result of the import and sets its ID; it goes to
// the run its RunID names when that is one of AddRun's, else to the
// import's run.
func (w *ImportWriter) AddResult(ctx context.Context, r *result.Result) error {
	if !slices.ContainsFunc(w.more, func(m *result.Run) bool { return m.ID == r.RunID }) {
		r.RunID = w.run.ID
	}
	id, err := insertResult(ctx, w.tx, r)
	if err != nil {
		return err
	}
	r.ID = id
	return nil
}

// AddHealth stores one device health record and sets its ID and run.
func (w *ImportWriter) AddHealth(ctx context.Context, h *result.Health) error {
	h.RunID = w.run.ID
	data, err := json.Marshal(h)
	if err != nil {
		return err
	}
	res, err := w.tx.ExecContext(ctx, `INSERT INTO device_health(run_id, target, captured_ns, healthy, data) VALUES(?,?,?,?,?)`,
		w.run.ID, h.Target, nanos(h.Captured), h.Healthy(), string(data))
	if err != nil {
		return fmt.Errorf("storing health of %s: %w", h.Target, err)
	}
	h.ID, err = res.LastInsertId()
	return err
}

// Commit brings the runs' workloads, targets, times, source and note up
// to date, stores the files' provenance and commits everything.
func (w *ImportWriter) Commit(ctx context.Context) error {
	for _, r := range append([]*result.Run{w.run}, w.more...) {
		labels, workloads, targets, err := runJSON(r)
		if err != nil {
			return err
		}
		if _, err := w.tx.ExecContext(ctx, `UPDATE runs SET source=?, labels=?, workloads=?, targets=?, note=?, started_ns=?, finished_ns=? WHERE id=?`,
			r.Source, labels, workloads, targets, r.Note, nanos(r.Started), nanos(r.Finished), r.ID); err != nil {
			return fmt.Errorf("storing run %s: %w", r.ID, err)
		}
	}
	r := w.run
	for _, f := range w.files {
		if _, err := w.tx.ExecContext(ctx, `INSERT INTO imports(sha256, run_id, file, format, tool, tool_version, size_bytes, results, imported_ns)
			VALUES(?,?,?,?,?,?,?,?,?)`, f.SHA256, r.ID, f.File, f.Format, f.Tool, f.ToolVersion, f.SizeBytes, f.Results, nanos(f.Imported)); err != nil {
			return fmt.Errorf("storing provenance of %s: %w", f.File, err)
		}
	}
	w.done = true
	if err := w.tx.Commit(); err != nil {
		return fmt.Errorf("storing import: %w", err)
	}
	return nil
}

// SetFiles replaces the provenance Commit stores (its formats, tools and
// counts are known only once every file has been read).
func (w *ImportWriter) SetFiles(files []ImportedFile) { w.files = files }

// Abort drops everything stored since BeginImport; after Commit it does
// nothing.
func (w *ImportWriter) Abort() error {
	if w.done {
		return nil
	}
	w.done = true
	return w.tx.Rollback()
}

type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// ImportedFiles returns the stored provenance of those SHA-256 sums that
// were imported before.
func (s *SQLite) ImportedFiles(ctx context.Context, sha256s []string) ([]ImportedFile, error) {
	return importedFiles(ctx, s.db, sha256s)
}

// RunImports returns the provenance of the files a run was imported from.
func (s *SQLite) RunImports(ctx context.Context, runID string) ([]ImportedFile, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT `+importColumns+` FROM imports WHERE run_id = ? ORDER BY imported_ns, file`, runID)
	if err != nil {
		return nil, err
	}
	return scanImports(rows)
}

const importColumns = `sha256, run_id, file, format, tool, tool_version, size_bytes, results, imported_ns`

func importedFiles(ctx context.Context, q queryer, sums []string) ([]ImportedFile, error) {
	if len(sums) == 0 {
		return nil, nil
	}
	args := make([]any, len(sums))
	for i, s := range sums {
		args[i] = s
	}
	rows, err := q.QueryContext(ctx, `SELECT `+importColumns+` FROM imports WHERE sha256 IN (`+strings.TrimSuffix(strings.Repeat("?,", len(sums)), ",")+`) ORDER BY file`, args...)
	if err != nil {
		return nil, fmt.Errorf("looking up earlier imports: %w", err)
	}
	return scanImports(rows)
}

func scanImports(rows *sql.Rows) ([]ImportedFile, error) {
	defer rows.Close()
	var out []ImportedFile
	for rows.Next() {
		var f ImportedFile
		var imported int64
		if err := rows.Scan(&f.SHA256, &f.RunID, &f.File, &f.Format, &f.Tool, &f.ToolVersion, &f.SizeBytes, &f.Results, &imported); err != nil {
			return nil, err
		}
		f.Imported = fromNanos(imported)
		out = append(out, f)
	}
	return out, rows.Err()
}

// HealthFilter narrows Health. Zero values mean no restriction.
type HealthFilter struct {
	RunIDs []string
	Target string
	// Latest keeps only the newest record of each target.
	Latest bool
}

// Health returns stored device health records, oldest first.
func (s *SQLite) Health(ctx context.Context, f HealthFilter) ([]result.Health, error) {
	q := `SELECT h.id, h.data FROM device_health h JOIN runs r ON r.id = h.run_id WHERE 1=1`
	var args []any
	if len(f.RunIDs) > 0 {
		q += ` AND h.run_id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(f.RunIDs)), ",") + `)`
		for _, id := range f.RunIDs {
			args = append(args, id)
		}
	}
	if f.Target != "" {
		q += ` AND h.target = ?`
		args = append(args, f.Target)
	}
	if f.Latest {
		q += ` AND h.id = (SELECT h2.id FROM device_health h2 JOIN runs r2 ON r2.id = h2.run_id WHERE h2.target = h.target
			ORDER BY h2.captured_ns DESC, r2.started_ns DESC, h2.id DESC LIMIT 1)`
	}
	q += ` ORDER BY r.started_ns, h.id`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []result.Health
	for rows.Next() {
		var id int64
		var data string
		if err := rows.Scan(&id, &data); err != nil {
			return nil, err
		}
		var h result.Health
		if err := json.Unmarshal([]byte(data), &h); err != nil {
			return nil, fmt.Errorf("health record %d: %w", id, err)
		}
		h.ID = id
		out = append(out, h)
	}
	return out, rows.Err()
}
