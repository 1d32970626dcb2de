package store

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// FiguresReader is a Store that can list results as result.Figures: the
// precomputed value of every metric, without latency distributions. It is
// how compare and report read hundreds of thousands of results quickly.
type FiguresReader interface {
	Figures(ctx context.Context, f ResultFilter) ([]result.Figures, error)
}

var _ FiguresReader = (*SQLite)(nil)

// figureMetrics is the order of the values packed in result_figures.figures.
// Append only: stored rows keep the order they were written in, and values
// missing from an older, shorter row read as "not held".
var figureMetrics = []string{result.MetricIOPS, result.MetricBW, result.MetricLatMean, result.MetricLatP50,
	result.MetricLatP90, result.MetricLatP99, result.MetricLatP999, result.MetricSyncP99}

// figurePos maps result.Metrics positions to figureMetrics positions.
var figurePos = func() []int {
	pos := make([]int, len(result.Metrics))
	for i, m := range result.Metrics {
		pos[i] = -1
		for j, n := range figureMetrics {
			if n == m {
				pos[i] = j
			}
		}
	}
	return pos
}()

func packFigures(f result.Figures) []byte {
	b := make([]byte, 8*len(figureMetrics))
	for j := range figureMetrics {
		binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(math.NaN()))
	}
	for i, v := range f.Values {
		if j := figurePos[i]; j >= 0 {
			binary.LittleEndian.PutUint64(b[8*j:], math.Float64bits(v))
		}
	}
	return b
}

func unpackFigures(b []byte, vals []float64) []float64 {
	for i := range vals {
		vals[i] = math.NaN()
		if j := figurePos[i]; j >= 0 && 8*j+8 <= len(b) {
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*j:]))
		}
	}
	return vals
}

// insertFigures stores the figures of result id, computed by Result.Metric.
func insertFigures(ctx context.Context, tx *sql.Tx, id int64, r *result.Result, labels string) error {
	var limitedBy, evidence string
	if r.Bottleneck != nil {
		limitedBy, evidence = r.Bottleneck.LimitedBy, r.Bottleneck.Evidence
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO result_figures(result_id, run_id, target, round, repetition, workload, status, method, labels,
		figures, limited_by, evidence) VALUES(?,?,?,?,?,?,?,?,?,?,?,?)`,
		id, r.RunID, r.Target, r.Round, r.Repetition, r.Workload, string(r.Status), r.Method, labels, packFigures(r.Figures()), limitedBy, evidence)
	if err != nil {
		return fmt.Errorf("storing figures of %s on %s: %w", r.Workload, r.Target, err)
	}
	return nil
}

// where builds the WHERE clause of a filter over a table aliased t.
func (f ResultFilter) where(t string) (string, []any) {
	q := ` WHERE 1=1`
	var args []any
	if len(f.RunIDs) > 0 {
		q += ` AND ` + t + `.run_id IN (` + strings.TrimSuffix(strings.Repeat("?,", len(f.RunIDs)), ",") + `)`
		for _, id := range f.RunIDs {
			args = append(args, id)
		}
	}
	for _, c := range []struct{ col, val string }{{"workload", f.Workload}, {"target", f.Target}, {"round", f.Round}, {"status", string(f.Status)}} {
		if c.val != "" {
			q += ` AND ` + t + `.` + c.col + ` = ?`
			args = append(args, c.val)
		}
	}
	return q, args
}

// Figures returns the figures of the results f selects, in the order they
// were stored. It reads the compact result_figures table; results stored
// before it existed (schema 3) have their figures derived from the stored
// document, the same way. Figures sharing a label set share its map:
// callers must not modify Labels.
func (s *SQLite) Figures(ctx context.Context, f ResultFilter) ([]result.Figures, error) {
	// Counting through the run_id index sizes the result up front and tells
	// whether older results need reading (far cheaper than looking for
	// them row by row).
	rwhere, rargs := f.where("r")
	// One snapshot for the count and the rows: a writer committing
	// between them must not make the count wrong.
	tx, err := s.db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	var stored int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM results r`+rwhere, rargs...).Scan(&stored); err != nil {
		return nil, err
	}
	where, args := f.where("f")
	rows, err := tx.QueryContext(ctx, `SELECT f.result_id, f.run_id, f.target, f.round, f.repetition, f.workload, f.status, f.method, f.labels,
		f.figures, f.limited_by, f.evidence FROM result_figures f`+where+` ORDER BY f.result_id`, args...)
	if err != nil {
		return nil, err
	}
	rd := newFiguresReader(stored)
	out, err := rd.scan(rows, false)
	if err != nil {
		return nil, err
	}
	if stored == len(out) {
		return out, nil
	}
	rows, err = tx.QueryContext(ctx, `SELECT r.id, r.run_id, r.target, r.round, r.repetition, r.workload, r.status, r.method, r.labels, r.data,
		'', '' FROM results r`+rwhere+` AND NOT EXISTS (SELECT 1 FROM result_figures f WHERE f.result_id = r.id) ORDER BY r.id`, rargs...)
	if err != nil {
		return nil, err
	}
	rd.size = stored - len(out)
	older, err := rd.scan(rows, true)
	if err != nil {
		return nil, err
	}
	merged := make([]result.Figures, 0, len(out)+len(older))
	i, j := 0, 0
	for i < len(out) || j < len(older) {
		if j == len(older) || (i < len(out) && out[i].ID < older[j].ID) {
			merged = append(merged, out[i])
			i++
		} else {
			merged = append(merged, older[j])
			j++
		}
	}
	return merged, nil
}

// figuresReader scans figures rows. Thousands of results share a handful
// of runs, targets, workloads and label sets: it keeps one copy of each
// and reads text columns into reused buffers.
type figuresReader struct {
	strs   map[string]string
	labels map[string]map[string]string
	// values is carved into each result's Values: one allocation for all.
	values []float64
	size   int
}

func newFiguresReader(size int) *figuresReader {
	return &figuresReader{strs: map[string]string{}, labels: map[string]map[string]string{}, size: size}
}

// valuesSlot returns room for one result's values.
func (rd *figuresReader) valuesSlot() []float64 {
	n := len(result.Metrics)
	if len(rd.values) < n {
		rd.values = make([]float64, n*max(rd.size, 64))
	}
	v := rd.values[:n:n]
	rd.values = rd.values[n:]
	return v
}

func (rd *figuresReader) intern(b []byte) string {
	if v, ok := rd.strs[string(b)]; ok {
		return v
	}
	s := string(b)
	rd.strs[s] = s
	return s
}

// scan reads rows of the columns Figures selects; the tenth column holds
// packed figures, or (derive) a result's data document to compute them
// from.
func (rd *figuresReader) scan(rows *sql.Rows, derive bool) ([]result.Figures, error) {
	defer rows.Close()
	out := make([]result.Figures, 0, rd.size)
	var runID, target, round, workload, status, method, labels, figures, limitedBy, evidence sql.RawBytes
	for rows.Next() {
		var fg result.Figures
		if err := rows.Scan(&fg.ID, &runID, &target, &round, &fg.Repetition, &workload, &status, &method, &labels,
			&figures, &limitedBy, &evidence); err != nil {
			return nil, err
		}
		if derive {
			var d resultData
			if err := unmarshalAll(&d, string(figures)); err != nil {
				return nil, fmt.Errorf("result %d: %w", fg.ID, err)
			}
			r := result.Result{Read: d.Read, Write: d.Write, Trim: d.Trim, Sync: d.Sync, Bottleneck: d.Bottleneck}
			full := r.Figures()
			fg.Values, fg.Bottleneck = full.Values, full.Bottleneck
		} else {
			fg.Values = unpackFigures(figures, rd.valuesSlot())
			if len(limitedBy) > 0 {
				fg.Bottleneck = &result.Attribution{LimitedBy: rd.intern(limitedBy), Evidence: string(evidence)}
			}
		}
		fg.RunID, fg.Target, fg.Round, fg.Workload = rd.intern(runID), rd.intern(target), rd.intern(round), rd.intern(workload)
		fg.Status = result.Status(rd.intern(status))
		fg.Method = rd.intern(method)
		l, ok := rd.labels[string(labels)]
		if !ok {
			l = map[string]string{}
			if err := unmarshalAll(&l, string(labels)); err != nil {
				return nil, fmt.Errorf("result %d labels: %w", fg.ID, err)
			}
			rd.labels[string(labels)] = l
		}
		fg.Labels = l
		out = append(out, fg)
	}
	return out, rows.Err()
}
