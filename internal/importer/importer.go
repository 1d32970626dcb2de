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

// ParseFormat checks a --format value.
func ParseFormat(s string) (Format, error) {
	for _, f := range Formats {
		if string(f) == s {
			return f, nil
		}
	}
	names := make([]string, len(Formats))
	for i, f := range Formats {
		names[i] = string(f)
	}
	return "", fmt.Errorf("unknown format %q: choose one of %s", s, strings.Join(names, ", "))
}

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
	Health      []result.Health `json:"health,omitempty"`
	// Rows counts the lines or records figures were read from (for iozone,
	// the table rows).
	Rows int `json:"rows"`
	// Skipped lists the line numbers of lines inside a table that were not
	// table rows (prose pasted into an iozone block).
	Skipped []int `json:"skipped_lines,omitempty"`
	// Notes say what the reader decided (e.g. which fio status snapshot it kept).
	Notes []string `json:"notes,omitempty"`
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
	health        []result.Health
	rows          int
	skipped       []int
	notes         []string
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
// the default target.
func Parse(name string, data []byte, opt Options) (*File, error) {
	sum := sha256.Sum256(data)
	f := &File{Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(data))}
	data = bytes.TrimPrefix(decodeUTF16(data), []byte("\xef\xbb\xbf"))
	if opt.Format != "" {
		if _, ok := readers[opt.Format]; !ok {
			_, err := ParseFormat(string(opt.Format))
			return nil, err
		}
		f.Formats = []Format{opt.Format}
	} else {
		fs, err := Detect(name, data)
		if err != nil {
			return nil, err
		}
		f.Formats = fs
	}
	var tools, versions []string
	for _, format := range f.Formats {
		p, err := readers[format](data)
		if err != nil {
			if pe, ok := err.(*ParseError); ok {
				pe.File, pe.Format = name, format
				return nil, pe
			}
			return nil, &ParseError{File: name, Format: format, Msg: err.Error()}
		}
		if len(p.results) == 0 && len(p.health) == 0 {
			return nil, &ParseError{File: name, Format: format, Msg: "no results found in the file"}
		}
		for i := range p.results {
			if p.results[i].Labels == nil {
				p.results[i].Labels = map[string]string{}
			}
			if _, ok := p.results[i].Labels["source"]; !ok {
				p.results[i].Labels["source"] = p.tool
			}
		}
		f.Results = append(f.Results, p.results...)
		f.Health = append(f.Health, p.health...)
		f.Rows += p.rows
		f.Skipped = append(f.Skipped, p.skipped...)
		f.Notes = append(f.Notes, p.notes...)
		tools = appendUnique(tools, p.tool)
		versions = appendUnique(versions, p.version)
	}
	f.Tool, f.ToolVersion = strings.Join(tools, "+"), strings.Join(versions, "+")
	f.finish(opt)
	return f, nil
}

// finish fills what every result needs: target, round, status, repetition.
func (f *File) finish(opt Options) {
	base := strings.TrimSuffix(filepath.Base(f.Name), filepath.Ext(f.Name))
	reps := map[string]int{}
	for i := range f.Results {
		r := &f.Results[i]
		if opt.Target != "" {
			r.Target = opt.Target
		} else if r.Target == "" {
			r.Target = base
		}
		if r.Round == "" {
			r.Round = result.RoundIsolated
		}
		if r.Status == "" {
			r.Status = result.StatusComplete
		}
		if r.Repetition == 0 {
			k := repKey(r)
			reps[k]++
			r.Repetition = reps[k]
		}
	}
	for i := range f.Health {
		h := &f.Health[i]
		if opt.Target != "" {
			h.Target = opt.Target
		} else if h.Target == "" {
			h.Target = base
		}
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
