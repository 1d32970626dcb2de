package store

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// HistoryFilter narrows History. Zero values mean no restriction.
type HistoryFilter struct {
	Target   string
	Workload string
	Round    string
	Status   result.Status
	// Labels: every key=value must be among a result's labels.
	Labels map[string]string
	// Since keeps results measured at or after it.
	Since time.Time
}

// MeasuredFigures is one result's figures with the time it was measured.
type MeasuredFigures struct {
	result.Figures
	// Measured is when the result was measured: its own start, or its
	// run's start for results stored without one.
	Measured time.Time `json:"measured"`
}

// History returns the figures of the results f selects, ordered by the
// time they were measured (then by the order they were stored): the
// history trend judges and the dashboard draws. It reads the same figures
// as Figures; callers must not modify their Labels.
func (s *SQLite) History(ctx context.Context, f HistoryFilter) ([]MeasuredFigures, error) {
	var all, compact int
	if err := s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM result_figures)`).Scan(&all, &compact); err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
	}
	var out []MeasuredFigures
	var err error
	if all == compact {
		out, err = s.compactHistory(ctx, f)
	} else {
		out, err = s.mixedHistory(ctx, f)
	}
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
	}
	return out, nil
}

// measuredColumn is the time a result was measured: its own start, else
// its run's.
const measuredColumn = `CASE WHEN r.started_ns != 0 THEN r.started_ns ELSE ru.started_ns END`

// compactHistory reads a database where every result has its compact
// figures: it filters on result_figures (a hundred bytes a row) and looks
// up only the matching results' times, in one read transaction.
func (s *SQLite) compactHistory(ctx context.Context, f HistoryFilter) ([]MeasuredFigures, error) {
	where, args := ResultFilter{Target: f.Target, Workload: f.Workload, Round: f.Round, Status: f.Status}.where("f")
	from := ` FROM result_figures f JOIN results r ON r.id = f.result_id JOIN runs ru ON ru.id = f.run_id` + where
	if !f.Since.IsZero() {
		from += ` AND ` + measuredColumn + ` >= ?`
		args = append(args, f.Since.UnixNano())
	}
	from += ` ORDER BY ` + measuredColumn + `, f.result_id`
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	order, err := measuredOrder(ctx, tx, `SELECT f.result_id, `+measuredColumn+from, args)
	if err != nil || len(order) == 0 {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT f.result_id, f.run_id, f.target, f.round, f.repetition, f.workload, f.status, f.method, f.labels,
		f.figures, f.limited_by, f.evidence`+from, args...)
	if err != nil {
		return nil, err
	}
	figs, err := newFiguresReader(len(order)).scan(rows, false)
	if err != nil {
		return nil, err
	}
	if len(figs) != len(order) {
		return nil, fmt.Errorf("%d figures for %d results", len(figs), len(order))
	}
	out := make([]MeasuredFigures, 0, len(order))
	for i, w := range order {
		if figs[i].ID != w.id {
			return nil, fmt.Errorf("figures of result %d where result %d was expected", figs[i].ID, w.id)
		}
		if hasLabels(figs[i].Labels, f.Labels) {
			out = append(out, MeasuredFigures{Figures: figs[i], Measured: fromNanos(w.ns)})
		}
	}
	return out, nil
}

// mixedHistory reads a database holding results stored before the compact
// figures existed (schema 3): their figures come from Figures, which
// derives them, and their times from the results.
func (s *SQLite) mixedHistory(ctx context.Context, f HistoryFilter) ([]MeasuredFigures, error) {
	rf := ResultFilter{Target: f.Target, Workload: f.Workload, Round: f.Round, Status: f.Status}
	where, args := rf.where("r")
	q := `SELECT r.id, ` + measuredColumn + ` FROM results r JOIN runs ru ON ru.id = r.run_id` + where
	if !f.Since.IsZero() {
		q += ` AND ` + measuredColumn + ` >= ?`
		args = append(args, f.Since.UnixNano())
	}
	order, err := measuredOrder(ctx, s.db, q+` ORDER BY `+measuredColumn+`, r.id`, args)
	if err != nil || len(order) == 0 {
		return nil, err
	}
	figs, err := s.Figures(ctx, rf)
	if err != nil {
		return nil, err
	}
	byID := make(map[int64]*result.Figures, len(figs))
	for i := range figs {
		byID[figs[i].ID] = &figs[i]
	}
	out := make([]MeasuredFigures, 0, len(order))
	for _, w := range order {
		fg, ok := byID[w.id]
		if !ok || !hasLabels(fg.Labels, f.Labels) {
			continue // stored after the first query, or another label
		}
		out = append(out, MeasuredFigures{Figures: *fg, Measured: fromNanos(w.ns)})
	}
	return out, nil
}

type measuredAt struct {
	id int64
	ns int64
}

// measuredOrder reads (result ID, measured time) rows.
func measuredOrder(ctx context.Context, db queryer, q string, args []any) ([]measuredAt, error) {
	rows, err := db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var order []measuredAt
	for rows.Next() {
		var w measuredAt
		if err := rows.Scan(&w.id, &w.ns); err != nil {
			return nil, err
		}
		order = append(order, w)
	}
	return order, rows.Err()
}

func hasLabels(have, want map[string]string) bool {
	for k, v := range want {
		if got, ok := have[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// String describes the filter for error messages.
func (f HistoryFilter) String() string {
	s := "results"
	for _, c := range []struct{ name, val string }{{"target", f.Target}, {"workload", f.Workload}, {"round", f.Round}} {
		if c.val != "" {
			s += " " + c.name + " " + c.val
		}
	}
	return s
}
