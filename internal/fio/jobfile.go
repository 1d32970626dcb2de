package fio

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strings"
	"unicode"

	"github.com/storbench/storbench/internal/inputfile"
)

// A JobFile is a user's fio job file read the way fio reads it (init.c
// __parse_jobs_ini, parse.c strip_blank_end, options.c fio_option_dup_subs):
//
//   - a line whose first non-blank character is ';' or '#' is a comment, and
//     anything from the first ';' and then the first '#' of a line is cut off
//     (so "rw=randread ; note" is "rw=randread");
//   - "include FILE" splices FILE's option lines in place; a relative FILE is
//     looked up in fio's working directory first and then beside the file
//     that includes it; included files hold no sections;
//   - ${VAR} is replaced by the environment variable VAR, empty when unset;
//   - a section whose name starts with "global" is global.
//
// storbench expands ${VAR} itself, from its own environment, so the file it
// hands fio holds no variable and means the same wherever fio runs.
type JobFile struct {
	// Path is the file as the user named it.
	Path     string
	Sections []JobSection
}

// Pos is a place in a job file or a file it includes.
type Pos struct {
	File string
	Line int
}

func (p Pos) String() string { return fmt.Sprintf("%s:%d", p.File, p.Line) }

// JobSection is one [name] section.
type JobSection struct {
	Name   string
	Global bool
	Pos    Pos
	Lines  []JobLine
}

// JobLine is one option line as fio parses it: comments cut, blanks
// trimmed, ${VAR} expanded.
type JobLine struct {
	Text string
	Pos  Pos
	// Added marks a line storbench added (filename or size left to the
	// runner); Why says why.
	Added bool
	Why   string
	// Was is the line as the user wrote it when storbench changed it.
	Was string
}

// Key is the option name of the line, as written.
func (l JobLine) Key() string {
	k, _, _ := strings.Cut(l.Text, "=")
	return strings.TrimRightFunc(k, unicode.IsSpace)
}

// Value is the option's value, "" for a flag.
func (l JobLine) Value() string {
	_, v, _ := strings.Cut(l.Text, "=")
	return v
}

// JobFileError is a job file fio would not read, or one storbench cannot
// judge, located in the user's file.
type JobFileError struct {
	Pos Pos
	Msg string
}

func (e *JobFileError) Error() string {
	if e.Pos.File == "" {
		return e.Msg
	}
	if e.Pos.Line == 0 {
		return e.Pos.File + ": " + e.Msg
	}
	return e.Pos.String() + ": " + e.Msg
}

// ReadOptions say where a job file is read.
type ReadOptions struct {
	// Getenv expands ${VAR}; nil means os.LookupEnv.
	Getenv func(string) (string, bool)
	// MaxBytes bounds the job file and its includes together; 0 means 1 MiB.
	MaxBytes int64
}

// maxLine is fio's OPT_LEN_MAX less its terminator: fio splits longer lines.
const maxLine = 4095

// maxIncludeDepth stops include cycles.
const maxIncludeDepth = 16

// ReadJobFile reads a job file and the files it includes.
func ReadJobFile(path string, o ReadOptions) (*JobFile, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading fio job: %w", err)
	}
	return ParseJobText(data, path, o)
}

// ParseJobText reads a job file's text; source names it in messages and
// anchors relative includes.
func ParseJobText(data []byte, source string, o ReadOptions) (*JobFile, error) {
	if o.Getenv == nil {
		o.Getenv = os.LookupEnv
	}
	if o.MaxBytes == 0 {
		o.MaxBytes = 1 << 20
	}
	r := &jobReader{opts: o}
	f := &JobFile{Path: source}
	lines, err := r.lines(source, data, 0)
	if err != nil {
		return nil, err
	}
	var cur *JobSection
	for _, l := range lines {
		if strings.HasPrefix(l.text, "[") {
			if !strings.HasSuffix(l.text, "]") || len(l.text) < 3 {
				return nil, &JobFileError{Pos: l.pos, Msg: fmt.Sprintf("section header %q: a section is [name]", l.text)}
			}
			name := l.text[1 : len(l.text)-1]
			if len(name) > 255 {
				return nil, &JobFileError{Pos: l.pos, Msg: "section name longer than fio's 255 characters"}
			}
			f.Sections = append(f.Sections, JobSection{Name: name, Global: strings.HasPrefix(name, "global"), Pos: l.pos})
			cur = &f.Sections[len(f.Sections)-1]
			continue
		}
		if cur == nil {
			return nil, &JobFileError{Pos: l.pos, Msg: fmt.Sprintf("option %q stands outside of any [section] (fio: option outside of [] job section)", l.text)}
		}
		text, err := expand(l.text, o.Getenv)
		if err != nil {
			return nil, &JobFileError{Pos: l.pos, Msg: err.Error()}
		}
		if err := checkKeywords(text); err != nil {
			return nil, &JobFileError{Pos: l.pos, Msg: err.Error()}
		}
		cur.Lines = append(cur.Lines, JobLine{Text: text, Pos: l.pos})
	}
	jobs := 0
	for _, s := range f.Sections {
		if !s.Global {
			jobs++
		}
	}
	if jobs == 0 {
		return nil, &JobFileError{Pos: Pos{File: source}, Msg: "no job section: a job file needs at least one [name] section besides [global]"}
	}
	return f, nil
}

type rawLine struct {
	text string
	pos  Pos
}

type jobReader struct {
	opts  ReadOptions
	total int64
}

// lines returns the significant lines of file, includes resolved. nested
// files (includes) may hold options only.
func (r *jobReader) lines(file string, data []byte, depth int) ([]rawLine, error) {
	r.total += int64(len(data))
	if r.total > r.opts.MaxBytes {
		return nil, &JobFileError{Pos: Pos{File: file}, Msg: fmt.Sprintf("job file and includes exceed %d bytes", r.opts.MaxBytes)}
	}
	if bytes.IndexByte(data, 0) >= 0 {
		return nil, &JobFileError{Pos: Pos{File: file}, Msg: "holds a NUL byte: not a fio job file"}
	}
	var out []rawLine
	for i, line := range strings.Split(string(data), "\n") {
		pos := Pos{File: file, Line: i + 1}
		if len(line) > maxLine {
			return nil, &JobFileError{Pos: pos, Msg: fmt.Sprintf("line longer than %d bytes, which fio splits into several options", maxLine)}
		}
		if isEmptyOrComment(line) {
			continue
		}
		line = strings.TrimLeftFunc(line, isBlank)
		if depth > 0 && strings.HasPrefix(line, "[") {
			return nil, &JobFileError{Pos: pos, Msg: "an included file may hold no sections (fio: No new sections in included files)"}
		}
		line = stripBlankEnd(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "include") && !strings.HasPrefix(line, "[") {
			if len(line) < len("include")+2 {
				return nil, &JobFileError{Pos: pos, Msg: "include names no file"}
			}
			// fio skips exactly one character after "include".
			name := line[len("include")+1:]
			if depth+1 > maxIncludeDepth {
				return nil, &JobFileError{Pos: pos, Msg: fmt.Sprintf("includes nest deeper than %d (a cycle?)", maxIncludeDepth)}
			}
			inc := includePath(name, file)
			incData, err := inputfile.Read(inc)
			var sub []rawLine
			if err == nil {
				sub, err = r.lines(inc, incData, depth+1)
			}
			if err != nil {
				var jfe *JobFileError
				if errors.As(err, &jfe) {
					return nil, err
				}
				return nil, &JobFileError{Pos: pos, Msg: fmt.Sprintf("include %s: %v", name, err)}
			}
			out = append(out, sub...)
			continue
		}
		out = append(out, rawLine{text: line, pos: pos})
	}
	return out, nil
}

// includePath resolves an include as fio does: as written when that exists
// (relative to the working directory), else beside the including file.
func includePath(name, including string) string {
	if _, err := os.Stat(name); err == nil {
		return name
	}
	if i := strings.LastIndexByte(including, '/'); i >= 0 {
		return including[:i+1] + name
	}
	return name
}

// isEmptyOrComment is fio's is_empty_or_comment.
func isEmptyOrComment(line string) bool {
	for _, c := range []byte(line) {
		if c == ';' || c == '#' {
			return true
		}
		if !isSpaceOrCntrl(c) {
			return false
		}
	}
	return true
}

// stripBlankEnd is fio's strip_blank_end: cut at the first ';', then at the
// first '#', then trim trailing blanks and control characters.
func stripBlankEnd(s string) string {
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRightFunc(s, func(r rune) bool { return r < 0x80 && isSpaceOrCntrl(byte(r)) })
}

func isSpaceOrCntrl(c byte) bool { return c <= ' ' || c == 0x7f }

func isBlank(r rune) bool {
	return r == ' ' || r == '\t' || r == '\v' || r == '\f' || r == '\r' || r == '\n'
}

// expand is fio's fio_option_dup_subs: ${NAME} becomes the variable's value,
// empty when unset. A value that itself holds "${" is refused: fio would not
// expand it again, but storbench's file must mean one thing only.
func expand(s string, getenv func(string) (string, bool)) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); {
		if strings.HasPrefix(s[i:], "${") {
			if end := strings.IndexByte(s[i:], '}'); end > 2 {
				name := s[i+2 : i+end]
				v, _ := getenv(name)
				if strings.Contains(v, "${") || strings.ContainsAny(v, "\n\x00") {
					return "", fmt.Errorf("${%s} expands to %q, which storbench will not place in a job file", name, v)
				}
				b.WriteString(v)
				i += end + 1
				continue
			}
		}
		b.WriteByte(s[i])
		i++
	}
	if b.Len() > maxLine {
		return "", fmt.Errorf("line longer than %d bytes once ${VAR} is expanded", maxLine)
	}
	return b.String(), nil
}

// Clone returns a copy whose sections and lines can be changed.
func (f *JobFile) Clone() *JobFile {
	c := &JobFile{Path: f.Path, Sections: make([]JobSection, len(f.Sections))}
	for i, s := range f.Sections {
		s.Lines = append([]JobLine(nil), s.Lines...)
		c.Sections[i] = s
	}
	return c
}

// Jobs returns the non-global sections.
func (f *JobFile) Jobs() []*JobSection {
	var out []*JobSection
	for i := range f.Sections {
		if !f.Sections[i].Global {
			out = append(out, &f.Sections[i])
		}
	}
	return out
}

// Resolved returns, for the job section at index i, the options as fio
// would apply them from this file's text: every earlier [global] section,
// then the job's own, the last value of an option winning. It is the
// file's own reading, for planning; safety judges fio's reading (Reading).
func (f *JobFile) Resolved(i int) map[string]string {
	m := map[string]string{}
	for j := 0; j <= i && j < len(f.Sections); j++ {
		s := f.Sections[j]
		if s.Global || j == i {
			for _, l := range s.Lines {
				m[canonicalKey(l.Key())] = l.Value()
			}
		}
	}
	return m
}

// canonicalKey maps the aliases storbench plans with to fio's names.
func canonicalKey(k string) string {
	switch k {
	case "readwrite":
		return "rw"
	}
	return k
}

// Render is the job file fio runs: every section and option line in order,
// includes spliced in, ${VAR} expanded, comments dropped; the lines storbench
// added say why.
func (f *JobFile) Render() []byte {
	var b bytes.Buffer
	fmt.Fprintf(&b, "; fio job run by storbench from %s\n", f.Path)
	for i, s := range f.Sections {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "[%s]\n", s.Name)
		for _, l := range s.Lines {
			switch {
			case l.Added:
				fmt.Fprintf(&b, "; added by storbench: %s\n", l.Why)
			case l.Was != "":
				fmt.Fprintf(&b, "; changed by storbench from %q (%s): %s\n", l.Was, l.Pos, l.Why)
			}
			b.WriteString(l.Text)
			b.WriteByte('\n')
		}
	}
	return b.Bytes()
}

// FillRunnerDefaults gives every job that leaves its file to its runner
// (no filename, filename_format or opendir, with [global] applied) the
// runner's file, and its size when the job sets none, as kbench's runner
// does. On a directory target (device false) a job that sets its own size
// keeps fio's own file naming in the work directory. A job whose engine
// does no I/O (cpuio, exec) touches no file and is left as fio runs it.
func (f *JobFile) FillRunnerDefaults(file File, device bool) {
	for i := range f.Sections {
		s := &f.Sections[i]
		if s.Global {
			continue
		}
		m := f.Resolved(i)
		if noIOEngines[m["ioengine"]] {
			continue
		}
		_, hasName := m["filename"]
		_, hasFormat := m["filename_format"]
		_, hasDir := m["opendir"]
		_, hasSize := m["size"]
		_, hasFilesize := m["filesize"]
		if hasName || hasFormat || hasDir {
			continue
		}
		sized := hasSize || hasFilesize
		if file.Engine != nil {
			fillEngineTarget(s, m, file, sized)
			continue
		}
		if !device && sized {
			continue
		}
		end := s.Pos
		if n := len(s.Lines); n > 0 {
			end = s.Lines[n-1].Pos
		}
		s.Lines = append(s.Lines, JobLine{Text: "filename=" + escapeFilename(file.Name), Pos: end, Added: true,
			Why: "the job leaves filename to its runner"})
		if !sized && file.Size > 0 {
			s.Lines = append(s.Lines, JobLine{Text: fmt.Sprintf("size=%d", file.Size), Pos: end, Added: true,
				Why: "the job leaves size to its runner"})
		}
	}
}

// fillEngineTarget gives a job that leaves its target to the runner the
// runner's engine target: its engine, its options, its file inside the
// engine's namespace, and its size when the job sets none. A job that
// names another engine, or sets any of the target's options itself, names
// its own target and runs as written.
func fillEngineTarget(s *JobSection, m map[string]string, file File, sized bool) {
	e := file.Engine
	engine, hasEngine := m["ioengine"]
	if hasEngine && strings.TrimSpace(engine) != e.IOEngine {
		return
	}
	for _, k := range e.Keys() {
		if _, ok := m[k]; ok {
			return
		}
	}
	end := s.Pos
	if n := len(s.Lines); n > 0 {
		end = s.Lines[n-1].Pos
	}
	add := func(text, why string) {
		s.Lines = append(s.Lines, JobLine{Text: text, Pos: end, Added: true, Why: why})
	}
	if !hasEngine {
		add("ioengine="+e.IOEngine, "the job leaves its target to its runner, which fio reaches through this engine")
	}
	for _, o := range e.Options {
		add(o.Key+"="+o.Value, "the job leaves its target to its runner")
	}
	if file.Name != "" {
		add("filename="+escapeFilename(file.Name), "the job leaves filename to its runner")
	}
	if !sized && file.Size > 0 {
		add(fmt.Sprintf("size=%d", file.Size), "the job leaves size to its runner")
	}
}

// noIOEngines are fio's engines flagged FIO_NOIO: they burn CPU or run a
// program, open no file, and fio runs their jobs without a size.
var noIOEngines = map[string]bool{"cpuio": true, "exec": true}

// escapeFilename escapes ':' the way fio's filename lists expect.
func escapeFilename(s string) string { return strings.ReplaceAll(s, ":", `\:`) }

// Where finds the line that set key last for the job section named job:
// that section or a [global] section before it.
func (f *JobFile) Where(job, key string) (Pos, bool) {
	var pos Pos
	found := false
	for _, s := range f.Sections {
		if !s.Global && s.Name != job {
			continue
		}
		for _, l := range s.Lines {
			if canonicalKey(l.Key()) == key || l.Key() == key {
				pos, found = l.Pos, true
			}
		}
		if !s.Global {
			break
		}
	}
	return pos, found
}

// FindText finds the line whose text fio quotes in a complaint.
func (f *JobFile) FindText(text string) (Pos, bool) {
	text = strings.TrimSpace(text)
	for _, s := range f.Sections {
		for _, l := range s.Lines {
			if l.Text == text {
				return l.Pos, true
			}
		}
	}
	// fio names some options without their value ("failed parsing
	// cmd_type"): the last line setting that option.
	var pos Pos
	found := false
	for _, s := range f.Sections {
		for _, l := range s.Lines {
			if l.Key() == text {
				pos, found = l.Pos, true
			}
		}
	}
	if found {
		return pos, true
	}
	for _, s := range f.Sections {
		if "["+s.Name+"]" == text || s.Name == text {
			return s.Pos, true
		}
	}
	return Pos{}, false
}

// fioKeywords are replaced by fio with host figures, and a value holding
// one is handed to bc(1) through a shell when it looks like arithmetic
// (options.c fio_keyword_replace, bc_calc).
var fioKeywords = []string{"$pagesize", "$mb_memory", "$ncpus"}

// checkKeywords allows fio's keywords only in plain arithmetic: nothing
// that a shell or bc could read as more than a sum.
func checkKeywords(line string) error {
	uses := false
	for _, k := range fioKeywords {
		if strings.Contains(line, k) {
			uses = true
		}
	}
	if !uses {
		return nil
	}
	_, v, _ := strings.Cut(line, "=")
	for _, c := range v {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || strings.ContainsRune("$_+-*/%(). ", c)) {
			return fmt.Errorf("%q uses a fio keyword ($ncpus, $pagesize, $mb_memory) beside %q: fio would pass it to a shell and bc; storbench allows keywords only in plain arithmetic", line, string(c))
		}
	}
	return nil
}

// Relocate moves the files a job names by absolute path into fio's working
// directory (storbench's own work directory on the target), keeping their
// path below it: "/tmp/data" becomes "tmp/data". Block and character
// devices stay where they are (isDevice says which paths are), for the
// safety owner to judge, and so does a directory under /dev. It returns the
// lines it changed.
func (f *JobFile) Relocate(isDevice func(path string) bool) []JobLine {
	var changed []JobLine
	for i := range f.Sections {
		for j := range f.Sections[i].Lines {
			l := &f.Sections[i].Lines[j]
			key := l.Key()
			if key != "filename" && key != "directory" {
				continue
			}
			v := l.Value()
			var parts []string
			moved := false
			for _, p := range SplitList(v) {
				keep := !strings.HasPrefix(p, "/") || isDevice(p) ||
					key == "directory" && (p == "/dev" || strings.HasPrefix(p, "/dev/"))
				if !keep {
					p, moved = strings.TrimLeft(p, "/"), true
					if p == "" {
						p = "."
					}
				}
				parts = append(parts, escapeFilename(p))
			}
			if !moved {
				continue
			}
			l.Was = l.Text
			l.Text = key + "=" + strings.Join(parts, ":")
			l.Why = "files go to storbench's own work directory on the target"
			changed = append(changed, *l)
		}
	}
	return changed
}

// SplitList splits fio's colon-separated lists (filename, directory): "\:"
// is a colon inside a name, empty entries are skipped (options.c
// get_next_str).
func SplitList(s string) []string {
	var out []string
	var cur strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\\' && i+1 < len(s) && s[i+1] == ':':
			cur.WriteByte(':')
			i++
		case s[i] == ':':
			if cur.Len() > 0 {
				out = append(out, cur.String())
			}
			cur.Reset()
		default:
			cur.WriteByte(s[i])
		}
	}
	if cur.Len() > 0 {
		out = append(out, cur.String())
	}
	return out
}

// Mentions reports whether any option line (comments aside, includes
// spliced in) holds text, e.g. "/dev/".
func (f *JobFile) Mentions(text string) bool {
	for _, s := range f.Sections {
		for _, l := range s.Lines {
			if strings.Contains(l.Text, text) {
				return true
			}
		}
	}
	return false
}
