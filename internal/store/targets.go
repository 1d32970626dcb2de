package store

import (
	"context"
	"fmt"
	"time"
)

// TargetSummary is one target that holds results: how many, and when the
// newest was measured.
type TargetSummary struct {
	Target  string    `json:"target"`
	Results int       `json:"results"`
	Last    time.Time `json:"last"`
}

// Targets lists every target holding results, the most recently measured
// first. It reads the results_target index only.
func (s *SQLite) Targets(ctx context.Context) ([]TargetSummary, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT target, count(*), max(started_ns) FROM results GROUP BY target ORDER BY max(started_ns) DESC, target`)
	if err != nil {
		return nil, fmt.Errorf("listing targets: %w", err)
	}
	defer rows.Close()
	var out []TargetSummary
	for rows.Next() {
		var t TargetSummary
		var last int64
		if err := rows.Scan(&t.Target, &t.Results, &last); err != nil {
			return nil, fmt.Errorf("listing targets: %w", err)
		}
		t.Last = fromNanos(last)
		out = append(out, t)
	}
	return out, rows.Err()
}
