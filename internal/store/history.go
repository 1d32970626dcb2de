package store

import (
	"context"
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
	rf := ResultFilter{Target: f.Target, Workload: f.Workload, Round: f.Round, Status: f.Status}
	where, args := rf.where("r")
	q := `SELECT r.id, CASE WHEN r.started_ns != 0 THEN r.started_ns ELSE ru.started_ns END AS measured
		FROM results r JOIN runs ru ON ru.id = r.run_id` + where
	if !f.Since.IsZero() {
		q += ` AND measured >= ?`
		args = append(args, f.Since.UnixNano())
	}
	q += ` ORDER BY measured, r.id`
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
	}
	type when struct {
		id int64
		ns int64
	}
	var order []when
	for rows.Next() {
		var w when
		if err := rows.Scan(&w.id, &w.ns); err != nil {
			rows.Close()
			return nil, fmt.Errorf("reading the history of %s: %w", f, err)
		}
		order = append(order, w)
	}
	if err := rows.Close(); err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
	}
	if len(order) == 0 {
		return nil, nil
	}
	figs, err := s.Figures(ctx, rf)
	if err != nil {
		return nil, fmt.Errorf("reading the history of %s: %w", f, err)
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
