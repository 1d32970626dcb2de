package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

const csvHeader = "target,labels,round,workload,metric,value,unit"

// csvColumns are the columns a header may name: csvHeader's and the
// optional time.
var csvColumns = append(strings.Split(csvHeader, ","), "time")

// genericMethod is the method of every result read from the generic
// CSV/JSON (tool "csv" or "json").
func genericMethod(tool string) string {
	return "imported from " + tool + " (figures as given; method not recorded)"
}

// MeasuredAt returns the time a result of the generic CSV/JSON was
// measured, from its row's time column or field; ok is false for results
// of other formats and for rows without a time. Rows of different times
// are different results, so an import can store each time as a run of
// its own.
func MeasuredAt(r *result.Result) (t time.Time, ok bool) {
	if r.Started.IsZero() || (r.Method != genericMethod("csv") && r.Method != genericMethod("json")) {
		return time.Time{}, false
	}
	return r.Started, true
}

// parseRowTime reads a row's time: RFC 3339, with or without fractional
// seconds.
func parseRowTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("expected a time in RFC 3339 (2026-03-02T04:00:00Z), found %q", s)
	}
	return t, nil
}

// row is one figure of the generic CSV/JSON form, with where it came from.
type row struct {
	Target   string
	Labels   map[string]string
	Round    string
	Workload string
	Metric   string
	Value    float64
	Unit     string
	// Time is when the figure was measured; zero when the row has none.
	Time time.Time
	// at gives the line and column of a field, for errors; computed only
	// when needed, since finding a line in a large JSON file is costly.
	at func(field string) (line, col int)
	// line is where the row starts (0 when not cheaply known).
	line int
}

// parseCSV reads storbench's generic CSV: header
// target,labels,round,workload,metric,value,unit[,time] (any column order;
// labels, round and time may be left out), labels written k=v;k=v, time
// in RFC 3339.
func parseCSV(data []byte) (*parsed, error) {
	p := &parsed{tool: "csv"}
	err := streamCSV(bytes.NewReader(data), p, func(r result.Result, line int) error {
		p.add(r, line)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, nil
}

// completeLines passes on whole lines only: a last line without a line
// break is held back (the input was cut inside it) and reported by cut.
type completeLines struct {
	r     io.Reader
	hold  []byte // after the last line break seen
	out   []byte
	lines int // line breaks passed on
	eof   bool
}

func (c *completeLines) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.eof {
			return 0, io.EOF
		}
		buf := make([]byte, 32<<10)
		n, err := c.r.Read(buf)
		c.hold = append(c.hold, buf[:n]...)
		if first := bytes.IndexByte(c.hold, '\n'); first > MaxCSVLine || first < 0 && len(c.hold) > MaxCSVLine {
			return 0, errAt(c.lines+1, 0, "line %d is longer than %d bytes, the longest line a CSV may have", c.lines+1, MaxCSVLine)
		}
		if i := bytes.LastIndexByte(c.hold, '\n'); i >= 0 {
			c.out = append(c.out, c.hold[:i+1]...)
			c.lines += bytes.Count(c.hold[:i+1], []byte("\n"))
			c.hold = append(c.hold[:0], c.hold[i+1:]...)
		}
		if err == io.EOF {
			c.eof = true
		} else if err != nil {
			return 0, err
		}
	}
	n := copy(p, c.out)
	c.out = c.out[n:]
	return n, nil
}

// cut returns the line the input was cut in, if any.
func (c *completeLines) cut() (int, string, bool) {
	t := strings.TrimSpace(string(c.hold))
	return c.lines + 1, t, t != ""
}

// streamCSV reads the generic CSV from in, handing each finished result to
// emit as soon as no later row can belong to it, so memory stays bounded
// whatever the input's size. A last line without a line break may be cut
// in the middle of its value: it is not read, and p gets a result.ProblemCut.
func streamCSV(in io.Reader, p *parsed, emit func(result.Result, int) error) error {
	lb := &completeLines{r: in}
	r := csv.NewReader(lb)
	r.TrimLeadingSpace = true
	r.Comment = '#'
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	header, err := r.Read()
	if err != nil {
		return csvError(err, "the header "+csvHeader)
	}
	header = slices.Clone(header)
	index, err := csvHeaderIndex(r, header)
	if err != nil {
		return err
	}
	g := newGrouper("csv", emit)
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return csvError(err, "a CSV record")
		}
		line, _ := r.FieldPos(0)
		if len(rec) != len(header) {
			if len(rec) == 1 && strings.TrimSpace(rec[0]) == "" {
				continue
			}
			return errAt(line, 1, "expected %d fields as in the header, found %d", len(header), len(rec))
		}
		get := func(name string) string {
			if i, ok := index[name]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		cols := make(map[string]int, len(index))
		for name, i := range index {
			_, c := r.FieldPos(i)
			cols[name] = c
		}
		rw := row{Target: get("target"), Round: get("round"), Workload: get("workload"), Metric: get("metric"), Unit: get("unit"),
			at: func(f string) (int, int) { return line, cols[f] }, line: line}
		if labels := get("labels"); labels != "" {
			m, err := parseLabelList(labels)
			if err != nil {
				return errAt(line, cols["labels"], "%v", err)
			}
			rw.Labels = m
		}
		v := get("value")
		f, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return errAt(line, cols["value"], "expected a number in column value, found %.80q", v)
		}
		rw.Value = f
		if v := get("time"); v != "" {
			if rw.Time, err = parseRowTime(v); err != nil {
				return errAt(line, cols["time"], "%v", err)
			}
		}
		if err := g.add(rw); err != nil {
			return err
		}
		p.rows++
	}
	if line, text, cut := lb.cut(); cut {
		if len(text) > 40 {
			text = text[:40] + "..."
		}
		p.problems = append(p.problems, result.ImportProblem{Line: line, Kind: result.ProblemCut,
			Msg: fmt.Sprintf("the file ends in the middle of line %d (%q, no line break): the row was not read", line, text)})
	}
	if err := g.close(); err != nil {
		return err
	}
	if g.results == 0 {
		if len(p.problems) > 0 {
			return errAt(p.problems[0].Line, 0, "%s", p.problems[0].Msg)
		}
		return errAt(1, 0, "expected at least one result row after the header, found none")
	}
	return nil
}

// csvHeaderIndex maps each column of the header to its place, refusing an
// unknown or repeated column and a missing required one.
func csvHeaderIndex(r *csv.Reader, header []string) (map[string]int, error) {
	index := map[string]int{}
	for i, h := range header {
		h = strings.ToLower(strings.TrimSpace(h))
		if !slices.Contains(csvColumns, h) {
			line, col := r.FieldPos(i)
			return nil, errAt(line, col, "expected a column of %s, found %q", csvHeader, header[i])
		}
		if _, dup := index[h]; dup {
			line, col := r.FieldPos(i)
			return nil, errAt(line, col, "column %q appears twice in the header", h)
		}
		index[h] = i
	}
	for _, need := range []string{"target", "workload", "metric", "value", "unit"} {
		if _, ok := index[need]; !ok {
			line, _ := r.FieldPos(0)
			return nil, errAt(line, 1, "expected a %q column in the header (%s)", need, csvHeader)
		}
	}
	return index, nil
}

func csvError(err error, expected string) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return errAt(pe.Line, pe.Column, "expected %s, found malformed CSV: %v", expected, pe.Err)
	}
	if err == io.EOF {
		return errAt(1, 1, "expected %s, found an empty file", expected)
	}
	return err
}

// parseLabelList reads "k=v;k=v".
func parseLabelList(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, kv := range strings.Split(s, ";") {
		if strings.TrimSpace(kv) == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		k = strings.TrimSpace(k)
		if !ok || k == "" {
			return nil, fmt.Errorf("expected labels written k=v;k=v, found %q", kv)
		}
		out[k] = strings.TrimSpace(v)
	}
	return out, nil
}

// jsonRow is one element of the generic JSON form. Labels may be an object
// or the CSV's "k=v;k=v" string.
type jsonRow struct {
	Target   string          `json:"target"`
	Labels   json.RawMessage `json:"labels"`
	Round    string          `json:"round"`
	Workload string          `json:"workload"`
	Metric   string          `json:"metric"`
	Value    *float64        `json:"value"`
	Unit     string          `json:"unit"`
	Time     string          `json:"time"`
}

// parseGenericJSON reads the JSON form of the generic import: an array of
// objects with the CSV's fields, or {"results": [...]}.
func parseGenericJSON(data []byte) (*parsed, error) {
	start := bytes.IndexAny(data, "[{")
	if start < 0 {
		return nil, errAt(1, 1, "expected a JSON array of {target, labels, round, workload, metric, value, unit} objects")
	}
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	at := func() (int, int) { return lineCol(data, start+int(dec.InputOffset())) }
	tok, err := dec.Token()
	if err != nil {
		return nil, jsonError(data, start, err, "a JSON array")
	}
	if tok == json.Delim('{') {
		// {"results": [...]}
		for {
			key, err := dec.Token()
			if err != nil {
				return nil, jsonError(data, start+int(dec.InputOffset()), err, `{"results": [...]}`)
			}
			if key == json.Delim('}') {
				l, c := at()
				return nil, errAt(l, c, `expected a "results" array, found none`)
			}
			if key == "results" {
				break
			}
			var skip json.RawMessage
			if err := dec.Decode(&skip); err != nil {
				return nil, jsonError(data, start+int(dec.InputOffset()), err, "a JSON value")
			}
		}
		if tok, err = dec.Token(); err != nil {
			return nil, jsonError(data, start+int(dec.InputOffset()), err, "a JSON array")
		}
	}
	if tok != json.Delim('[') {
		l, c := at()
		return nil, errAt(l, c, "expected a JSON array of result objects, found %v", tok)
	}
	var rows []row
	for dec.More() {
		off := start + int(dec.InputOffset())
		// InputOffset is before the separating comma and blanks: step to the object.
		for off < len(data) && (data[off] == ',' || data[off] == ' ' || data[off] == '\n' || data[off] == '\r' || data[off] == '\t') {
			off++
		}
		pos := func() (int, int) { return lineCol(data, off) }
		var jr jsonRow
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(data, start+int(dec.InputOffset()), err, "a result object")
		}
		od := json.NewDecoder(bytes.NewReader(raw))
		od.DisallowUnknownFields()
		if err := od.Decode(&jr); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				l, c := lineCol(data, off+int(te.Offset))
				return nil, errAt(l, c, "expected a %s for %q, found a JSON %s", te.Type, te.Field, te.Value)
			}
			line, col := pos()
			return nil, errAt(line, col, "expected an object with fields %s: %v", csvHeader, err)
		}
		rw := row{Target: jr.Target, Round: jr.Round, Workload: jr.Workload, Metric: jr.Metric, Unit: jr.Unit, at: func(string) (int, int) { return pos() }}
		if jr.Value == nil {
			line, col := pos()
			return nil, errAt(line, col, `expected a number in "value", found none`)
		}
		rw.Value = *jr.Value
		if jr.Time != "" {
			if rw.Time, err = parseRowTime(jr.Time); err != nil {
				line, col := pos()
				return nil, errAt(line, col, `"time": %v`, err)
			}
		}
		if len(jr.Labels) > 0 && string(jr.Labels) != "null" {
			var m map[string]string
			var s string
			switch {
			case json.Unmarshal(jr.Labels, &m) == nil:
				rw.Labels = m
			case json.Unmarshal(jr.Labels, &s) == nil:
				if rw.Labels, err = parseLabelList(s); err != nil {
					line, col := pos()
					return nil, errAt(line, col, "%v", err)
				}
			default:
				line, col := pos()
				return nil, errAt(line, col, `expected "labels" as an object of strings or "k=v;k=v", found %s`, jr.Labels)
			}
		}
		rows = append(rows, rw)
	}
	if _, err := dec.Token(); err != nil {
		return nil, jsonError(data, start+int(dec.InputOffset()), err, "the end of the array")
	}
	return rowsToResults(rows, "json")
}

// rowsToResults validates rows and gathers them into results (see
// grouper).
func rowsToResults(rows []row, tool string) (*parsed, error) {
	p := &parsed{tool: tool}
	g := newGrouper(tool, func(r result.Result, line int) error {
		p.add(r, line)
		return nil
	})
	for _, rw := range rows {
		if err := g.add(rw); err != nil {
			return nil, err
		}
		p.rows++
	}
	if err := g.close(); err != nil {
		return nil, err
	}
	if len(p.results) == 0 {
		return nil, errAt(1, 0, "expected at least one result row after the header, found none")
	}
	return p, nil
}

// maxOpenResults bounds how many results a generic import keeps open:
// rows of one result further apart than this many results start a new
// repetition instead of joining it.
const maxOpenResults = 4096

// grouper gathers rows into results: one result per target, round,
// workload and labels; a metric given again for the same key goes to the
// next repetition (the first one still missing that metric). Results are
// handed to emit in the order they were started, once they are closed:
// when more than maxOpenResults are open, or at the end.
type grouper struct {
	tool    string
	emit    func(result.Result, int) error
	open    map[string][]*openResult
	queue   []*openResult
	nOpen   int
	maxRep  map[uint64]int32
	results int
}

type openResult struct {
	r      result.Result
	base   string
	set    uint16 // metrics given, by index in result.Metrics
	line   int
	closed bool
}

func newGrouper(tool string, emit func(result.Result, int) error) *grouper {
	return &grouper{tool: tool, emit: emit, open: map[string][]*openResult{}, maxRep: map[uint64]int32{}}
}

func (g *grouper) add(rw row) error {
	if err := rw.validate(); err != nil {
		return err
	}
	if rw.Round == "" {
		rw.Round = result.RoundIsolated
	}
	bit := uint16(1) << result.MetricIndex(rw.Metric)
	r := result.Result{Target: rw.Target, Round: rw.Round, Workload: rw.Workload, Labels: rw.Labels,
		Started: rw.Time, Finished: rw.Time}
	base := repKey(&r)
	if !rw.Time.IsZero() {
		// Figures measured at different times are different results.
		base += "\x00" + rw.Time.UTC().Format(time.RFC3339Nano)
	}
	for _, o := range g.open[base] {
		if o.set&bit == 0 {
			setMetric(&o.r, rw)
			o.set |= bit
			return nil
		}
	}
	h := fnv.New64a()
	h.Write([]byte(base))
	k := h.Sum64()
	g.maxRep[k]++
	r.Repetition = int(g.maxRep[k])
	r.Method = genericMethod(g.tool)
	r.DisplayUnits = map[string]string{}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	o := &openResult{r: r, base: base, set: bit, line: rw.line}
	setMetric(&o.r, rw)
	g.open[base] = append(g.open[base], o)
	g.queue = append(g.queue, o)
	g.nOpen++
	for g.nOpen > maxOpenResults {
		if err := g.closeOldest(); err != nil {
			return err
		}
	}
	return nil
}

func (g *grouper) closeOldest() error {
	for len(g.queue) > 0 {
		o := g.queue[0]
		g.queue[0] = nil
		g.queue = g.queue[1:]
		if o.closed {
			continue
		}
		o.closed = true
		g.nOpen--
		list := g.open[o.base]
		for i, x := range list {
			if x == o {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(g.open, o.base)
		} else {
			g.open[o.base] = list
		}
		for _, d := range []*result.Direction{o.r.Read, o.r.Write} {
			if d != nil {
				result.SortPercentiles(d.Completion.Percentiles)
			}
		}
		g.results++
		return g.emit(o.r, o.line)
	}
	return nil
}

// close hands every open result to emit.
func (g *grouper) close() error {
	for g.nOpen > 0 {
		if err := g.closeOldest(); err != nil {
			return err
		}
	}
	return nil
}

func (rw row) validate() error {
	for _, f := range []struct{ name, value string }{{"target", rw.Target}, {"workload", rw.Workload}, {"round", rw.Round}} {
		if len(f.value) > MaxName {
			return rw.errAt(f.name, "expected a %s name of at most %d bytes, found %d bytes", f.name, MaxName, len(f.value))
		}
	}
	for _, k := range slices.Sorted(maps.Keys(rw.Labels)) {
		if err := result.CheckUserLabel(k, rw.Labels[k]); err != nil {
			return rw.errAt("labels", "%v", err)
		}
	}
	switch {
	case rw.Target == "":
		return rw.errAt("target", "expected a target name, found an empty field")
	case rw.Workload == "":
		return rw.errAt("workload", "expected a workload name, found an empty field")
	case !slices.Contains(result.Metrics, rw.Metric):
		return rw.errAt("metric", "expected a metric (%s), found %q", strings.Join(result.Metrics, ", "), rw.Metric)
	case math.IsNaN(rw.Value) || math.IsInf(rw.Value, 0) || rw.Value < 0:
		return rw.errAt("value", "expected a non-negative number, found %v", rw.Value)
	}
	var ok bool
	switch rw.Metric {
	case result.MetricIOPS:
		ok = rw.Unit == "IOPS"
	case result.MetricBW:
		_, ok = units.ThroughputFactor(rw.Unit)
		ok = ok && rw.Unit != "KB/s" && rw.Unit != "TB/s" && rw.Unit != "TiB/s"
	default:
		_, ok = units.LatencyFactor(rw.Unit)
	}
	if !ok {
		return rw.errAt("unit", "expected a unit for %s (%s), found %q", rw.Metric, unitsFor(rw.Metric), rw.Unit)
	}
	switch rw.Metric {
	case result.MetricIOPS:
		if rw.Value > MaxIOPS {
			return rw.errAt("value", "expected at most %g IOPS (no storage device does more), found %v", float64(MaxIOPS), rw.Value)
		}
	case result.MetricBW:
		if f, _ := units.ThroughputFactor(rw.Unit); rw.Value*f > MaxBytesPerSec {
			return rw.errAt("value", "expected at most %g B/s (no storage device does more), found %v %s", float64(MaxBytesPerSec), rw.Value, rw.Unit)
		}
	default:
		if f, _ := units.LatencyFactor(rw.Unit); rw.Value*f > float64(MaxLatency) {
			return rw.errAt("value", "expected a latency of at most %v, found %v %s", MaxLatency, rw.Value, rw.Unit)
		}
	}
	return nil
}

func unitsFor(metric string) string {
	switch metric {
	case result.MetricIOPS:
		return "IOPS"
	case result.MetricBW:
		return "B/s, kB/s, KiB/s, MB/s, MiB/s, GB/s, GiB/s"
	}
	return "ns, us, ms, s"
}

// setMetric stores a row's value, in base units, in the direction the
// workload uses (a built-in workload's, or "write" when the name says so).
func setMetric(r *result.Result, rw row) {
	dir := csvDirection(r, rw.Workload)
	r.DisplayUnits[rw.Metric] = rw.Unit
	switch rw.Metric {
	case result.MetricIOPS:
		dir.IOPS = rw.Value
	case result.MetricBW:
		f, _ := units.ThroughputFactor(rw.Unit)
		dir.BytesPerSec = rw.Value * f
	case result.MetricLatMean:
		f, _ := units.LatencyFactor(rw.Unit)
		dir.Completion.Mean = time.Duration(rw.Value * f)
	case result.MetricSyncP99:
		f, _ := units.LatencyFactor(rw.Unit)
		if r.Sync == nil {
			r.Sync = &result.Latency{}
		}
		r.Sync.Percentiles = setPercentile(r.Sync.Percentiles, 99, time.Duration(rw.Value*f))
	default:
		f, _ := units.LatencyFactor(rw.Unit)
		p := map[string]float64{result.MetricLatP50: 50, result.MetricLatP90: 90, result.MetricLatP99: 99, result.MetricLatP999: 99.9}[rw.Metric]
		dir.Completion.Percentiles = setPercentile(dir.Completion.Percentiles, p, time.Duration(rw.Value*f))
	}
}

func setPercentile(ps []result.Percentile, p float64, v time.Duration) []result.Percentile {
	for i := range ps {
		if ps[i].P == p {
			ps[i].Value = v
			return ps
		}
	}
	return append(ps, result.Percentile{P: p, Value: v})
}

func csvDirection(r *result.Result, workload string) *result.Direction {
	write := false
	if m, ok := BuiltinWorkload(workload); ok {
		write = m.RW == "write" || m.RW == "randwrite"
	} else {
		w := strings.ToLower(workload)
		write = strings.Contains(w, "write") && !strings.Contains(w, "read")
	}
	if write {
		if r.Write == nil {
			r.Write = &result.Direction{}
		}
		return r.Write
	}
	if r.Read == nil {
		r.Read = &result.Direction{}
	}
	return r.Read
}

func (rw row) errAt(field, format string, args ...any) error {
	line, col := rw.at(field)
	return errAt(line, col, format, args...)
}
