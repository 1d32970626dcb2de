// Package importcmd implements "storbench import": other tools' outputs
// and storbench's generic CSV/JSON, stored as one run with provenance.
package importcmd

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
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/importer"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

type flags struct {
	format  string
	labels  []string
	target  string
	dryRun  bool
	output  string
	maxSize string
}

// DefaultMaxSize is the largest input import reads unless --max-size says
// otherwise: far more than any tool's output, far less than a disk image.
const DefaultMaxSize = "256MiB"

// previewLimit bounds the results a dry run keeps to show.
const previewLimit = 1000

// NewCommand returns the import command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "import FILE...",
		Short: "Import fio, iozone, dd, hdparm, ceph osd bench and smartctl outputs, or a results CSV/JSON, as one run",
		Long: `Import results measured elsewhere so they can be compared with storbench's own.

Formats are detected (--format forces one): fio JSON/json+ (also --status-interval
and client/server output), fio text and terse (--minimal) output, iozone -a
tables, GNU dd and hdparm output, ceph tell osd.* bench, smartctl -a text and
--json, and storbench's CSV (header target,labels,round,workload,metric,value,unit)
or the same fields as JSON. All files are stored as one run, or nothing is: a
file that cannot be read is reported with its line and what was expected.
A file imported before (same SHA-256) is reported and skipped. "-" reads stdin.

Only regular files are read (and "-"): devices, pipes and directories are
refused, and so is any input larger than --max-size. A CSV is read as it
streams, so a file of millions of rows needs little memory. A file that is cut
(it ends in the middle of a line or a JSON document) gives what is complete
before the cut, says where, and the command exits 1; so does a result with a
figure no device can reach (refused, with its line).`,
		Example: `  storbench import fio-nvme.json --label node=pi4-1 --label storage=local
  storbench import results.csv --output json
  storbench import --dry-run iozone-nfs.txt smartctl-sda.txt`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().StringVar(&f.format, "format", "", "read every file in this format instead of detecting it: "+formatNames())
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "add a label key=value to the run and every result (repeatable; a CSV row's own labels win)")
	cmd.Flags().StringVar(&f.target, "target", "", "name the target of every result (default: what the file says, e.g. osd.N, the device or host, else the file name)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "parse and show what would be stored, without storing it")
	cmd.Flags().StringVar(&f.maxSize, "max-size", DefaultMaxSize, "refuse inputs larger than this (e.g. 64MiB, 2GiB)")
	check := cli.OutputFlag(cmd, &f.output, "table", "json")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := check(); err != nil {
			return err
		}
		return run(cmd.Context(), d, f, args)
	}
	return cmd
}

func formatNames() string {
	var s []string
	for _, f := range importer.Formats {
		s = append(s, string(f))
	}
	return strings.Join(s, ", ")
}

// Report is what --output json prints.
type Report struct {
	// RunID is the new run; empty on a dry run or when every file had been
	// imported before.
	RunID      string               `json:"run_id"`
	DryRun     bool                 `json:"dry_run"`
	Files      []FileReport         `json:"files"`
	Duplicates []store.ImportedFile `json:"duplicates"`
	Results    int                  `json:"results"`
	Health     []result.Health      `json:"health"`
	Preview    []result.Result      `json:"preview,omitempty"`
}

// FileReport describes one imported file.
type FileReport struct {
	File        string            `json:"file"`
	SHA256      string            `json:"sha256"`
	Formats     []importer.Format `json:"formats"`
	Tool        string            `json:"tool"`
	ToolVersion string            `json:"tool_version,omitempty"`
	Results     int               `json:"results"`
	Health      int               `json:"health_records"`
	Rows        int               `json:"rows"`
	Skipped     []int             `json:"skipped_lines,omitempty"`
	Notes       []string          `json:"notes,omitempty"`
	// Problems say what was cut, refused, skipped or flagged, with lines.
	Problems []importer.Problem `json:"problems,omitempty"`
	Cut      bool               `json:"cut"`
	Refused  int                `json:"refused"`
}

// input is one argument of the command, checked and hashed.
type input struct {
	name string
	path string // "" for stdin
	data []byte // stdin's content
	size int64
	sum  string
}

func run(ctx context.Context, d cli.Deps, f *flags, args []string) error {
	labels, err := cli.ParseLabels(f.labels)
	if err != nil {
		return err
	}
	opt := importer.Options{Target: f.target}
	if f.format != "" {
		if opt.Format, err = importer.ParseFormat(f.format); err != nil {
			return cli.Usage(fmt.Errorf("--format: %w", err))
		}
	}
	limit, err := parseSize(f.maxSize)
	if err != nil {
		return cli.Usage(fmt.Errorf("--max-size: %w", err))
	}
	now := time.Now()
	var inputs []*input
	seen := map[string]string{}
	var sameTwice []string
	keep := int64(keepTotal)
	for _, name := range args {
		in, err := checkInput(d, name, limit, &keep)
		if err != nil {
			return cli.Usage(err)
		}
		if first, dup := seen[in.sum]; dup {
			sameTwice = append(sameTwice, fmt.Sprintf("%s has the same content as %s", name, first))
			continue
		}
		seen[in.sum] = name
		inputs = append(inputs, in)
	}

	st, err := openStore(ctx, d, f.dryRun)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	rep := &Report{DryRun: f.dryRun, Duplicates: []store.ImportedFile{}, Health: []result.Health{}, Files: []FileReport{}}
	if st != nil {
		var sums []string
		for _, in := range inputs {
			sums = append(sums, in.sum)
		}
		dups, err := st.ImportedFiles(ctx, sums)
		if err != nil {
			return err
		}
		rep.Duplicates = append(rep.Duplicates, dups...)
		inputs = withoutDuplicates(inputs, dups)
	}
	if len(inputs) == 0 {
		return finish(d, f, rep, sameTwice)
	}

	b := newBuilder(labels, now)
	var w *store.ImportWriter
	if !f.dryRun {
		var provisional []store.ImportedFile
		for _, in := range inputs {
			provisional = append(provisional, store.ImportedFile{SHA256: in.sum, File: in.name, Imported: now})
		}
		if w, err = st.BeginImport(ctx, b.run, provisional); err != nil {
			var dup *store.DuplicateError
			if errors.As(err, &dup) {
				rep.Duplicates = append(rep.Duplicates, dup.Files...)
				return finish(d, f, rep, sameTwice)
			}
			return err
		}
		defer w.Abort()
	}
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
				return cli.Usage(err)
			}
			return err
		}
		for i := range pf.Health {
			if w != nil {
				if err := w.AddHealth(ctx, &pf.Health[i]); err != nil {
					return err
				}
			}
			rep.Health = append(rep.Health, pf.Health[i])
		}
		files = append(files, pf)
		rep.Files = append(rep.Files, FileReport{File: pf.Name, SHA256: pf.SHA256, Formats: pf.Formats, Tool: pf.Tool, ToolVersion: pf.ToolVersion,
			Results: pf.ResultCount, Health: len(pf.Health), Rows: pf.Rows, Skipped: pf.Skipped, Notes: pf.Notes,
			Problems: pf.Problems, Cut: pf.Cut(), Refused: pf.Refused()})
	}
	rep.Results = b.results
	if w != nil {
		w.SetFiles(b.provenance(files, now))
		if err := w.Commit(ctx); err != nil {
			var dup *store.DuplicateError
			if errors.As(err, &dup) {
				rep.Duplicates = append(rep.Duplicates, dup.Files...)
				rep.Files, rep.Results = []FileReport{}, 0
				return finish(d, f, rep, sameTwice)
			}
			return err
		}
		rep.RunID = b.run.ID
	}
	return finish(d, f, rep, sameTwice)
}

// finish writes the report and turns cut files and refused results into
// exit code 1 (what was complete is stored).
func finish(d cli.Deps, f *flags, rep *Report, sameTwice []string) error {
	if err := writeReport(d, f, rep, sameTwice); err != nil {
		return err
	}
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
		return &cli.ExitError{Code: cli.ExitFailed, Err: fmt.Errorf("import: %s", strings.Join(bad, "; "))}
	}
	return nil
}

// Small files are kept in memory from the hashing pass to the parsing one,
// up to this much in all; larger ones are read twice.
const (
	keepFile  = 1 << 20
	keepTotal = 64 << 20
)

// checkInput refuses what is not a regular file (or "-") and what is
// larger than limit, and hashes the content; it keeps small files' content
// while keep (the bytes still allowed) lasts.
func checkInput(d cli.Deps, name string, limit int64, keep *int64) (*input, error) {
	in := &input{name: name}
	if name == "-" {
		data, err := io.ReadAll(io.LimitReader(d.In, limit+1))
		if err != nil {
			return nil, fmt.Errorf("reading standard input: %w", err)
		}
		if int64(len(data)) > limit {
			return nil, fmt.Errorf("standard input is larger than --max-size %s: raise --max-size to import it", sizeText(limit))
		}
		sum := sha256.Sum256(data)
		in.data, in.size, in.sum = data, int64(len(data)), hex.EncodeToString(sum[:])
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
		return nil, fmt.Errorf("%s is %s, larger than --max-size %s: raise --max-size to import it", name, sizeText(fi.Size()), sizeText(limit))
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
			sum := sha256.Sum256(data)
			in.data, in.size, in.sum = data, int64(len(data)), hex.EncodeToString(sum[:])
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
		return nil, fmt.Errorf("%s grew beyond --max-size %s while it was read", name, sizeText(limit))
	}
	in.path, in.size, in.sum = name, n, hex.EncodeToString(h.Sum(nil))
	return in, nil
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

// parseSize reads a size: 1000000, 64KiB, 256MiB, 2GiB, 1G, 500MB.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.TrimSpace(t[i:])
	}
	v, err := strconv.ParseFloat(num, 64)
	mult, ok := sizeUnits[strings.ToLower(unit)]
	if err != nil || !ok || v <= 0 || v*mult > 1<<62 {
		return 0, fmt.Errorf("expected a size such as 256MiB or 2GiB, found %q", s)
	}
	return int64(v * mult), nil
}

var sizeUnits = map[string]float64{"": 1, "b": 1, "k": 1 << 10, "kib": 1 << 10, "kb": 1e3, "m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9, "t": 1 << 40, "tib": 1 << 40, "tb": 1e12}

func sizeText(n int64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// openStore opens the database; a dry run does not create one that does
// not exist yet (and so cannot find duplicates in it).
func openStore(ctx context.Context, d cli.Deps, dryRun bool) (store.Store, error) {
	if dryRun {
		path := d.Globals.DB
		if path == "" {
			path = cli.DefaultDBPath(d.Getenv)
		}
		if _, err := os.Stat(path); err != nil {
			return nil, nil
		}
	}
	return d.OpenStore(ctx)
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

// builder makes the run and gives every result its labels while the
// results stream to the store.
type builder struct {
	run       *result.Run
	labels    map[string]string
	workloads map[string]bool
	targets   map[string]bool
	sources   []string
	notes     []string
	results   int
}

func newBuilder(labels map[string]string, now time.Time) *builder {
	return &builder{
		run: &result.Run{
			ID:      result.NewRunID(now, uint16(rand.IntN(1<<16))),
			Suite:   "import",
			Labels:  labels,
			Status:  result.StatusComplete,
			Started: now, Finished: now,
		},
		labels: labels, workloads: map[string]bool{}, targets: map[string]bool{},
	}
}

// read parses one input, handing each result (with the command's labels
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
		b.add(res.Workload, res.Target)
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
		b.add("", h.Target)
	}
	for _, format := range pf.Formats {
		b.sources = appendUnique(b.sources, string(format))
	}
	desc := fmt.Sprintf("%s (%s", filepath.Base(pf.Name), strings.Join(formatStrings(pf.Formats), "+"))
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

func (b *builder) add(workload, target string) {
	if workload != "" && !b.workloads[workload] {
		b.workloads[workload] = true
		b.run.Workloads = append(b.run.Workloads, workload)
	}
	if !b.targets[target] {
		b.targets[target] = true
		b.run.Targets = append(b.run.Targets, target)
	}
}

func (b *builder) provenance(files []*importer.File, now time.Time) []store.ImportedFile {
	var out []store.ImportedFile
	for _, f := range files {
		out = append(out, store.ImportedFile{SHA256: f.SHA256, File: f.Name, Format: strings.Join(formatStrings(f.Formats), "+"),
			Tool: f.Tool, ToolVersion: f.ToolVersion, SizeBytes: f.Size, Results: f.ResultCount + len(f.Health), Imported: now})
	}
	return out
}

func formatStrings(fs []importer.Format) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = string(f)
	}
	return out
}

func appendUnique(list []string, s string) []string {
	for _, x := range list {
		if x == s {
			return list
		}
	}
	return append(list, s)
}

func writeReport(d cli.Deps, f *flags, rep *Report, sameTwice []string) error {
	if f.output == "json" {
		return render.JSON(d.Out, rep)
	}
	w := d.Out
	for _, s := range sameTwice {
		fmt.Fprintf(w, "Skipped: %s.\n", s)
	}
	for _, dup := range rep.Duplicates {
		fmt.Fprintf(w, "Already imported: %s (sha256 %s...) is in run %s, imported %s. Not imported again.\n",
			dup.File, dup.SHA256[:12], dup.RunID, dup.Imported.Local().Format("2006-01-02 15:04"))
	}
	if len(rep.Files) == 0 {
		_, err := fmt.Fprintln(w, "Nothing new to import.")
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tFORMAT\tTOOL\tRESULTS\tHEALTH\tROWS\tSTATE")
	for _, fr := range rep.Files {
		tool := strings.TrimSpace(fr.Tool + " " + fr.ToolVersion)
		if strings.HasPrefix(fr.ToolVersion, fr.Tool) {
			tool = fr.ToolVersion
		}
		state := "read"
		switch {
		case fr.Cut:
			state = "CUT"
		case fr.Refused > 0:
			state = fmt.Sprintf("%d REFUSED", fr.Refused)
		case len(fr.Problems) > 0 || len(fr.Skipped) > 0:
			state = "read, with notes"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\t%s\n", fr.File, strings.Join(formatStrings(fr.Formats), "+"), tool, fr.Results, fr.Health, fr.Rows, state)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, fr := range rep.Files {
		for _, n := range fr.Notes {
			fmt.Fprintf(w, "  %s: %s\n", fr.File, n)
		}
		if len(fr.Skipped) > 0 {
			fmt.Fprintf(w, "  %s: lines skipped: %s\n", fr.File, lineList(fr.Skipped))
		}
		for i, p := range fr.Problems {
			if i == maxProblemsShown {
				fmt.Fprintf(w, "  %s: and %d more (see --output json)\n", fr.File, len(fr.Problems)-i)
				break
			}
			if p.Line > 0 {
				fmt.Fprintf(w, "  %s:%d: %s: %s\n", fr.File, p.Line, p.Kind, p.Msg)
			} else {
				fmt.Fprintf(w, "  %s: %s: %s\n", fr.File, p.Kind, p.Msg)
			}
		}
	}
	if f.dryRun {
		fmt.Fprintf(w, "\nDry run: would store %d results", rep.Results)
		if len(rep.Health) > 0 {
			fmt.Fprintf(w, " and %d device health records", len(rep.Health))
		}
		fmt.Fprintln(w, ":")
		if err := previewTable(w, rep.Preview); err != nil {
			return err
		}
		if rep.Results > len(rep.Preview) {
			fmt.Fprintf(w, "(the first %d of %d results)\n", len(rep.Preview), rep.Results)
		}
	}
	if len(rep.Health) > 0 {
		fmt.Fprintln(w)
		if err := HealthTable(w, rep.Health); err != nil {
			return err
		}
	}
	if rep.RunID != "" {
		fmt.Fprintf(w, "\nImported %d results from %d file(s) as run %s (see: storbench show %s).\n", rep.Results, len(rep.Files), rep.RunID, rep.RunID)
	} else if !f.dryRun {
		fmt.Fprintln(w, "\nNothing was imported.")
	}
	return nil
}

const maxProblemsShown = 20

func lineList(ls []int) string {
	var s []string
	for i, l := range ls {
		if i == 10 {
			s = append(s, fmt.Sprintf("and %d more", len(ls)-10))
			break
		}
		s = append(s, fmt.Sprint(l))
	}
	return strings.Join(s, ", ")
}

// previewTable shows what a dry run would store, in the units of the source.
func previewTable(w io.Writer, results []result.Result) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TARGET\tWORKLOAD\tROUND\tREP\tIOPS\tBANDWIDTH\tLAT P99\tLABELS")
	for _, r := range results {
		iops, bw, p99 := "-", "-", "-"
		if v, ok := r.Metric(result.MetricIOPS); ok {
			iops = units.IOPS(v)
		}
		if v, ok := r.Metric(result.MetricBW); ok {
			bw = units.In(v, unitOr(r.DisplayUnits[result.MetricBW], "MB/s"))
		}
		if v, ok := r.Metric(result.MetricLatP99); ok {
			if u := r.DisplayUnits[result.MetricLatP99]; u != "" {
				p99 = units.In(v, u)
			} else {
				p99 = units.Latency(time.Duration(v))
			}
		} else if r.Sync != nil {
			if v, ok := r.Sync.At(99); ok {
				p99 = "sync " + units.Latency(v)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Target, r.Workload, r.Round, r.Repetition, iops, bw, p99, render.Labels(r.Labels))
	}
	return tw.Flush()
}

func unitOr(u, d string) string {
	if u == "" {
		return d
	}
	return u
}

// HealthTable prints device health records: identity, verdict, and the
// attributes that matter.
func HealthTable(w io.Writer, hs []result.Health) error {
	for _, h := range hs {
		verdict := "healthy"
		if !h.Healthy() {
			verdict = "ATTENTION"
		}
		id := strings.TrimSpace(h.Model + " " + h.Serial)
		if id != "" && id != h.Target {
			id = " (" + id + ")"
		} else {
			id = ""
		}
		when := ""
		if !h.Captured.IsZero() {
			when = " at " + h.Captured.Format("2006-01-02 15:04 MST")
		}
		fmt.Fprintf(w, "Device health of %s%s%s: %s\n", h.Target, id, when, verdict)
		var facts []string
		if h.SelfAssessment != "" {
			facts = append(facts, "self-assessment "+h.SelfAssessment)
		}
		if h.PowerOnHours > 0 {
			facts = append(facts, fmt.Sprintf("%d power-on hours", h.PowerOnHours))
		}
		if h.TemperatureC > 0 {
			facts = append(facts, fmt.Sprintf("%d °C", h.TemperatureC))
		}
		if len(facts) > 0 {
			fmt.Fprintf(w, "  %s\n", strings.Join(facts, ", "))
		}
		attrs := append([]result.SMARTAttribute(nil), h.Attributes...)
		sort.Slice(attrs, func(i, j int) bool { return attrs[i].ID < attrs[j].ID })
		for _, a := range attrs {
			if a.Errors != nil && a.Operations != nil {
				advice := "healthy: the large raw value counts operations"
				if *a.Errors > 0 {
					advice = "watch whether the errors grow"
				}
				fmt.Fprintf(w, "  %3d %s: %d errors in %d operations (raw %d: Seagate's packed counters; %s)\n",
					a.ID, a.Name, *a.Errors, *a.Operations, a.RawValue, advice)
			}
		}
		if len(h.Flags) == 0 {
			fmt.Fprintln(w, "  nothing flagged: "+checked(h))
		}
		for _, fl := range h.Flags {
			if fl.AttributeID > 0 {
				fmt.Fprintf(w, "  ! %3d %s = %d: %s\n", fl.AttributeID, fl.Name, fl.Count, fl.Reason)
			} else {
				fmt.Fprintf(w, "  ! %s: %s\n", fl.Name, fl.Reason)
			}
		}
	}
	return nil
}

// checked says what a healthy record was checked for, by the kind of
// device its attributes show.
func checked(h result.Health) string {
	var ata, nvme, scsi bool
	for _, a := range h.Attributes {
		switch {
		case a.ID > 0:
			ata = true
		case a.Name == "critical_warning" || a.Name == "media_errors":
			nvme = true
		case a.Name == "grown_defect_list" || strings.HasPrefix(a.Name, "uncorrected_"):
			scsi = true
		}
	}
	var parts []string
	if ata {
		parts = append(parts, "no reallocated, pending or uncorrectable sectors, CRC errors or command timeouts")
	}
	if nvme {
		parts = append(parts, "no NVMe critical warning, media errors, spare below threshold, used-up endurance or frequent unsafe shutdowns")
	}
	if scsi {
		parts = append(parts, "no grown defects or uncorrected errors")
	}
	if len(parts) == 0 && h.SelfAssessment == "PASSED" {
		return "the self-assessment passed"
	}
	if len(parts) == 0 {
		return "no attribute to check in the output"
	}
	return strings.Join(parts, "; ")
}
