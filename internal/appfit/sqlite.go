package appfit

import (
	"context"
	"crypto/rand"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	_ "modernc.org/sqlite" // the pure-Go SQLite storbench's store uses too

	"github.com/storbench/storbench/internal/result"
)

// SQLite journal modes and synchronous settings measured.
const (
	JournalWAL      = "wal"
	JournalRollback = "delete"
	SyncFull        = "full"
	SyncNormal      = "normal"
	SyncOff         = "off"
)

// SQLiteDB is the database file every client of a work directory opens.
const SQLiteDB = "bench.db"

// SQLiteOptions say how one client measures commits.
type SQLiteOptions struct {
	// Dir is the work directory (named with WorkDirPrefix), created when
	// missing; every client uses Dir/SQLiteDB.
	Dir         string
	Journal     string
	Synchronous string
	// Duration is how long the client commits; MaxCommits stops it sooner
	// (0: no limit).
	Duration   time.Duration
	MaxCommits int
	// Client numbers the client's rows, so a check can count each client's.
	Client int
}

// RowBytes is each committed row's payload: a Home Assistant recorder
// state row is of this order (an entity's state and its attributes).
const RowBytes = 200

// SQLiteRun is one client's commits.
type SQLiteRun struct {
	Journal     string        `json:"journal"`
	Synchronous string        `json:"synchronous"`
	Client      int           `json:"client"`
	Commits     int64         `json:"commits"`
	Elapsed     time.Duration `json:"elapsed_ns"`
	// Latency is each commit's time (BEGIN IMMEDIATE to COMMIT's return).
	Latency result.Latency `json:"latency"`
	// Disk is the disk under the database; its counters' growth over the
	// run in DiskDelta (absent without one: ErrNoDisk).
	Disk      string        `json:"disk,omitempty"`
	DiskDelta *DiskCounters `json:"disk_delta,omitempty"`
	DiskNote  string        `json:"disk_note,omitempty"`
}

// CommitsPerSec is the run's commit rate.
func (r SQLiteRun) CommitsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Commits) / r.Elapsed.Seconds()
}

// FlushesPerCommit is the disk's flushes per commit, or -1 when not counted.
func (r SQLiteRun) FlushesPerCommit() float64 {
	if r.DiskDelta == nil || r.DiskDelta.Flushes < 0 || r.Commits == 0 {
		return -1
	}
	return float64(r.DiskDelta.Flushes) / float64(r.Commits)
}

func openDB(dir, journal, synchronous string) (*sql.DB, error) {
	if !slices.Contains([]string{JournalWAL, JournalRollback}, journal) {
		return nil, fmt.Errorf("appfit: journal %q: want %s or %s", journal, JournalWAL, JournalRollback)
	}
	if !slices.Contains([]string{SyncFull, SyncNormal, SyncOff}, synchronous) {
		return nil, fmt.Errorf("appfit: synchronous %q: want %s, %s or %s", synchronous, SyncFull, SyncNormal, SyncOff)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode("+journal+")")
	q.Add("_pragma", "synchronous("+synchronous+")")
	q.Set("_txlock", "immediate")
	u := url.URL{Scheme: "file", OmitHost: true, Path: filepath.Join(dir, SQLiteDB), RawQuery: q.Encode()}
	db, err := sql.Open("sqlite", u.String())
	if err != nil {
		return nil, fmt.Errorf("appfit: opening %s: %w", u.Path, err)
	}
	db.SetMaxOpenConns(1) // the pragmas hold per connection
	return db, nil
}

// MeasureSQLite commits one small row per transaction for o.Duration and
// times each commit.
func MeasureSQLite(ctx context.Context, o SQLiteOptions) (*SQLiteRun, error) {
	if !strings.HasPrefix(filepath.Base(o.Dir), WorkDirPrefix) {
		return nil, fmt.Errorf("appfit: work directory %s: its name must start with %s", o.Dir, WorkDirPrefix)
	}
	if err := mkdirShared(o.Dir); err != nil {
		return nil, err
	}
	db, err := openDB(o.Dir, o.Journal, o.Synchronous)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS states (id INTEGER PRIMARY KEY, client INTEGER NOT NULL, seq INTEGER NOT NULL, state BLOB NOT NULL)`); err != nil {
		return nil, fmt.Errorf("appfit: creating the table: %w", err)
	}
	run := &SQLiteRun{Journal: o.Journal, Synchronous: o.Synchronous, Client: o.Client}
	disk, derr := DiskOf(o.Dir)
	var before DiskCounters
	if derr == nil {
		before, derr = disk.Counters()
	}
	row := make([]byte, RowBytes)
	var lat []time.Duration
	start := time.Now()
	for time.Since(start) < o.Duration && (o.MaxCommits == 0 || len(lat) < o.MaxCommits) && ctx.Err() == nil {
		if _, err := rand.Read(row); err != nil {
			return nil, err
		}
		t0 := time.Now()
		if err := commit(ctx, db, o.Client, len(lat), row); err != nil {
			return nil, fmt.Errorf("appfit: commit %d (%s, synchronous=%s): %w", len(lat)+1, o.Journal, o.Synchronous, err)
		}
		lat = append(lat, time.Since(t0))
	}
	run.Elapsed, run.Commits = time.Since(start), int64(len(lat))
	if derr == nil {
		var after DiskCounters
		if after, derr = disk.Counters(); derr == nil {
			d := after.Sub(before)
			run.Disk, run.DiskDelta = disk.Name, &d
		}
	}
	if derr != nil {
		run.DiskNote = derr.Error()
	}
	run.Latency = Distribution(lat)
	if ctx.Err() != nil {
		return run, ctx.Err()
	}
	return run, nil
}

func commit(ctx context.Context, db *sql.DB, client, seq int, row []byte) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO states (client, seq, state) VALUES (?, ?, ?)`, client, seq, row); err != nil {
		return errors.Join(err, tx.Rollback())
	}
	return tx.Commit()
}

// SQLiteCheck is the database as found after its clients finished.
type SQLiteCheck struct {
	// Rows counts each client's rows.
	Rows map[int]int64 `json:"rows"`
	// Integrity is PRAGMA integrity_check's answer ("ok" when sound).
	Integrity string `json:"integrity"`
}

// CheckSQLite opens the work directory's database and counts its rows and
// runs SQLite's own integrity check.
func CheckSQLite(ctx context.Context, dir string) (*SQLiteCheck, error) {
	db, err := openDB(dir, JournalRollback, SyncFull)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	c := &SQLiteCheck{Rows: map[int]int64{}}
	var lines []string
	rows, err := db.QueryContext(ctx, `PRAGMA integrity_check`)
	if err != nil {
		return nil, fmt.Errorf("appfit: integrity_check: %w", err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			rows.Close()
			return nil, err
		}
		lines = append(lines, s)
	}
	rows.Close()
	c.Integrity = strings.Join(lines, "; ")
	rows, err = db.QueryContext(ctx, `SELECT client, count(*) FROM states GROUP BY client`)
	if err != nil {
		return c, fmt.Errorf("appfit: counting rows: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var client int
		var n int64
		if err := rows.Scan(&client, &n); err != nil {
			return c, err
		}
		c.Rows[client] = n
	}
	return c, rows.Err()
}

// Distribution summarises commit times with p50, p95, p99 and p99.9.
func Distribution(samples []time.Duration) result.Latency {
	l := result.Latency{Samples: int64(len(samples))}
	if len(samples) == 0 {
		return l
	}
	s := slices.Clone(samples)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	l.Min, l.Max, l.Mean = s[0], s[len(s)-1], sum/time.Duration(len(s))
	var sq float64
	for _, d := range s {
		x := float64(d - l.Mean)
		sq += x * x
	}
	l.StdDev = time.Duration(math.Sqrt(sq / float64(len(s))))
	for _, p := range []float64{50, 95, 99, 99.9} {
		i := int(p/100*float64(len(s))+0.5) - 1 // nearest rank
		l.Percentiles = append(l.Percentiles, result.Percentile{P: p, Value: s[min(max(i, 0), len(s)-1)]})
	}
	return l
}
