// Package importer reads the outputs of other storage tools (fio JSON, text
// and terse output, iozone, dd, hdparm, ceph osd bench, smartctl) and
// storbench's generic CSV/JSON, and turns them into results and device
// health records ready to store. It never prints and never touches the
// store: the import command does.
package importer

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"unicode/utf16"

	"github.com/storbench/storbench/internal/result"
)

// Format names an input format.
type Format string

// The formats Parse reads.
const (
	FioJSON      Format = "fio-json"  // fio --output-format=json / json+, several documents, client/server
	FioText      Format = "fio-text"  // fio's normal output
	FioTerse     Format = "fio-terse" // fio --minimal / --output-format=terse, version 3
	Iozone       Format = "iozone"    // iozone -a tables
	DD           Format = "dd"        // GNU dd's summary lines
	Hdparm       Format = "hdparm"    // hdparm -t / -T / --direct timing lines
	CephBench    Format = "ceph-osd-bench"
	Smartctl     Format = "smartctl"      // smartctl -a / -A text
	SmartctlJSON Format = "smartctl-json" // smartctl --json
	CSV          Format = "csv"           // storbench's generic CSV
	JSON         Format = "json"          // storbench's generic JSON
)

// Formats lists every format, in the order the documentation names them.
var Formats = []Format{FioJSON, FioText, FioTerse, Iozone, DD, Hdparm, CephBench, Smartctl, SmartctlJSON, CSV, JSON}

// ParseFormat checks a --format value; "" is no format (detect it).
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return "", nil
	}
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	return "", fmt.Errorf("unknown format %q: choose one of %s", s, FormatNames())
}

// FormatNames lists every format's name, comma-separated, for help and
// error messages.
func FormatNames() string {
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return strings.Join(names, ", ")
}

// Names are the names of the formats fs, a file's formats.
func Names(fs []Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

// FormatList joins the formats a file was read in, as "fio-text+smartctl".
func FormatList(fs []Format) string { return strings.Join(Names(fs), "+") }

// Options change how Parse reads a file.
type Options struct {
	// Format forces a format; empty means detect it.
	Format Format
	// Target, when set, names the target of every result and health record
	// (otherwise each format's own: the fio file or host, osd.N, the device,
	// or the input's file name).
	Target string
}

// File is one parsed input file.
type File struct {
	Name    string   `json:"file"`
	SHA256  string   `json:"sha256"`
	Size    int64    `json:"size_bytes"`
	Formats []Format `json:"formats"`
	// Tool and ToolVersion name the program that wrote the input, where known.
	Tool        string          `json:"tool"`
	ToolVersion string          `json:"tool_version,omitempty"`
	Results     []result.Result `json:"results"`
	// ResultCount is how many results Stream handed on (Results is then
	// empty).
	ResultCount int             `json:"-"`
	Health      []result.Health `json:"health,omitempty"`
	// Rows counts the lines or records figures were read from (for iozone,
	// the table rows).
	Rows int `json:"rows"`
	// Skipped lists the line numbers of lines inside a table that were not
	// table rows (prose pasted into an iozone block).
	Skipped []int `json:"skipped_lines,omitempty"`
	// Notes say what the reader decided (e.g. which fio status snapshot it kept).
	Notes []string `json:"notes,omitempty"`
	// Problems are what was cut, refused, skipped or flagged, with lines.
	Problems []result.ImportProblem `json:"problems,omitempty"`
}

// ParseError is input the reader could not understand.
type ParseError struct {
	File   string
	Format Format
	Line   int // 1-based; 0 when unknown
	Column int // 1-based; 0 when not meaningful
	// Msg says what was expected and what was found.
	Msg string
}

func (e *ParseError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
		if e.Column > 0 {
			fmt.Fprintf(&b, ":%d", e.Column)
		}
	}
	b.WriteString(": ")
	if e.Format != "" {
		b.WriteString(string(e.Format) + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// errAt makes a ParseError; Parse fills in the file and format.
func errAt(line, col int, format string, args ...any) *ParseError {
	return &ParseError{Line: line, Column: col, Msg: fmt.Sprintf(format, args...)}
}

// parsed is what one format reader returns.
type parsed struct {
	tool, version string
	results       []result.Result
	// resultLines gives, for each result, the line it was read from (0
	// when unknown), for the plausibility check's errors.
	resultLines []int
	health      []result.Health
	rows        int
	skipped     []int
	notes       []string
	problems    []result.ImportProblem
	// tailParallel says the last result merges jobs that ran in parallel
	// and may be missing some of them when the input is cut.
	tailParallel bool
}

// add appends a result read at line.
func (p *parsed) add(r result.Result, line int) {
	p.results = append(p.results, r)
	for len(p.resultLines) < len(p.results)-1 {
		p.resultLines = append(p.resultLines, 0)
	}
	p.resultLines = append(p.resultLines, line)
}

func (p *parsed) lineOf(i int) int {
	if i < len(p.resultLines) {
		return p.resultLines[i]
	}
	return 0
}

type reader func(data []byte) (*parsed, error)

var readers = map[Format]reader{
	FioJSON:      parseFioJSON,
	FioText:      parseFioText,
	FioTerse:     parseFioTerse,
	Iozone:       parseIozone,
	DD:           parseDD,
	Hdparm:       parseHdparm,
	CephBench:    parseCeph,
	Smartctl:     parseSmartctl,
	SmartctlJSON: parseSmartctlJSON,
	CSV:          parseCSV,
	JSON:         parseGenericJSON,
}

// Parse reads one input file. name is used in errors, provenance and as
// the default target. A file that ends in the middle of a line or of a
// JSON document gives what is complete before that point, with a
// result.ProblemCut (see File.Cut); a figure is never taken from a cut number.
func Parse(name string, data []byte, opt Options) (*File, error) {
	sum := sha256.Sum256(data)
	f := &File{Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	data = bytes.TrimPrefix(decodeUTF16(data), []byte("\xef\xbb\xbf"))
	formats, err := formatsOf(name, data, opt.Format)
	if err != nil {
		return nil, err
	}
	f.Formats = formats
	body, cut := cutLastLine(data, f.Formats)
	if cut == nil {
		cut = cutStructure(body, f.Formats)
	}
	if cut != nil {
		f.Problems = append(f.Problems, *cut)
	}
	var tools, versions []string
	var firstErr *ParseError
	for _, format := range f.Formats {
		in := body
		if jsonFormat(format) {
			in = data
		}
		p, err := readers[format](in)
		if err != nil && len(f.Formats) > 1 {
			// One of several outputs in the file could not be read: the
			// others still are.
			pe := toParseError(err)
			f.Problems = append(f.Problems, result.ImportProblem{Line: pe.Line, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("%s output not read: %s", format, pe.Msg)})
			if firstErr == nil {
				firstErr = pe
				firstErr.File, firstErr.Format = name, format
			}
			continue
		}
		if err != nil {
			if pe, ok := err.(*ParseError); ok {
				pe.File, pe.Format = name, format
				if cut != nil && pe.Msg != "" {
					pe.Msg += "; " + cut.Msg
				}
				return nil, pe
			}
			return nil, &ParseError{File: name, Format: format, Msg: err.Error()}
		}
		f.screen(p, cut)
		f.Problems = append(f.Problems, p.problems...)
		if len(p.results) == 0 && len(p.health) == 0 {
			msg := "no results found in the file"
			if len(f.Problems) > 0 {
				msg = "no complete result in the file: " + f.Problems[0].String()
			}
			return nil, &ParseError{File: name, Format: format, Msg: msg}
		}
		p.labelSources()
		f.Results = append(f.Results, p.results...)
		f.Health = append(f.Health, p.health...)
		f.Rows += p.rows
		f.Skipped = append(f.Skipped, p.skipped...)
		f.Notes = append(f.Notes, p.notes...)
		tools = appendUnique(tools, p.tool)
		versions = appendUnique(versions, p.version)
	}
	if len(f.Results) == 0 && len(f.Health) == 0 && firstErr != nil {
		return nil, firstErr
	}
	f.Tool, f.ToolVersion = strings.Join(tools, "+"), strings.Join(versions, "+")
	f.finish(opt)
	return f, nil
}

// formatsOf is the format the caller forces, or the formats detected in
// the file.
func formatsOf(name string, data []byte, forced Format) ([]Format, error) {
	if forced == "" {
		return Detect(name, data)
	}
	if _, ok := readers[forced]; !ok {
		_, err := ParseFormat(string(forced))
		return nil, err
	}
	return []Format{forced}, nil
}

// screen drops from p's results those that cannot be stored, saying why:
// the last one when its parallel jobs may go on after a cut, and any whose
// figures are implausible.
func (f *File) screen(p *parsed, cut *result.ImportProblem) {
	if cut != nil && p.tailParallel && len(p.results) > 0 {
		// Its parallel jobs may go on after the cut: a sum of some of
		// them is not a figure of the run.
		last := len(p.results) - 1
		f.Problems = append(f.Problems, result.ImportProblem{Line: p.lineOf(last), Kind: result.ProblemCut,
			Msg: fmt.Sprintf("result %q not stored: its parallel jobs (numjobs without group_reporting) may go on after the cut", p.results[last].Workload)})
		p.results = p.results[:last]
	}
	kept := p.results[:0]
	for i := range p.results {
		if why := plausible(&p.results[i]); why != "" {
			f.Problems = append(f.Problems, result.ImportProblem{Line: p.lineOf(i), Kind: result.ProblemRefused,
				Msg: fmt.Sprintf("result %q not stored: %s", p.results[i].Workload, why)})
			continue
		}
		kept = append(kept, p.results[i])
	}
	p.results = kept
}

// labelSources labels each result with the tool that wrote it, unless the
// file named its source.
func (p *parsed) labelSources() {
	for i := range p.results {
		if p.results[i].Labels == nil {
			p.results[i].Labels = map[string]string{}
		}
		if _, ok := result.LabelSource.In(p.results[i].Labels); !ok {
			result.LabelSource.Set(p.results[i].Labels, p.tool)
		}
	}
}

// Cut reports whether the file ended in the middle of something.
func (f *File) Cut() bool {
	for _, p := range f.Problems {
		if p.Kind == result.ProblemCut {
			return true
		}
	}
	return false
}

// Refused counts the results that were read but not kept.
func (f *File) Refused() int {
	n := 0
	for _, p := range f.Problems {
		if p.Kind == result.ProblemRefused {
			n++
		}
	}
	return n
}

func jsonFormat(f Format) bool {
	return f == FioJSON || f == SmartctlJSON || f == JSON || f == CephBench
}

// Lines a tool prints last, so a file may end with them and no line break
// without having been cut.
var reCompleteEnd = map[Format]*regexp.Regexp{
	FioText: regexp.MustCompile(`(util=[\d.]+%|msec|\))\s*$`),
	Iozone:  regexp.MustCompile(`iozone test complete\.?\s*$`),
	DD:      regexp.MustCompile(`(B/s|records (in|out))\s*$`),
	Hdparm:  regexp.MustCompile(`/sec\s*$`),
}

var (
	reIozoneBanner = regexp.MustCompile(`Iozone: Performance Test`)
	reIozoneDone   = regexp.MustCompile(`iozone test complete`)
	reFioCPU       = regexp.MustCompile(`(?m)^\s+cpu\s*:`)
)

// cutStructure finds output that stops before its tool's last words, cut
// at a line break: iozone's banner without "iozone test complete", a fio
// job block without the cpu line fio prints for every job, dd's record
// counts without the summary line.
func cutStructure(data []byte, formats []Format) *result.ImportProblem {
	last := 1 + bytes.Count(bytes.TrimRight(data, "\n"), []byte("\n"))
	for _, f := range formats {
		switch f {
		case Iozone:
			if reIozoneBanner.Match(data) && !reIozoneDone.Match(data) {
				return &result.ImportProblem{Line: last, Kind: result.ProblemCut, Msg: fmt.Sprintf("the iozone output ends at line %d without \"iozone test complete.\": it is cut", last)}
			}
		case DD:
			if out := bytes.LastIndex(data, []byte("records out")); out >= 0 && bytes.LastIndex(data, []byte(" copied, ")) < out {
				return &result.ImportProblem{Line: last, Kind: result.ProblemCut, Msg: fmt.Sprintf("dd's \"records out\" line is not followed by its summary (\"... copied, ...\"): the file is cut at line %d", last)}
			}
		case FioText:
			jobs := reFioTextJob.FindAllIndex(data, -1)
			if len(jobs) == 0 {
				continue
			}
			tail := data[jobs[len(jobs)-1][0]:]
			if !reFioCPU.Match(tail) {
				return &result.ImportProblem{Line: last, Kind: result.ProblemCut, Msg: fmt.Sprintf("the last fio job block ends at line %d before fio's \"cpu :\" line: it is cut", last)}
			}
		}
	}
	return nil
}

// cutLastLine finds a last line without a line break that is not one a
// tool ends its output with: the file was cut there, so that line is not
// read (a number in it may be half of one).
func cutLastLine(data []byte, formats []Format) ([]byte, *result.ImportProblem) {
	lineFormats := false
	for _, f := range formats {
		lineFormats = lineFormats || !jsonFormat(f)
	}
	if !lineFormats || len(data) == 0 || data[len(data)-1] == '\n' {
		return data, nil
	}
	start := bytes.LastIndexByte(data, '\n') + 1
	last := strings.TrimSpace(string(data[start:]))
	if last == "" || strings.HasPrefix(last, "```") {
		return data, nil
	}
	for _, f := range formats {
		if re := reCompleteEnd[f]; re != nil && re.MatchString(last) {
			return data, nil
		}
	}
	n := 1 + bytes.Count(data[:start], []byte("\n"))
	shown := last
	if len(shown) > 40 {
		shown = "..." + shown[len(shown)-40:]
	}
	return data[:start], &result.ImportProblem{Line: n, Kind: result.ProblemCut,
		Msg: fmt.Sprintf("the file ends in the middle of line %d (%q, no line break): the line was not read", n, shown)}
}

// finish fills what every result needs: target, round, status, repetition.
func (f *File) finish(opt Options) {
	fin := newFinisher(f.Name, opt)
	for i := range f.Results {
		fin.result(&f.Results[i])
	}
	for i := range f.Health {
		h := &f.Health[i]
		if opt.Target != "" {
			h.Target = opt.Target
		} else if h.Target == "" {
			h.Target = fin.base
		}
	}
}

type finisher struct {
	base string
	opt  Options
	reps map[string]int
}

func newFinisher(name string, opt Options) *finisher {
	return &finisher{base: strings.TrimSuffix(filepath.Base(name), filepath.Ext(name)), opt: opt, reps: map[string]int{}}
}

func (fin *finisher) result(r *result.Result) {
	if fin.opt.Target != "" {
		r.Target = fin.opt.Target
	} else if r.Target == "" {
		r.Target = fin.base
	}
	if r.Round == "" {
		r.Round = result.RoundIsolated
	}
	if r.Status == "" {
		r.Status = result.StatusComplete
	}
	if r.Labels == nil {
		r.Labels = map[string]string{}
	}
	if r.Repetition == 0 {
		k := repKey(r)
		fin.reps[k]++
		r.Repetition = fin.reps[k]
	}
}

// repKey identifies results that are repetitions of one another.
func repKey(r *result.Result) string {
	keys := make([]string, 0, len(r.Labels))
	for k, v := range r.Labels {
		keys = append(keys, k+"="+v)
	}
	sort.Strings(keys)
	return r.Target + "\x00" + r.Round + "\x00" + r.Workload + "\x00" + strings.Join(keys, ";")
}

func appendUnique(list []string, s string) []string {
	if s == "" {
		return list
	}
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

// lines splits input into lines without their line endings.
func lines(data []byte) []string {
	s := strings.ReplaceAll(string(data), "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	return strings.Split(s, "\n")
}

func ptr[T any](v T) *T { return &v }

// decodeUTF16 converts UTF-16 text with a byte-order mark (what Windows
// PowerShell's ">" writes) to UTF-8; other input is returned as is.
func decodeUTF16(data []byte) []byte {
	if len(data) < 2 || len(data)%2 != 0 {
		return data
	}
	var le bool
	switch {
	case data[0] == 0xFF && data[1] == 0xFE:
		le = true
	case data[0] == 0xFE && data[1] == 0xFF:
	default:
		return data
	}
	u := make([]uint16, 0, len(data)/2-1)
	for i := 2; i+1 < len(data); i += 2 {
		if le {
			u = append(u, uint16(data[i])|uint16(data[i+1])<<8)
		} else {
			u = append(u, uint16(data[i])<<8|uint16(data[i+1]))
		}
	}
	return []byte(string(utf16.Decode(u)))
}
