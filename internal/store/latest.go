package store

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// LatestFigures is what the newest measurements say: for every target on
// its host, round and workload, the complete results of the newest run
// that holds any.
type LatestFigures struct {
	// Figures are those results (every repetition), in stored order.
	Figures []result.Figures
	// Runs are the runs Figures come from, newest first.
	Runs []result.Run

	index latestIndex
}

// latestKey is what "latest" is per: a target on its host (the same path
// on two hosts is two targets), one round, one workload.
type latestKey struct{ target, host, round, workload string }

// latestIndex is the newest run of every key as of one read, which the
// next call builds on by reading only the results stored since.
type latestIndex struct {
	newest map[latestKey]string // run ID
	// lastID is the greatest result ID read.
	lastID int64
	// reusable is false where a later call must read everything again.
	reusable bool
}

// Latest returns, for every target (on its host, by its hostname label),
// round and workload, the figures of the complete results of the newest
// run holding any, and those runs. Runs are ordered by the time they were
// measured (their start), then by ID. Failed and running results are not
// figures: a target whose newest run failed keeps its last good figures.
//
// prev, an earlier answer from the same database, makes the call read the
// keys of the results stored since prev only (a scrape every few seconds
// on a database of a hundred thousand results then reads a few rows); nil
// reads every result's key in one scan of the compact result_figures
// table. Either way it then reads the figures of the chosen runs only. A
// key whose chosen run no longer holds it (results deleted since prev)
// makes it read everything again.
func (s *SQLite) Latest(ctx context.Context, prev *LatestFigures) (*LatestFigures, error) {
	out, whole, err := s.latest(ctx, prev)
	if err == nil && !whole && prev != nil {
		return s.Latest(ctx, nil)
	}
	return out, err
}

// latest answers Latest; whole is false when a key's chosen run no longer
// holds it.
func (s *SQLite) latest(ctx context.Context, prev *LatestFigures) (out *LatestFigures, whole bool, err error) {
	idx, order, err := s.latestIndex(ctx, prev)
	if err != nil {
		return nil, false, fmt.Errorf("reading the latest results: %w", err)
	}
	out = &LatestFigures{index: idx}
	if len(idx.newest) == 0 {
		return out, true, nil
	}
	chosen := map[string]bool{}
	for _, run := range idx.newest {
		chosen[run] = true
	}
	ids := make([]string, 0, len(chosen))
	for id := range chosen {
		ids = append(ids, id)
	}
	slices.SortFunc(ids, func(a, b string) int { return cmp.Compare(order[b], order[a]) })

	figs, err := s.Figures(ctx, ResultFilter{RunIDs: ids, Status: result.StatusComplete})
	if err != nil {
		return nil, false, fmt.Errorf("reading the latest results: %w", err)
	}
	found := map[latestKey]bool{}
	for _, f := range figs {
		k := latestKey{f.Target, result.LabelHostname.Of(f.Labels), f.Round, f.Workload}
		if idx.newest[k] == f.RunID {
			out.Figures = append(out.Figures, f)
			found[k] = true
		}
	}
	if len(found) != len(idx.newest) {
		out.index.reusable = false
		return out, false, nil
	}
	rows, err := s.db.QueryContext(ctx, `SELECT `+s.runColumns()+` FROM runs WHERE id IN (`+
		strings.TrimSuffix(strings.Repeat("?,", len(ids)), ",")+`) ORDER BY started_ns DESC, id DESC`, anys(ids)...)
	if err != nil {
		return nil, false, fmt.Errorf("reading the latest runs: %w", err)
	}
	if out.Runs, err = scanRuns(rows); err != nil {
		return nil, false, fmt.Errorf("reading the latest runs: %w", err)
	}
	whole = len(out.Runs) == len(ids)
	out.index.reusable = out.index.reusable && whole
	return out, whole, nil
}

// latestIndex finds the newest run of every key, building on prev where
// it can, in one read transaction (one snapshot of the database); it
// returns the order of the runs too (see runOrder).
func (s *SQLite) latestIndex(ctx context.Context, prev *LatestFigures) (latestIndex, map[string]int, error) {
	var idx latestIndex
	tx, err := s.db.DB.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return idx, nil, err
	}
	defer tx.Rollback()
	var since int64
	missing := false
	if prev != nil && prev.index.reusable {
		since, idx.newest = prev.index.lastID, maps.Clone(prev.index.newest)
		if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) FROM results`).Scan(&idx.lastID); err != nil {
			return idx, nil, err
		}
	} else {
		// Results stored before result_figures existed (schema 3) have no
		// row there: such a database is read whole, from results as well.
		var results, figures int
		if err := tx.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM results), (SELECT count(*) FROM result_figures),
			(SELECT coalesce(max(id), 0) FROM results)`).Scan(&results, &figures, &idx.lastID); err != nil {
			return idx, nil, fmt.Errorf("counting results: %w", err)
		}
		missing = results != figures
		idx.newest = map[latestKey]string{}
	}

	hostPath := "$." + result.LabelHostname.String()
	keys := `SELECT target, round, workload, coalesce(json_extract(labels, ?), ''), run_id FROM result_figures WHERE status = ? AND result_id > ?`
	args := []any{hostPath, string(result.StatusComplete), since}
	if missing {
		keys += ` UNION SELECT target, round, workload, coalesce(json_extract(labels, ?), ''), run_id FROM results r WHERE status = ?
			AND NOT EXISTS (SELECT 1 FROM result_figures f WHERE f.result_id = r.id)`
		args = append(args, hostPath, string(result.StatusComplete))
	}
	order, err := runOrder(ctx, tx)
	if err != nil {
		return idx, nil, err
	}
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT * FROM (`+keys+`)`, args...)
	if err != nil {
		return idx, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k latestKey
		var run string
		if err := rows.Scan(&k.target, &k.round, &k.workload, &k.host, &run); err != nil {
			return idx, nil, err
		}
		if cur, ok := idx.newest[k]; !ok || order[run] > order[cur] {
			idx.newest[k] = run
		}
	}
	if err := rows.Err(); err != nil {
		return idx, nil, err
	}
	idx.reusable = !missing
	return idx, order, nil
}

// runOrder ranks every run by when it was measured: a higher rank is
// newer. Ties in start time go to the greater ID, as Runs lists them.
func runOrder(ctx context.Context, tx *sql.Tx) (map[string]int, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM runs ORDER BY started_ns, id`)
	if err != nil {
		return nil, fmt.Errorf("ordering runs: %w", err)
	}
	defer rows.Close()
	order := map[string]int{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("ordering runs: %w", err)
		}
		order[id] = len(order) + 1
	}
	return order, rows.Err()
}

func anys(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
