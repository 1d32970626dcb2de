package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
)

// fioDoc is one JSON document fio printed, with what the importer needs
// beyond internal/fio's view of it.
type fioDoc struct {
	fio.Output
	Timestamp     int64             `json:"timestamp"`
	GlobalOptions map[string]string `json:"global options"`
	raw           []byte
	line          func() int
}

// parseFioJSON reads fio's JSON or json+ output: one document, several
// concatenated ones (--status-interval snapshots, or several runs pasted
// together), possibly with fio's warnings around them, and client/server
// output (client_stats). Status snapshots of one run are cumulative, so
// only the last of each run is kept.
func parseFioJSON(data []byte) (*parsed, error) {
	docs, err := splitJSONDocs(data)
	if err != nil {
		return nil, err
	}
	if len(docs) == 0 {
		return nil, errAt(1, 0, "expected a fio JSON document ({\"fio version\": ...}), found none")
	}
	p := &parsed{tool: "fio"}
	var fdocs []fioDoc
	for _, d := range docs {
		var fd fioDoc
		if err := json.Unmarshal(d.raw, &fd); err != nil {
			return nil, jsonError(data, d.offset, err, "a fio JSON document")
		}
		if fd.Version == "" && len(fd.Jobs) == 0 && len(fd.ClientStats) == 0 {
			return nil, errAt(lineOf(data, d.offset), 0, `expected a fio JSON document with "fio version" and "jobs", found other JSON`)
		}
		fd.raw = d.raw
		off := d.offset
		fd.line = func() int { return lineOf(data, off) }
		fdocs = append(fdocs, fd)
	}
	kept := finalSnapshots(fdocs)
	if dropped := len(fdocs) - len(kept); dropped > 0 {
		p.notes = append(p.notes, fmt.Sprintf("%d fio JSON documents are status snapshots (--status-interval) of a run; kept the final document of each of %d run(s)", dropped, len(kept)))
	}
	for _, d := range kept {
		p.version = d.Version
		jobs := d.AllJobs()
		if len(jobs) == 0 {
			return nil, errAt(d.line(), 0, "expected at least one job in the fio JSON document, found none")
		}
		for _, g := range groupJobs(jobs) {
			r, err := fioJobResult(d, g)
			if err != nil {
				return nil, err
			}
			p.results = append(p.results, r)
			p.rows++
		}
	}
	return p, nil
}

type jsonDoc struct {
	raw    []byte
	offset int
}

// splitJSONDocs finds the top-level JSON objects in data, skipping any text
// between them (fio prints warnings on stdout, status output adds nothing
// else). A document starts with '{' at the start of a line.
func splitJSONDocs(data []byte) ([]jsonDoc, error) {
	var out []jsonDoc
	pos := 0
	for pos < len(data) {
		start := nextObjectStart(data, pos)
		if start < 0 {
			break
		}
		dec := json.NewDecoder(bytes.NewReader(data[start:]))
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, jsonError(data, start, err, "a complete JSON document")
		}
		end := start + int(dec.InputOffset())
		out = append(out, jsonDoc{raw: data[start:end], offset: start})
		pos = end
	}
	return out, nil
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
	switch {
	case errors.As(err, &se):
		off += int(se.Offset)
		msg = fmt.Sprintf("expected %s, found invalid JSON (%v)", expected, se)
	case errors.As(err, &te):
		off += int(te.Offset)
		msg = fmt.Sprintf("expected %s for %q, found a JSON %s", te.Type, te.Field, te.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		off = len(data)
		msg = fmt.Sprintf("expected %s, found the end of the file in the middle of it", expected)
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
		if i+1 < len(docs) && sameRun(d, docs[i+1]) {
			continue
		}
		out = append(out, d)
	}
	return out
}

func sameRun(a, b fioDoc) bool {
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

// groupJobs puts together the jobs of one name in one group on one host:
// numjobs=N without group_reporting prints N jobs that ran in parallel.
func groupJobs(jobs []fio.JobResult) [][]fio.JobResult {
	var out [][]fio.JobResult
	index := map[string]int{}
	for _, j := range jobs {
		k := fmt.Sprintf("%s\x00%d\x00%s", j.Name, j.GroupID, j.Hostname)
		if i, ok := index[k]; ok {
			out[i] = append(out[i], j)
			continue
		}
		index[k] = len(out)
		out = append(out, []fio.JobResult{j})
	}
	return out
}

func fioJobResult(d fioDoc, jobs []fio.JobResult) (result.Result, error) {
	j := jobs[0]
	r := fio.ToResult(j)
	for _, other := range jobs[1:] {
		mergeParallel(&r, fio.ToResult(other))
	}
	opts := map[string]string{}
	maps.Copy(opts, d.GlobalOptions)
	maps.Copy(opts, j.Options)
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
	r.Labels = map[string]string{}
	path := opts["filename"]
	if path == "" {
		path = opts["directory"]
	}
	switch {
	case j.Hostname != "":
		r.Target = j.Hostname
		if path != "" {
			r.Labels["path"] = path
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
	return r, nil
}

// fioMethod reads a workload's method from fio options.
func fioMethod(o map[string]string) Method {
	m := Method{RW: firstOf(o, "rw", "readwrite")}
	if i := strings.IndexByte(m.RW, ':'); i >= 0 { // rw=randread:8
		m.RW = m.RW[:i]
	}
	if bs, ok := fioSize(firstOf(o, "bs", "blocksize")); ok {
		m.BlockSize = bs
	}
	m.IODepth = atoi(o["iodepth"])
	m.NumJobs = atoi(o["numjobs"])
	if v, ok := o["rwmixread"]; ok {
		m.RWMixRead = atoi(v)
	} else if v, ok := o["rwmixwrite"]; ok {
		m.RWMixRead = 100 - atoi(v)
	}
	direct := false
	if _, ok := o["direct"]; ok {
		direct = flag(o, "direct")
	} else if _, ok := o["buffered"]; ok {
		direct = !flag(o, "buffered")
	}
	m.Direct = &direct
	m.Sync = flag(o, "sync") || o["sync"] == "sync" || o["sync"] == "dsync"
	m.Fdatasync = atoi(o["fdatasync"])
	m.Fsync = atoi(o["fsync"])
	m.EndFsync = flag(o, "end_fsync")
	switch o["ioengine"] {
	case "sync", "psync", "vsync", "pvsync", "pvsync2":
		m.IODepth = 1 // synchronous engines cannot queue
	}
	return m
}

// mergeParallel adds the figures of a job that ran beside r (numjobs
// without group_reporting). IOPS, bandwidth and I/O counts add up; latency
// means are weighted by I/O count; percentiles keep the worst job's, an
// upper bound, since percentiles of separate jobs cannot be merged.
func mergeParallel(r *result.Result, o result.Result) {
	r.Read = mergeDir(r.Read, o.Read)
	r.Write = mergeDir(r.Write, o.Write)
	r.Trim = mergeDir(r.Trim, o.Trim)
	if o.Sync != nil {
		if r.Sync == nil {
			r.Sync = o.Sync
		} else {
			l := mergeLat(*r.Sync, *o.Sync)
			r.Sync = &l
		}
	}
	r.CPU.UserPercent += o.CPU.UserPercent
	r.CPU.SystemPercent += o.CPU.SystemPercent
	if o.Status == result.StatusFailed {
		r.Status, r.Error = o.Status, strings.TrimPrefix(r.Error+"; "+o.Error, "; ")
	}
}

func mergeDir(a, b *result.Direction) *result.Direction {
	if a == nil {
		return b
	}
	if b == nil {
		return a
	}
	out := *a
	out.IOPS += b.IOPS
	out.BytesPerSec += b.BytesPerSec
	out.TotalIOs += b.TotalIOs
	out.Bytes += b.Bytes
	out.Errors += b.Errors
	out.Runtime = max(a.Runtime, b.Runtime)
	out.Completion = mergeLat(a.Completion, b.Completion)
	out.Total = mergeLat(a.Total, b.Total)
	out.Submission = mergeLat(a.Submission, b.Submission)
	return &out
}

func mergeLat(a, b result.Latency) result.Latency {
	if !b.Measured() {
		return a
	}
	if !a.Measured() {
		return b
	}
	out := a
	na, nb := float64(max(a.Samples, 1)), float64(max(b.Samples, 1))
	out.Samples = a.Samples + b.Samples
	out.Mean = time.Duration((float64(a.Mean)*na + float64(b.Mean)*nb) / (na + nb))
	out.StdDev = max(a.StdDev, b.StdDev)
	if b.Min > 0 && (a.Min == 0 || b.Min < a.Min) {
		out.Min = b.Min
	}
	out.Max = max(a.Max, b.Max)
	out.Percentiles = nil
	for _, p := range a.Percentiles {
		v := p.Value
		if q, ok := b.At(p.P); ok && q > v {
			v = q
		}
		out.Percentiles = append(out.Percentiles, result.Percentile{P: p.P, Value: v})
	}
	return out
}

func firstOf(o map[string]string, keys ...string) string {
	for _, k := range keys {
		if v, ok := o[k]; ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func atoi(s string) int {
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil {
		return 0
	}
	return n
}

// truthy reads fio's booleans: an option given without a value is set.
func truthy(v string) bool {
	v = strings.TrimSpace(strings.ToLower(v))
	return v == "1" || v == "true" || v == "yes" || v == "on"
}

// flag reads a boolean fio option; given without a value, it is set.
func flag(o map[string]string, key string) bool {
	v, ok := o[key]
	return ok && (strings.TrimSpace(v) == "" || truthy(v))
}

func orDefault(s, d string) string {
	if s == "" {
		return d
	}
	return s
}
