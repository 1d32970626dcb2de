package fio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/execx"
)

// Reading is fio's own reading of a job file: what `fio --showcmd` prints
// (fio's option names, values after ${VAR} and keyword substitution, in the
// order fio applies them) laid over the file's sections, with [global]
// inheritance applied. It is what safety judges.
type Reading struct {
	Jobs []JobReading
}

// JobReading is one job section as fio will run it.
type JobReading struct {
	// Section is the [name] of the job; fio may report it under another name
	// when the job sets name=.
	Section string
	// Options are the [global] options that reach the job and then its own,
	// in the order fio applies them: for a repeated option the last wins.
	Options []Option
	// Pos is the section's header line in the user's file.
	Pos Pos
}

// Value returns the value fio uses for key (the last one given) and whether
// the job sets it at all.
func (j JobReading) Value(key string) (string, bool) {
	v, ok := "", false
	for _, o := range j.Options {
		if o.Key == key {
			v, ok = o.Value, true
		}
	}
	return v, ok
}

// Values returns every option's effective value.
func (j JobReading) Values() map[string]string {
	m := map[string]string{}
	for _, o := range j.Options {
		m[o.Key] = o.Value
	}
	return m
}

// String renders the effective options, sorted, as "key=value" words.
func (j JobReading) String() string {
	m := j.Values()
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(' ')
		}
		if m[k] == "" {
			b.WriteString(k)
		} else {
			b.WriteString(k + "=" + m[k])
		}
	}
	return b.String()
}

// ParseError is fio refusing a job file (--parse-only), in fio's words,
// located in the user's file where fio quotes the line.
type ParseError struct {
	Pos     Pos
	Message string
}

func (e *ParseError) Error() string {
	if e.Pos.Line > 0 {
		return fmt.Sprintf("%s: fio refuses the job: %s", e.Pos, e.Message)
	}
	if e.Pos.File != "" {
		return fmt.Sprintf("%s: fio refuses the job: %s", e.Pos.File, e.Message)
	}
	return "fio refuses the job: " + e.Message
}

var quoted = regexp.MustCompile(`(?:failed parsing |Bad option <)([^>\n]*)>?`)

// Read asks fio how it reads the job file at path (where the runner runs,
// relative to its Dir): --parse-only first, so an option fio rejects is
// refused in fio's words and located in jf, then --showcmd, laid over jf.
func (r Runner) Read(ctx context.Context, jf *JobFile, path string) (*Reading, error) {
	var stdout, stderr bytes.Buffer
	err := r.command(ctx, "--parse-only", path).SetStdout(&stdout).SetStderr(&stderr).Run()
	if err != nil {
		if execx.IsNotFound(err) {
			return nil, &MissingError{Binary: r.binary()}
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		msg := strings.TrimSpace(stderr.String() + "\n" + stdout.String())
		pe := &ParseError{Pos: Pos{File: jf.Path}, Message: oneLine(msg)}
		if m := quoted.FindStringSubmatch(msg); m != nil {
			if p, ok := jf.FindText(m[1]); ok {
				pe.Pos = p
			}
		}
		if pe.Message == "" {
			pe.Message = err.Error()
		}
		return nil, pe
	}
	stdout.Reset()
	stderr.Reset()
	if err := r.command(ctx, "--showcmd", path).SetStdout(&stdout).SetStderr(&stderr).Run(); err != nil {
		var re *execx.RunError
		if errors.As(err, &re) {
			return nil, fmt.Errorf("fio --showcmd %s: %s", path, oneLine(stderr.String()+" "+err.Error()))
		}
		return nil, fmt.Errorf("fio --showcmd %s: %w", path, err)
	}
	return ParseShowcmd(stdout.String(), jf)
}

func oneLine(s string) string {
	var parts []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			parts = append(parts, l)
		}
	}
	return strings.Join(parts, "; ")
}

// ParseShowcmd lays fio's --showcmd output over the job file it came from.
// fio prints each section's options in the order it applied them (sorted by
// its option priorities, aliases replaced by canonical names) after
// --name=SECTION for a job section and without a name for [global]; the
// file tells where each section ends. Anything that does not line up
// exactly is refused: storbench judges only a reading it can be sure of.
func ParseShowcmd(out string, jf *JobFile) (*Reading, error) {
	cannot := func(format string, args ...any) error {
		return &JobFileError{Pos: Pos{File: jf.Path}, Msg: "storbench cannot line up fio's reading of the job with the file: " + fmt.Sprintf(format, args...)}
	}
	for _, s := range jf.Sections {
		for _, l := range s.Lines {
			if strings.Contains(l.Text, " --") || strings.HasPrefix(l.Text, "--") {
				return nil, &JobFileError{Pos: l.Pos, Msg: fmt.Sprintf("%q holds \"--\", which makes fio's printed reading ambiguous", l.Text)}
			}
		}
	}
	// fio may print warnings before the command line; the command line is
	// the last line starting with "fio ".
	line := ""
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "fio ") || l == "fio" {
			line = l
		}
	}
	if line == "" {
		return nil, cannot("fio --showcmd printed no command line")
	}
	rest := strings.TrimSpace(strings.TrimPrefix(line, "fio"))
	var tokens []Option
	if rest != "" {
		if !strings.HasPrefix(rest, "--") {
			return nil, cannot("unexpected output %q", line)
		}
		for _, t := range strings.Split(rest[2:], " --") {
			t = strings.TrimRight(t, " ")
			k, v, _ := strings.Cut(t, "=")
			if k == "description" && len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
				v = v[1 : len(v)-1]
			}
			tokens = append(tokens, Option{Key: k, Value: v})
		}
	}
	var (
		rd      Reading
		globals []Option
		at      int
	)
	// fio prints a [global] section with every global option so far: its
	// global options accumulate across [global] sections.
	var globalLines []JobLine
	for _, s := range jf.Sections {
		n := len(s.Lines)
		if s.Global {
			globalLines = append(globalLines, s.Lines...)
			n = len(globalLines)
			s.Lines = globalLines
		}
		if !s.Global {
			if at >= len(tokens) || tokens[at].Key != "name" || tokens[at].Value != s.Name {
				return nil, cannot("expected --name=%s for section [%s] at %s", s.Name, s.Name, s.Pos)
			}
			at++
		}
		if at+n > len(tokens) {
			return nil, cannot("fio printed fewer options than section [%s] holds", s.Name)
		}
		own := tokens[at : at+n]
		at += n
		if err := sameValues(s, own); err != nil {
			return nil, cannot("%v", err)
		}
		if s.Global {
			globals = own
			continue
		}
		// The section header names the job after any [global] name=.
		opts := append(append(append([]Option{}, globals...), Option{Key: "name", Value: s.Name}), own...)
		rd.Jobs = append(rd.Jobs, JobReading{Section: s.Name, Options: opts, Pos: s.Pos})
	}
	if at != len(tokens) {
		return nil, cannot("fio printed %d options more than the file holds", len(tokens)-at)
	}
	return &rd, nil
}

// sameValues checks that fio read the section's values as the file holds
// them (as multisets: fio reorders by priority). Lines using fio's keywords
// ($ncpus, $pagesize, $mb_memory) are computed by fio and not compared.
func sameValues(s JobSection, fio []Option) error {
	want := map[string]int{}
	for _, l := range s.Lines {
		if strings.Contains(l.Text, "$") {
			return nil
		}
		want[l.Value()]++
	}
	for _, o := range fio {
		want[o.Value]--
	}
	for v, n := range want {
		if n != 0 {
			return fmt.Errorf("section [%s]: fio reads the value %q differently", s.Name, v)
		}
	}
	return nil
}

// Engines returns the I/O engines the jobs use (fio's default, psync, for
// jobs that name none).
func (rd *Reading) Engines() []string {
	seen := map[string]bool{}
	var out []string
	for _, j := range rd.Jobs {
		e, ok := j.Value("ioengine")
		if !ok || e == "" {
			e = "psync"
		}
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	return out
}

// WriteFile writes data to path where the runner runs, through the Cmder,
// with a bounded command (no stdin: some exec transports never close it).
func (r Runner) WriteFile(ctx context.Context, path string, data []byte) error {
	if len(data) > 100<<10 {
		return fmt.Errorf("job file of %d bytes is larger than the 100 KiB storbench passes to fio", len(data))
	}
	if fw, ok := r.Cmder.(execx.FileWriter); ok {
		if err := fw.WriteFile(ctx, r.Dir, path, data); err != nil {
			return fmt.Errorf("writing the job file %s: %w", path, err)
		}
		return nil
	}
	var stderr bytes.Buffer
	c := r.Cmder.Command(ctx, "sh", "-c", `printf '%s' "$1" > "$2"`, "sh", string(data), path)
	if r.Dir != "" {
		c.SetDir(r.Dir)
	}
	if err := c.SetStdout(io.Discard).SetStderr(&stderr).Run(); err != nil {
		return fmt.Errorf("writing the job file %s: %s: %w", path, strings.TrimSpace(stderr.String()), err)
	}
	return nil
}
