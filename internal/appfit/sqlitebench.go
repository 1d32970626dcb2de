package appfit

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"
)

// Mode is one SQLite configuration measured.
type Mode struct{ Journal, Synchronous string }

func (m Mode) String() string { return m.Journal + "/" + m.Synchronous }

// Modes are the configurations measured by default: WAL and the rollback
// journal, each with synchronous FULL and NORMAL.
var Modes = []Mode{{JournalWAL, SyncFull}, {JournalWAL, SyncNormal}, {JournalRollback, SyncFull}, {JournalRollback, SyncNormal}}

// SQLiteBenchOptions say where to measure SQLite and from how many clients.
type SQLiteBenchOptions struct {
	// Clients commit at once to one database (one client, or two on two
	// nodes), in a work directory of its own per mode inside each client's
	// Dir, removed after.
	Clients []Client
	ID      string
	Modes   []Mode
	// Duration is each client's time per mode; 0 means 3 s.
	Duration time.Duration
}

// SQLiteMeasurement is one mode measured by every client.
type SQLiteMeasurement struct {
	Mode    Mode        `json:"mode"`
	Clients []SQLiteRun `json:"clients"`
	// Where names each client's place, in Clients order.
	Where []string `json:"where"`
	// Check is the database after the clients finished: rows per client
	// against their commits, SQLite's integrity check.
	Check *SQLiteCheck `json:"check"`
}

// Lost is how many committed rows the database does not hold.
func (m SQLiteMeasurement) Lost() int64 {
	var lost int64
	for _, c := range m.Clients {
		if m.Check != nil {
			lost += max(0, c.Commits-m.Check.Rows[c.Client])
		}
	}
	return lost
}

// BenchSQLite measures each mode in turn with every client committing at
// once, then checks the database. Each mode's work directory is removed
// whatever happens.
func BenchSQLite(ctx context.Context, o SQLiteBenchOptions) ([]SQLiteMeasurement, error) {
	if len(o.Clients) == 0 {
		return nil, errors.New("appfit: SQLite needs at least one client")
	}
	if o.Duration <= 0 {
		o.Duration = 3 * time.Second
	}
	if len(o.Modes) == 0 {
		o.Modes = Modes
	}
	var out []SQLiteMeasurement
	for _, m := range o.Modes {
		id := o.ID + "-" + m.Journal + "-" + m.Synchronous
		if err := checkID(id); err != nil {
			return out, err
		}
		res, err := benchMode(ctx, o, m, id)
		if err != nil {
			return out, err
		}
		out = append(out, *res)
	}
	return out, nil
}

func benchMode(ctx context.Context, o SQLiteBenchOptions, m Mode, id string) (res *SQLiteMeasurement, err error) {
	work := o.Clients[0].workDir(id)
	defer func() { err = errors.Join(err, removeFrom(ctx, id, o.Clients...)) }()
	res = &SQLiteMeasurement{Mode: m, Clients: make([]SQLiteRun, len(o.Clients))}
	// The first client creates the database and its journal mode alone:
	// two first opens at once race to set WAL.
	var created SQLiteRun
	if err := runJSON(ctx, o.Clients[0], &created, sqliteArgs(work, m, 0, 1, 0)...); err != nil {
		return nil, err
	}
	errs := make([]error, len(o.Clients))
	var wg sync.WaitGroup
	for i, c := range o.Clients {
		res.Where = append(res.Where, c.Where)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runJSON(ctx, c, &res.Clients[i], sqliteArgs(c.workDir(id), m, i+1, 0, o.Duration)...)
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	res.Check = &SQLiteCheck{}
	if err := runJSON(ctx, o.Clients[0], res.Check, ProbeCommand, "--role", RoleSQLiteCheck, "--dir", work); err != nil {
		return nil, fmt.Errorf("checking the database after %s: %w", m, err)
	}
	return res, nil
}

func sqliteArgs(work string, m Mode, client, maxCommits int, d time.Duration) []string {
	return []string{ProbeCommand, "--role", RoleSQLite, "--dir", work, "--journal", m.Journal, "--synchronous", m.Synchronous,
		"--client", strconv.Itoa(client), "--max-commits", strconv.Itoa(maxCommits), "--duration", d.String()}
}
