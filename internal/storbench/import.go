package storbench

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

// ImportRequest says what to import and how.
type ImportRequest struct {
	// Files are the inputs in order: paths of regular files, or "-" for
	// Stdin.
	Files []string
	Stdin io.Reader
	// Format forces every file's format; "" detects it.
	Format importer.Format
	// Target names the target of every result; "" takes what the file says.
	Target string
	// Labels go on the run and every result; a CSV row's own labels win.
	Labels map[string]string
	// MaxSize refuses inputs larger than this many bytes; 0 is
	// DefaultMaxSize.
	MaxSize int64
	// DryRun parses and reports without storing anything.
	DryRun bool
	// Time is when the files' results were measured, for files that do
	// not say (it replaces fio's own timestamps too); a CSV/JSON row's own
	// time wins. Zero keeps what import does without it: the run is timed
	// at the import and results keep the times their files give.
	Time time.Time
}

// DefaultMaxSize is the largest input Import reads unless the request says
// otherwise: far more than any tool's output, far less than a disk image.
const DefaultMaxSize = "256MiB"

// defaultMaxSize is DefaultMaxSize in bytes.
const defaultMaxSize = 256 << 20

// previewLimit bounds the results a dry run keeps to show.
const previewLimit = 1000

// Small files are kept in memory from the hashing pass to the parsing one,
// up to this much in all; larger ones are read twice.
const (
	keepFile  = 1 << 20
	keepTotal = 64 << 20
)

// Import reads other tools' outputs (and storbench's CSV/JSON) and stores
// them as one run with the provenance of every file, or stores nothing.
// Files imported before (same SHA-256, in the store or earlier in the
// request) are reported and skipped. A dry run creates no database: when
// st's file does not exist yet (or st is nil), st is not used at all.
//
// A cut file or an implausible result does not stop the import: what is
// complete is stored and the report says where (see ImportIncomplete).
func Import(ctx context.Context, st store.Store, req ImportRequest) (*result.ImportReport, error) {
	if st != nil && req.DryRun {
		if _, err := os.Stat(st.Path()); err != nil {
			st = nil // nothing to look for duplicates in
		}
	}
	if st == nil && !req.DryRun {
		return nil, errors.New("import: no database to store the import in")
	}
	if req.MaxSize <= 0 {
		req.MaxSize = defaultMaxSize
	}
	now := time.Now()
	rep := &result.ImportReport{DryRun: req.DryRun, Duplicates: []store.ImportedFile{}, Health: []result.Health{}, Files: []result.ImportedFileReport{}}
	inputs, err := checkInputs(req, rep)
	if err != nil {
		return nil, err
	}
	if st != nil {
		if inputs, err = notImported(ctx, st, inputs, rep); err != nil {
			return nil, err
		}
	}
	if len(inputs) == 0 {
		return rep, nil
	}
	b := newBuilder(req.Labels, now, req.Time)
	var w *store.ImportWriter
	if !req.DryRun {
		if w, err = beginImport(ctx, st, b, inputs, now, rep); err != nil {
			return nil, err
		}
		if w == nil {
			return rep, nil // claimed by another import meanwhile
		}
		defer w.Abort()
	}
	files, err := readInputs(ctx, b, w, inputs, importer.Options{Format: req.Format, Target: req.Target}, rep)
	if err != nil {
		return nil, err
	}
	rep.Results = b.results
	b.finish()
	if w == nil {
		return rep, nil
	}
	return commitImport(ctx, w, b, provenance(files, now), rep)
}

// checkInputs checks every input named (readable, within the size bound)
// and hashes it; an input whose content another one has is reported and
// left out.
func checkInputs(req ImportRequest, rep *result.ImportReport) ([]*input, error) {
	var inputs []*input
	seen := map[string]string{}
	keep := int64(keepTotal)
	for _, name := range req.Files {
		in, err := checkInput(req.Stdin, name, req.MaxSize, &keep)
		if err != nil {
			return nil, &RequestError{err}
		}
		if first, dup := seen[in.sum]; dup {
			rep.SameTwice = append(rep.SameTwice, fmt.Sprintf("%s has the same content as %s", name, first))
			continue
		}
		seen[in.sum] = name
		inputs = append(inputs, in)
	}
	return inputs, nil
}

// notImported leaves out the inputs the database already holds, reporting
// them as duplicates.
func notImported(ctx context.Context, st store.Store, inputs []*input, rep *result.ImportReport) ([]*input, error) {
	var sums []string
	for _, in := range inputs {
		sums = append(sums, in.sum)
	}
	dups, err := st.ImportedFiles(ctx, sums)
	if err != nil {
		return nil, err
	}
	rep.Duplicates = append(rep.Duplicates, dups...)
	return withoutDuplicates(inputs, dups), nil
}

// beginImport opens the import's transaction, claiming the inputs' hashes;
// nil and no error when another import claimed one meanwhile (reported as
// a duplicate).
func beginImport(ctx context.Context, st store.Store, b *builder, inputs []*input, now time.Time, rep *result.ImportReport) (*store.ImportWriter, error) {
	var provisional []store.ImportedFile
	for _, in := range inputs {
		provisional = append(provisional, store.ImportedFile{SHA256: in.sum, File: in.name, Imported: now})
	}
	w, err := st.BeginImport(ctx, b.run, provisional)
	if err != nil {
		var dup *store.DuplicateError
		if errors.As(err, &dup) {
			rep.Duplicates = append(rep.Duplicates, dup.Files...)
			return nil, nil
		}
		return nil, err
	}
	b.addRun = func(r *result.Run) error { return w.AddRun(ctx, r) }
	return w, nil
}

// readInputs reads every input, storing its results and health records
// through w (or, in a dry run without w, keeping a preview), and reports
// each file.
func readInputs(ctx context.Context, b *builder, w *store.ImportWriter, inputs []*input, opt importer.Options, rep *result.ImportReport) ([]*importer.File, error) {
	var files []*importer.File
	for _, in := range inputs {
		pf, err := b.read(ctx, in, opt, func(r *result.Result) error {
			if w != nil {
				return w.AddResult(ctx, r)
			}
			if len(rep.Preview) < previewLimit {
				rep.Preview = append(rep.Preview, *r)
			}
			return nil
		})
		if err != nil {
			var pe *importer.ParseError
			if errors.As(err, &pe) {
				return nil, &RequestError{err}
			}
			return nil, err
		}
		for i := range pf.Health {
			if w != nil {
				if err := w.AddHealth(ctx, &pf.Health[i]); err != nil {
					return nil, err
				}
			}
			rep.Health = append(rep.Health, pf.Health[i])
		}
		files = append(files, pf)
		rep.Files = append(rep.Files, result.ImportedFileReport{File: pf.Name, SHA256: pf.SHA256, Formats: importer.Names(pf.Formats), Tool: pf.Tool,
			ToolVersion: pf.ToolVersion, Results: pf.ResultCount, Health: len(pf.Health), Rows: pf.Rows, Skipped: pf.Skipped,
			Notes: pf.Notes, Problems: pf.Problems, Cut: pf.Cut(), Refused: pf.Refused()})
	}
	return files, nil
}

// commitImport records the files' provenance and commits; when another
// import committed one of the files meanwhile, nothing is stored and the
// report says so.
func commitImport(ctx context.Context, w *store.ImportWriter, b *builder, files []store.ImportedFile, rep *result.ImportReport) (*result.ImportReport, error) {
	w.SetFiles(files)
	if err := w.Commit(ctx); err != nil {
		var dup *store.DuplicateError
		if errors.As(err, &dup) {
			rep.Duplicates = append(rep.Duplicates, dup.Files...)
			rep.Files, rep.Results = []result.ImportedFileReport{}, 0
			return rep, nil
		}
		return nil, err
	}
	rep.RunID = b.run.ID
	for _, r := range b.more {
		rep.MoreRuns = append(rep.MoreRuns, r.ID)
	}
	return rep, nil
}

// ImportIncomplete names the files of a report that were cut or had
// results refused as implausible (what was complete is stored), or
// returns nil.
func ImportIncomplete(rep *result.ImportReport) error {
	var bad []string
	for _, fr := range rep.Files {
		switch {
		case fr.Cut:
			bad = append(bad, fr.File+" is cut (what was complete before the cut was read)")
		case fr.Refused > 0:
			bad = append(bad, fmt.Sprintf("%s: %d result(s) refused as implausible", fr.File, fr.Refused))
		}
	}
	if len(bad) > 0 {
		return fmt.Errorf("import: %s", strings.Join(bad, "; "))
	}
	return nil
}

// input is one file of the request, checked and hashed.
type input struct {
	name string
	path string // "" for stdin
	data []byte // the content, when small enough to keep
	size int64
	sum  string
}

// checkInput refuses what is not a regular file (or "-") and what is
// larger than limit, and hashes the content; it keeps small files' content
// while keep (the bytes still allowed) lasts.
func checkInput(stdin io.Reader, name string, limit int64, keep *int64) (*input, error) {
	in := &input{name: name}
	if name == "-" {
		if stdin == nil {
			stdin = bytes.NewReader(nil)
		}
		data, err := io.ReadAll(io.LimitReader(stdin, limit+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		if int64(len(data)) > limit {
			return nil, fieldErrorf("standard input is larger than %s %s: raise %s to import it", FieldMaxSize, units.Bytes(limit), FieldMaxSize)
		}
		in.keep(data)
		return in, nil
	}
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s): import reads files of tools' output, or \"-\" for standard input", name, modeName(fi.Mode()))
	}
	if fi.Size() > limit {
		return nil, fieldErrorf("%s is %s, larger than %s %s: raise %s to import it", name, units.Bytes(fi.Size()), FieldMaxSize, units.Bytes(limit), FieldMaxSize)
	}
	file, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	defer file.Close()
	if fi.Size() <= keepFile && fi.Size() <= *keep {
		data, err := io.ReadAll(io.LimitReader(file, keepFile+1))
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
		if int64(len(data)) <= keepFile {
			*keep -= int64(len(data))
			in.keep(data)
			return in, nil
		}
		if _, err := file.Seek(0, io.SeekStart); err != nil {
			return nil, fmt.Errorf("reading %s: %w", name, err)
		}
	}
	h := sha256.New()
	n, err := io.Copy(h, io.LimitReader(file, limit+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	if n > limit {
		return nil, fieldErrorf("%s grew beyond %s %s while it was read", name, FieldMaxSize, units.Bytes(limit))
	}
	in.path, in.size, in.sum = name, n, hex.EncodeToString(h.Sum(nil))
	return in, nil
}

// keep holds the whole content in memory, with its size and sum.
func (in *input) keep(data []byte) {
	sum := sha256.Sum256(data)
	in.data, in.size, in.sum = data, int64(len(data)), hex.EncodeToString(sum[:])
}

func modeName(m os.FileMode) string {
	switch {
	case m&os.ModeDir != 0:
		return "a directory"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a block device"
	case m&os.ModeNamedPipe != 0:
		return "a named pipe"
	case m&os.ModeSocket != 0:
		return "a socket"
	}
	return "not a regular file"
}

func withoutDuplicates(inputs []*input, dups []store.ImportedFile) []*input {
	gone := map[string]bool{}
	for _, d := range dups {
		gone[d.SHA256] = true
	}
	var out []*input
	for _, in := range inputs {
		if !gone[in.sum] {
			out = append(out, in)
		}
	}
	return out
}

// builder makes the runs and gives every result its labels, time and run
// while the results stream to the store. An import is one run, except
// that CSV/JSON rows measured at different times (their time column) are
// stored as one run per time, each timed when it was measured: the first
// result's run is the import's own (it holds the files' provenance), and
// every other time gets a run of its own through addRun.
type builder struct {
	run *result.Run
	// more are the runs of other measured times, in the order met.
	more []*result.Run
	// byTime maps a measured time (UTC RFC 3339; "" for results without
	// one) to its run; empty until the first result claims run.
	byTime map[string]*result.Run
	seen   map[*result.Run]*runContents
	// addRun stores a new run; nil on a dry run.
	addRun  func(*result.Run) error
	at      time.Time // ImportRequest.Time
	labels  map[string]string
	sources []string
	notes   []string
	results int
}

type runContents struct{ workloads, targets map[string]bool }

func newBuilder(labels map[string]string, now, at time.Time) *builder {
	start := now
	if !at.IsZero() {
		start = at
	}
	b := &builder{
		run: &result.Run{
			ID:      result.NewRunID(now, uint16(rand.IntN(1<<16))),
			Suite:   "import",
			Labels:  labels,
			Status:  result.StatusComplete,
			Started: start, Finished: start,
		},
		byTime: map[string]*result.Run{}, seen: map[*result.Run]*runContents{},
		at: at, labels: labels,
	}
	return b
}

// runFor times a result and returns the run it belongs to, making a new
// run for a measured time not met before.
func (b *builder) runFor(res *result.Result) (*result.Run, error) {
	at, timed := importer.MeasuredAt(res)
	if !timed && !b.at.IsZero() {
		took := res.Finished.Sub(res.Started)
		if res.Started.IsZero() || res.Finished.IsZero() || took < 0 {
			took = 0
		}
		res.Started, res.Finished = b.at, b.at.Add(took)
	}
	key := ""
	if timed {
		key = at.UTC().Format(time.RFC3339Nano)
	}
	if r := b.byTime[key]; r != nil {
		return r, nil
	}
	r := b.run
	if len(b.byTime) > 0 {
		id := result.NewRunID(b.run.Started, uint16(rand.IntN(1<<16)))
		if timed {
			id = result.NewRunID(at, uint16(rand.IntN(1<<16)))
		}
		r = &result.Run{ID: id, Suite: b.run.Suite, Labels: b.labels, Status: result.StatusComplete,
			Started: b.run.Started, Finished: b.run.Started}
		if b.addRun != nil {
			if err := b.addRun(r); err != nil {
				return nil, err
			}
		}
		b.more = append(b.more, r)
	}
	if timed {
		r.Started, r.Finished = at, at
	}
	b.byTime[key] = r
	return r, nil
}

// finish gives the runs of other measured times the import's source and
// note.
func (b *builder) finish() {
	for _, r := range b.more {
		r.Source = b.run.Source
		r.Note = fmt.Sprintf("measured %s; %s (part of import run %s)", r.Started.UTC().Format(time.RFC3339), b.run.Note, b.run.ID)
	}
}

// read parses one input, handing each result (with the request's labels
// merged in) to store.
func (b *builder) read(ctx context.Context, in *input, opt importer.Options, store func(*result.Result) error) (*importer.File, error) {
	var r io.Reader
	if in.data != nil || in.path == "" {
		r = bytes.NewReader(in.data)
	} else {
		file, err := os.Open(in.path)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", in.name, err)
		}
		defer file.Close()
		r = io.LimitReader(file, in.size)
	}
	pf, err := importer.Stream(in.name, r, opt, func(res result.Result) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		merged := make(map[string]string, len(b.labels)+len(res.Labels))
		maps.Copy(merged, b.labels)
		maps.Copy(merged, res.Labels)
		res.Labels = merged
		run, err := b.runFor(&res)
		if err != nil {
			return err
		}
		res.RunID = run.ID
		b.add(run, res.Workload, res.Target)
		b.results++
		return store(&res)
	})
	if err != nil {
		return nil, err
	}
	if pf.SHA256 != in.sum {
		return nil, fmt.Errorf("%s changed while it was imported", in.name)
	}
	for _, h := range pf.Health {
		b.add(b.run, "", h.Target)
	}
	for _, format := range pf.Formats {
		if !slices.Contains(b.sources, string(format)) {
			b.sources = append(b.sources, string(format))
		}
	}
	desc := fmt.Sprintf("%s (%s", filepath.Base(pf.Name), importer.FormatList(pf.Formats))
	if pf.ToolVersion != "" {
		desc += " " + pf.ToolVersion
	}
	desc += ", sha256 " + pf.SHA256[:12]
	if pf.Cut() {
		desc += ", cut"
	}
	b.notes = append(b.notes, desc+")")
	b.run.Source = strings.Join(b.sources, ",")
	b.run.Note = "imported from " + strings.Join(b.notes, "; ")
	return pf, nil
}

func (b *builder) add(run *result.Run, workload, target string) {
	c := b.seen[run]
	if c == nil {
		c = &runContents{workloads: map[string]bool{}, targets: map[string]bool{}}
		b.seen[run] = c
	}
	if workload != "" && !c.workloads[workload] {
		c.workloads[workload] = true
		run.Workloads = append(run.Workloads, workload)
	}
	if !c.targets[target] {
		c.targets[target] = true
		run.Targets = append(run.Targets, target)
	}
}

func provenance(files []*importer.File, now time.Time) []store.ImportedFile {
	var out []store.ImportedFile
	for _, f := range files {
		out = append(out, store.ImportedFile{SHA256: f.SHA256, File: f.Name, Format: importer.FormatList(f.Formats),
			Tool: f.Tool, ToolVersion: f.ToolVersion, SizeBytes: f.Size, Results: f.ResultCount + len(f.Health), Imported: now})
	}
	return out
}
