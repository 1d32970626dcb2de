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

	"github.com/storbench/storbench/internal/result"
)

// fio's JSON changed over its versions; each figure is read from the field
// the version wrote, in that field's unit:
//
//	          io_bytes  bw / bw_bytes        latency objects             runtime
//	fio 2.x   KiB       bw KiB/s             slat/clat/lat, µs, with N   runt (ms)
//	3.0-3.1   bytes     bw KiB/s             slat_ns/clat_ns/lat_ns, no N runtime
//	3.2+      bytes     bw_bytes B/s, bw KiB/s  *_ns, N from 3.20         runtime
//
// json+ adds "bins" (latency in ns -> I/O count) to the latency objects.
// A figure missing from the file is left unset ("not reported"), never 0,
// and never the reason to drop the others.

type fioDoc struct {
	Version       string
	TimestampMS   int64
	Timestamp     int64
	GlobalOptions map[string]string
	// clientOptions are the global options of each client of a
	// client/server run with several clients: fio 3.x writes "global
	// options" as an array of objects naming their hostname and port.
	clientOptions []map[string]string
	Jobs          []fjJob
	ClientStats   []fjJob
	raw           []byte
	line          int
	v2            bool // fio 2.x units
}

type fjJob struct {
	Name     string            `json:"jobname"`
	GroupID  int               `json:"groupid"`
	Error    int               `json:"error"`
	Elapsed  int64             `json:"elapsed"`
	Options  map[string]any    `json:"job options"`
	Read     *fjDir            `json:"read"`
	Write    *fjDir            `json:"write"`
	Trim     *fjDir            `json:"trim"`
	Sync     *fjSync           `json:"sync"`
	UsrCPU   *float64          `json:"usr_cpu"`
	SysCPU   *float64          `json:"sys_cpu"`
	Hostname string            `json:"hostname"`
	Port     int               `json:"port"`
	opts     map[string]string // Options as strings
}

type fjDir struct {
	IOBytes  *float64 `json:"io_bytes"`
	IOKBytes *float64 `json:"io_kbytes"`
	BW       *float64 `json:"bw"`
	BWBytes  *float64 `json:"bw_bytes"`
	IOPS     *float64 `json:"iops"`
	Runtime  *float64 `json:"runtime"`
	Runt     *float64 `json:"runt"`
	TotalIOs *float64 `json:"total_ios"`
	ShortIOs *float64 `json:"short_ios"`
	DropIOs  *float64 `json:"drop_ios"`
	SlatNS   *fjLat   `json:"slat_ns"`
	ClatNS   *fjLat   `json:"clat_ns"`
	LatNS    *fjLat   `json:"lat_ns"`
	SlatUS   *fjLat   `json:"slat"`
	ClatUS   *fjLat   `json:"clat"`
	LatUS    *fjLat   `json:"lat"`
}

type fjSync struct {
	TotalIOs *float64 `json:"total_ios"`
	LatNS    *fjLat   `json:"lat_ns"`
	LatUS    *fjLat   `json:"lat"`
}

type fjLat struct {
	Min        *float64           `json:"min"`
	Max        *float64           `json:"max"`
	Mean       *float64           `json:"mean"`
	StdDev     *float64           `json:"stddev"`
	N          *float64           `json:"N"`
	Percentile map[string]float64 `json:"percentile"`
	Bins       map[string]float64 `json:"bins"`
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
		jobs := d.allJobs()
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
				var j fjJob
				if err := dec.Decode(&j); err != nil {
					return fail(err, "a complete job object")
				}
				j.opts = stringOptions(j.Options)
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
					d.GlobalOptions = stringOptions(o)
				} else if json.Unmarshal(raw, &per) == nil {
					for _, c := range per {
						d.clientOptions = append(d.clientOptions, stringOptions(c))
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
	d.v2 = strings.HasPrefix(d.Version, "fio-2.") || strings.HasPrefix(d.Version, "fio-1.")
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

func stringOptions(o map[string]any) map[string]string {
	out := make(map[string]string, len(o))
	for k, v := range o {
		switch x := v.(type) {
		case string:
			out[k] = x
		case nil:
			out[k] = ""
		default:
			out[k] = fmt.Sprint(x)
		}
	}
	return out
}

func nextLine(data []byte, pos int) int {
	nl := bytes.IndexByte(data[pos:], '\n')
	if nl < 0 {
		return len(data)
	}
	return pos + nl + 1
}

func (d *fioDoc) allJobs() []fjJob {
	if len(d.Jobs) > 0 {
		return d.Jobs
	}
	var out []fjJob
	for _, j := range d.ClientStats {
		// fio adds an "All clients" summary after the per-client jobs.
		if j.Name != "All clients" {
			out = append(out, j)
		}
	}
	return out
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
	ja, jb := a.allJobs(), b.allJobs()
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
		if ja[i].Name != jb[i].Name || ja[i].Hostname != jb[i].Hostname || jb[i].Elapsed < ja[i].Elapsed || !maps.Equal(ja[i].opts, jb[i].opts) {
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
func (d *fioDoc) options(j fjJob) map[string]string {
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
	maps.Copy(opts, j.opts)
	return opts
}

// groupJobs puts together the jobs of one name in one group on one client
// (host and port: several fio servers may run on one host): numjobs=N
// without group_reporting prints N jobs that ran in parallel.
func groupJobs(jobs []fjJob) [][]fjJob {
	var out [][]fjJob
	index := map[string]int{}
	for _, j := range jobs {
		k := fmt.Sprintf("%s\x00%d\x00%s\x00%d", j.Name, j.GroupID, j.Hostname, j.Port)
		if i, ok := index[k]; ok {
			out[i] = append(out[i], j)
			continue
		}
		index[k] = len(out)
		out = append(out, []fjJob{j})
	}
	return out
}

// fioJobResult converts a group of parallel jobs; it also returns the
// block size the options name (0 when not one fixed size), for the
// consistency check.
func fioJobResult(d fioDoc, jobs []fjJob) (result.Result, int64) {
	j := jobs[0]
	r := d.jobResult(j)
	for _, other := range jobs[1:] {
		mergeParallel(&r, d.jobResult(other))
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

// jobResult converts one job's figures, in the units of the document's
// fio version.
func (d *fioDoc) jobResult(j fjJob) result.Result {
	r := result.Result{Read: d.direction(j.Read), Write: d.direction(j.Write), Trim: d.direction(j.Trim)}
	if j.UsrCPU != nil {
		r.CPU.UserPercent = *j.UsrCPU
	}
	if j.SysCPU != nil {
		r.CPU.SystemPercent = *j.SysCPU
	}
	if s := j.Sync; s != nil {
		var l result.Latency
		switch {
		case s.LatNS != nil:
			l = latencyOf(s.LatNS, 1)
		case s.LatUS != nil:
			l = latencyOf(s.LatUS, 1000)
		}
		if l.Samples == 0 && s.TotalIOs != nil {
			l.Samples = int64(*s.TotalIOs)
		}
		if l.Measured() && (l.Mean > 0 || l.Max > 0 || len(l.Percentiles) > 0) {
			r.Sync = &l
		}
	}
	if j.Error != 0 {
		r.Status = result.StatusFailed
		r.Error = fmt.Sprintf("fio job %s: error %d", j.Name, j.Error)
	} else {
		r.Status = result.StatusComplete
	}
	return r
}

func (d *fioDoc) direction(x *fjDir) *result.Direction {
	if x == nil {
		return nil
	}
	// A negative figure is kept so that the plausibility check refuses
	// the result; only what is not a number at all reads as not reported.
	get := func(p *float64) float64 {
		if p == nil || math.IsNaN(*p) || math.IsInf(*p, 0) {
			return 0
		}
		return *p
	}
	out := &result.Direction{IOPS: get(x.IOPS), TotalIOs: int64(get(x.TotalIOs))}
	switch {
	case x.BWBytes != nil:
		out.BytesPerSec = get(x.BWBytes)
	case x.BW != nil:
		out.BytesPerSec = get(x.BW) * 1024 // KiB/s in every version
	}
	switch {
	case x.IOKBytes != nil && x.IOBytes == nil:
		out.Bytes = int64(get(x.IOKBytes) * 1024)
	case x.IOBytes != nil && d.v2 && x.IOKBytes == nil:
		out.Bytes = int64(get(x.IOBytes) * 1024) // fio 2.x: KiB
	case x.IOBytes != nil:
		out.Bytes = int64(get(x.IOBytes))
	}
	switch {
	case x.Runtime != nil:
		out.Runtime = time.Duration(get(x.Runtime) * float64(time.Millisecond))
	case x.Runt != nil:
		out.Runtime = time.Duration(get(x.Runt) * float64(time.Millisecond))
	}
	out.Errors = int64(get(x.ShortIOs) + get(x.DropIOs))
	out.Submission = pickLat(x.SlatNS, x.SlatUS)
	out.Completion = pickLat(x.ClatNS, x.ClatUS)
	out.Total = pickLat(x.LatNS, x.LatUS)
	if out.TotalIOs == 0 && out.Bytes == 0 && out.IOPS == 0 && out.BytesPerSec == 0 {
		return nil // the direction saw no I/O
	}
	return out
}

// pickLat reads the nanosecond object (fio 3) or else the microsecond one
// (fio 2).
func pickLat(ns, us *fjLat) result.Latency {
	if ns != nil {
		return latencyOf(ns, 1)
	}
	if us != nil {
		return latencyOf(us, 1000)
	}
	return result.Latency{}
}

// latencyOf converts a latency object whose values are in units of scale
// nanoseconds. A missing N (fio 3.0 to 3.19) does not drop the figures;
// json+ bins give percentiles when the object has none.
func latencyOf(l *fjLat, scale float64) result.Latency {
	ns := func(p *float64) time.Duration {
		switch {
		case p == nil || math.IsNaN(*p):
			return 0
		case *p*scale > float64(math.MaxInt64):
			return math.MaxInt64 // refused as implausible
		case *p*scale < math.MinInt64:
			return math.MinInt64
		}
		return time.Duration(*p * scale)
	}
	out := result.Latency{Mean: ns(l.Mean), StdDev: ns(l.StdDev), Min: ns(l.Min), Max: ns(l.Max)}
	if l.N != nil && *l.N > 0 {
		out.Samples = int64(*l.N)
	}
	for k, v := range l.Percentile {
		p, err := strconv.ParseFloat(k, 64)
		if err != nil || p <= 0 || p > 100 || math.IsNaN(v) {
			continue // fio pads the list with "0.00" : 0
		}
		out.Percentiles = append(out.Percentiles, result.Percentile{P: p, Value: ns(&v)})
	}
	if len(l.Bins) > 0 {
		ps, n := binPercentiles(l.Bins, scale)
		if len(out.Percentiles) == 0 {
			out.Percentiles = ps
		}
		if out.Samples == 0 {
			out.Samples = n
		}
	}
	result.SortPercentiles(out.Percentiles)
	if out.Mean == 0 && out.Max == 0 && out.Min == 0 && len(out.Percentiles) == 0 {
		return result.Latency{}
	}
	return out
}

// binPercentiles computes fio's usual percentiles from json+ bins: the
// value of the bin where the cumulative count reaches p percent.
var binPoints = []float64{1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99}

func binPercentiles(bins map[string]float64, scale float64) ([]result.Percentile, int64) {
	type bin struct{ v, n float64 }
	var bs []bin
	var total float64
	for k, n := range bins {
		v, err := strconv.ParseFloat(k, 64)
		if err != nil || bad(v) || bad(n) || n == 0 {
			continue
		}
		bs = append(bs, bin{v, n})
		total += n
	}
	if total == 0 {
		return nil, 0
	}
	sort.Slice(bs, func(i, j int) bool { return bs[i].v < bs[j].v })
	var out []result.Percentile
	var cum float64
	i := 0
	for _, p := range binPoints {
		need := p / 100 * total
		for i < len(bs) && cum+bs[i].n < need {
			cum += bs[i].n
			i++
		}
		k := min(i, len(bs)-1)
		out = append(out, result.Percentile{P: p, Value: time.Duration(bs[k].v * scale)})
	}
	return out, int64(total)
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
func parallelJobs(d fioDoc, j fjJob) int {
	opts := d.options(j)
	if flag(opts, "group_reporting") {
		return 1
	}
	return max(1, atoi(opts["numjobs"]))
}
