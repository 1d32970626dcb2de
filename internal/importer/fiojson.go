package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
)

// fioDoc is one fio JSON document of an imported file (the model is
// fio.Output, for every fio version) with where it was found.
type fioDoc struct {
	fio.Output
	// clientOptions are the global options of each client of a
	// client/server run with several clients: fio 3.x writes "global
	// options" as an array of objects naming their hostname and port.
	clientOptions []fio.Options
	raw           []byte
	line          int
}

// parseFioJSON reads fio's JSON or json+ output: one document, several
// concatenated ones (--status-interval snapshots, or several runs pasted
// together), possibly with fio's warnings or other text around them, and
// client/server output (client_stats). Status snapshots of one run are
// cumulative, so only the last of each run is kept. A document that ends
// early (a cut file) gives the jobs that are complete in it; a document
// that is not valid JSON is skipped and reported, the others are read.
func parseFioJSON(data []byte) (*parsed, error) {
	p := &parsed{tool: "fio"}
	var docs []fioDoc
	var firstErr *ParseError
	pos := 0
	for pos < len(data) {
		start := nextObjectStart(data, pos)
		if start < 0 {
			break
		}
		d, end, err := decodeFioDoc(data, start)
		if err != nil {
			pe := toParseError(err)
			if firstErr == nil {
				firstErr = pe
			}
			if d != nil && len(d.Jobs)+len(d.ClientStats) > 0 || d != nil && d.Version != "" && end >= len(data) {
				// Cut: keep the complete jobs, say where it stopped.
				docs = append(docs, *d)
				p.problems = append(p.problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemCut, Msg: pe.Msg})
				break
			}
			if end >= len(data) {
				p.problems = append(p.problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemCut, Msg: pe.Msg})
				break
			}
			p.problems = append(p.problems, result.ImportProblem{Line: lineOf(data, start), Kind: result.ProblemSkipped, Msg: "a JSON document that could not be read: " + pe.Msg})
			pos = nextLine(data, start)
			continue
		}
		if d.Version == "" && len(d.Jobs) == 0 && len(d.ClientStats) == 0 {
			// fio's documents kept inside another tool's JSON (a metrics
			// collector's {"data": [...]}) are read where they are.
			nested := nestedFioDocs(data[start:end], d.line)
			if len(nested) == 0 {
				p.problems = append(p.problems, result.ImportProblem{Line: d.line, Kind: result.ProblemSkipped, Msg: `a JSON object without "fio version" or "jobs"`})
			}
			docs = append(docs, nested...)
		} else {
			docs = append(docs, *d)
		}
		pos = end
	}
	if len(docs) == 0 {
		if firstErr != nil {
			return nil, firstErr
		}
		return nil, errAt(1, 0, "expected a fio JSON document ({\"fio version\": ...}), found none")
	}
	kept := finalSnapshots(docs)
	if dropped := len(docs) - len(kept); dropped > 0 {
		p.notes = append(p.notes, fmt.Sprintf("%d fio JSON documents are status snapshots (--status-interval) of a run; kept the final document of each of %d run(s)", dropped, len(kept)))
	}
	for _, d := range kept {
		p.version = orDefault(d.Version, p.version)
		jobs := d.AllJobs()
		if len(jobs) == 0 {
			if len(p.problems) == 0 || p.problems[len(p.problems)-1].Kind != result.ProblemCut {
				p.problems = append(p.problems, result.ImportProblem{Line: d.line, Kind: result.ProblemSkipped, Msg: "a fio JSON document without any job"})
			}
			continue
		}
		for _, g := range groupJobs(jobs) {
			if want := parallelJobs(d, g[0]); len(g) < want {
				p.problems = append(p.problems, result.ImportProblem{Line: d.line, Kind: result.ProblemCut,
					Msg: fmt.Sprintf("fio job %q not stored: %d of its %d parallel jobs (numjobs without group_reporting) are in the file", g[0].Name, len(g), want)})
				continue
			}
			r, bs := fioJobResult(d, g)
			p.add(r, d.line)
			p.rows++
			for _, why := range consistency(&r, bs) {
				p.problems = append(p.problems, result.ImportProblem{Line: d.line, Kind: result.ProblemInconsistent, Msg: fmt.Sprintf("fio job %q: %s", g[0].Name, why)})
			}
		}
	}
	if len(p.results) == 0 && firstErr != nil {
		return nil, firstErr
	}
	return p, nil
}

// decodeFioDoc reads the JSON object starting at data[start]. It walks the
// object so that, when the input ends inside it, the jobs read so far are
// returned with the error (each job is decoded whole or not at all: no
// half-read number is ever kept).
func decodeFioDoc(data []byte, start int) (*fioDoc, int, error) {
	dec := json.NewDecoder(bytes.NewReader(data[start:]))
	dec.UseNumber()
	d := &fioDoc{line: lineOf(data, start)}
	fail := func(err error, what string) (*fioDoc, int, error) {
		off := start + int(dec.InputOffset())
		var se *json.SyntaxError
		if errors.As(err, &se) {
			// A token-walking decoder's offsets do not count every byte:
			// decode the whole document once more for the exact place.
			var raw json.RawMessage
			if e := json.NewDecoder(bytes.NewReader(data[start:])).Decode(&raw); e != nil {
				err = e
			}
		}
		return d, off, jsonError(data, start, err, what)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return fail(orErr(err, "not an object"), "a fio JSON document")
	}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return fail(err, "a key of the fio JSON document")
		}
		key, _ := tok.(string)
		switch key {
		case "jobs", "client_stats":
			if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
				return fail(orErr(err, "not an array"), fmt.Sprintf("the %q array", key))
			}
			for dec.More() {
				var j fio.JobResult
				if err := dec.Decode(&j); err != nil {
					return fail(err, "a complete job object")
				}
				if key == "jobs" {
					d.Jobs = append(d.Jobs, j)
				} else {
					d.ClientStats = append(d.ClientStats, j)
				}
			}
			if _, err := dec.Token(); err != nil {
				return fail(err, "the end of the jobs array")
			}
		default:
			var raw json.RawMessage
			if err := dec.Decode(&raw); err != nil {
				return fail(err, "a JSON value")
			}
			switch key {
			case "fio version":
				_ = json.Unmarshal(raw, &d.Version)
			case "timestamp":
				d.Timestamp = jsonInt(raw)
			case "timestamp_ms":
				d.TimestampMS = jsonInt(raw)
			case "global options":
				var o map[string]any
				var per []map[string]any
				if json.Unmarshal(raw, &o) == nil {
					d.GlobalOptions = fio.OptionsOf(o)
				} else if json.Unmarshal(raw, &per) == nil {
					for _, c := range per {
						d.clientOptions = append(d.clientOptions, fio.OptionsOf(c))
					}
				}
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return fail(err, "the end of the fio JSON document")
	}
	end := start + int(dec.InputOffset())
	d.raw = data[start:end]
	return d, end, nil
}

func orErr(err error, msg string) error {
	if err != nil {
		return err
	}
	return errors.New(msg)
}

func toParseError(err error) *ParseError {
	var pe *ParseError
	if errors.As(err, &pe) {
		return pe
	}
	return &ParseError{Msg: err.Error()}
}

func jsonInt(raw json.RawMessage) int64 {
	f, err := strconv.ParseFloat(strings.Trim(string(raw), `"`), 64)
	if err != nil || f < 0 || f > math.MaxInt64/2 {
		return 0
	}
	return int64(f)
}

func nextLine(data []byte, pos int) int {
	nl := bytes.IndexByte(data[pos:], '\n')
	if nl < 0 {
		return len(data)
	}
	return pos + nl + 1
}

// nextObjectStart returns the offset of the next '{' that begins a line
// (after optional blanks), or -1.
func nextObjectStart(data []byte, pos int) int {
	for pos < len(data) {
		i := pos
		for i < len(data) && (data[i] == ' ' || data[i] == '\t' || data[i] == '\r') {
			i++
		}
		if i < len(data) && data[i] == '{' {
			return i
		}
		nl := bytes.IndexByte(data[pos:], '\n')
		if nl < 0 {
			return -1
		}
		pos += nl + 1
	}
	return -1
}

// jsonError turns a decoding error at base+offset into a ParseError with
// the line and column.
func jsonError(data []byte, base int, err error, expected string) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	off := base
	msg := err.Error()
	cut := func() {
		off = len(data)
		msg = fmt.Sprintf("expected %s, found the end of the file in the middle of it (the file is cut: what follows was not read)", expected)
	}
	switch {
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		cut()
	case errors.As(err, &se):
		off += int(se.Offset)
		if off >= len(data) {
			cut()
		} else {
			msg = fmt.Sprintf("expected %s, found invalid JSON (%v)", expected, se)
		}
	case errors.As(err, &te):
		off += int(te.Offset)
		msg = fmt.Sprintf("expected %s for %q, found a JSON %s", te.Type, te.Field, te.Value)
	}
	line, col := lineCol(data, off)
	return errAt(line, col, "%s", msg)
}

func lineOf(data []byte, off int) int {
	l, _ := lineCol(data, off)
	return l
}

// lineCol converts a byte offset into a 1-based line and column.
func lineCol(data []byte, off int) (int, int) {
	if off > len(data) {
		off = len(data)
	}
	if off < 0 {
		off = 0
	}
	line := 1 + bytes.Count(data[:off], []byte("\n"))
	col := off - bytes.LastIndexByte(data[:off], '\n')
	return line, col
}

// finalSnapshots keeps the last document of each run: consecutive
// documents with the same global options and jobs whose elapsed time keeps
// growing are --status-interval snapshots of one run.
func finalSnapshots(docs []fioDoc) []fioDoc {
	var out []fioDoc
	for i, d := range docs {
		if i+1 < len(docs) && sameRun(&d, &docs[i+1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func sameRun(a, b *fioDoc) bool {
	ja, jb := a.AllJobs(), b.AllJobs()
	if len(ja) != len(jb) || len(ja) == 0 || !maps.Equal(a.GlobalOptions, b.GlobalOptions) || a.Version != b.Version {
		return false
	}
	ta, tb := a.TimestampMS, b.TimestampMS
	if ta == 0 || tb == 0 {
		ta, tb = a.Timestamp*1000, b.Timestamp*1000
	}
	if tb <= ta {
		return false // the same document pasted twice, or out of order
	}
	for i := range ja {
		if ja[i].Name != jb[i].Name || ja[i].Hostname != jb[i].Hostname || jb[i].Elapsed < ja[i].Elapsed || !maps.Equal(ja[i].Options, jb[i].Options) {
			return false
		}
	}
	// A snapshot follows the previous one by about as long as the job ran
	// meanwhile; a separate run started after the first had finished.
	grown := float64(jb[0].Elapsed - ja[0].Elapsed)
	return float64(tb-ta)/1000 <= grown+1.5
}

// options are a job's options over the global ones; in client/server
// output with per-client global options, over those of its client.
func (d *fioDoc) options(j fio.JobResult) map[string]string {
	opts := map[string]string{}
	maps.Copy(opts, d.GlobalOptions)
	for _, c := range d.clientOptions {
		if c["hostname"] == j.Hostname && c["port"] == strconv.Itoa(j.Port) {
			maps.Copy(opts, c)
			delete(opts, "hostname")
			delete(opts, "port")
			break
		}
	}
	maps.Copy(opts, j.Options)
	return opts
}

// groupJobs puts together the jobs of one name in one group on one client
// (host and port: several fio servers may run on one host): numjobs=N
// without group_reporting prints N jobs that ran in parallel.
func groupJobs(jobs []fio.JobResult) [][]fio.JobResult {
	var out [][]fio.JobResult
	index := map[string]int{}
	for _, j := range jobs {
		k := fmt.Sprintf("%s\x00%d\x00%s\x00%d", j.Name, j.GroupID, j.Hostname, j.Port)
		if i, ok := index[k]; ok {
			out[i] = append(out[i], j)
			continue
		}
		index[k] = len(out)
		out = append(out, []fio.JobResult{j})
	}
	return out
}

// fioJobResult converts a group of parallel jobs; it also returns the
// block size the options name (0 when not one fixed size), for the
// consistency check.
func fioJobResult(d fioDoc, jobs []fio.JobResult) (result.Result, int64) {
	j := jobs[0]
	r := d.ResultOf(j)
	for _, other := range jobs[1:] {
		mergeParallel(&r, d.ResultOf(other))
	}
	opts := d.options(j)
	m := fioMethod(opts)
	if len(jobs) > 1 {
		m.NumJobs = len(jobs)
	}
	if m.RW == "" {
		m.RW = "read" // fio's default
	}
	r.Workload, _ = Workload(m)
	r.Method = fmt.Sprintf("%s job %q: %s", orDefault(d.Version, "fio"), j.Name, m.Describe())
	if e := opts["ioengine"]; e != "" {
		r.Method += " ioengine=" + e
	}
	r.Labels = map[string]string{string(result.LabelJob): j.Name}
	if n := fio.InFlight(d.GlobalOptions, j.Options); n > 0 {
		if opts["numjobs"] == "" {
			n *= len(jobs) // jobs run side by side, not one job's numjobs
		}
		result.LabelInFlight.Set(r.Labels, strconv.Itoa(n))
	}
	if d.Version != "" {
		// compare calls out figures of different fio versions side by side
		result.LabelFioVersion.Set(r.Labels, d.Version)
	}
	path := opts["filename"]
	if path == "" {
		path = opts["directory"]
	}
	switch {
	case j.Hostname != "":
		r.Target = j.Hostname
		if j.Port != 0 && j.Port != 8765 { // fio's default port
			r.Target = fmt.Sprintf("%s:%d", j.Hostname, j.Port)
		}
		if path != "" {
			result.LabelPath.Set(r.Labels, path)
		}
	case path != "":
		r.Target = path
	}
	ms := d.TimestampMS
	if ms == 0 {
		ms = d.Timestamp * 1000
	}
	if ms > 0 {
		r.Finished = time.UnixMilli(ms)
		var longest time.Duration
		for _, dir := range r.Directions() {
			longest = max(longest, dir.Runtime)
		}
		r.Started = r.Finished.Add(-longest)
	}
	r.RawFioJSON = d.raw
	bs := m.BlockSize
	if b := firstOf(opts, "bs", "blocksize"); strings.ContainsAny(b, ",:-") || opts["bssplit"] != "" || opts["bsrange"] != "" {
		bs = 0 // several block sizes
	}
	return r, bs
}

// nestedFioDocs finds fio documents (objects with "fio version" and jobs)
// anywhere inside a JSON value, in document order; line is where the
// enclosing value starts.
func nestedFioDocs(raw []byte, line int) []fioDoc {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return nil
	}
	var out []fioDoc
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["fio version"]; ok && (x["jobs"] != nil || x["client_stats"] != nil) {
				b, err := json.Marshal(x)
				if err != nil {
					return
				}
				if d, _, err := decodeFioDoc(b, 0); err == nil {
					d.line = line
					out = append(out, *d)
				}
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				walk(x[k])
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return out
}

// parallelJobs is how many job entries fio printed for a job of numjobs
// without group_reporting (1 with group_reporting).
func parallelJobs(d fioDoc, j fio.JobResult) int {
	opts := d.options(j)
	if flag(opts, "group_reporting") {
		return 1
	}
	return max(1, atoi(opts["numjobs"]))
}
