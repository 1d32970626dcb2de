// Package importcmd implements "storbench import": other tools' outputs
// and storbench's generic CSV/JSON, stored as one run with provenance.
package importcmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
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
	format string
	labels []string
	target string
	dryRun bool
	output string
}

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
A file imported before (same SHA-256) is reported and skipped. "-" reads stdin.`,
		Example: `  storbench import fio-nvme.json --label node=pi4-1 --label storage=local
  storbench import results.csv --output json
  storbench import --dry-run iozone-nfs.txt smartctl-sda.txt`,
		Args: cobra.MinimumNArgs(1),
	}
	cmd.Flags().StringVar(&f.format, "format", "", "read every file in this format instead of detecting it: "+formatNames())
	cmd.Flags().StringArrayVar(&f.labels, "label", nil, "add a label key=value to the run and every result (repeatable; a CSV row's own labels win)")
	cmd.Flags().StringVar(&f.target, "target", "", "name the target of every result (default: what the file says, e.g. osd.N, the device or host, else the file name)")
	cmd.Flags().BoolVar(&f.dryRun, "dry-run", false, "parse and show what would be stored, without storing it")
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
	now := time.Now()
	var files []*importer.File
	seen := map[string]string{}
	var sameTwice []string
	for _, name := range args {
		data, err := readInput(d, name)
		if err != nil {
			return cli.Usage(err)
		}
		pf, err := importer.Parse(name, data, opt)
		if err != nil {
			return cli.Usage(err)
		}
		if first, dup := seen[pf.SHA256]; dup {
			sameTwice = append(sameTwice, fmt.Sprintf("%s has the same content as %s", name, first))
			continue
		}
		seen[pf.SHA256] = name
		files = append(files, pf)
	}

	st, err := openStore(ctx, d, f.dryRun)
	if err != nil {
		return err
	}
	if st != nil {
		defer st.Close()
	}
	rep := &Report{DryRun: f.dryRun, Duplicates: []store.ImportedFile{}, Health: []result.Health{}}
	if st != nil {
		var sums []string
		for _, pf := range files {
			sums = append(sums, pf.SHA256)
		}
		dups, err := st.ImportedFiles(ctx, sums)
		if err != nil {
			return err
		}
		rep.Duplicates = append(rep.Duplicates, dups...)
		files = withoutDuplicates(files, dups)
	}

	imp := buildImport(files, labels, now)
	for _, pf := range files {
		rep.Files = append(rep.Files, FileReport{File: pf.Name, SHA256: pf.SHA256, Formats: pf.Formats, Tool: pf.Tool, ToolVersion: pf.ToolVersion,
			Results: len(pf.Results), Health: len(pf.Health), Rows: pf.Rows, Skipped: pf.Skipped, Notes: pf.Notes})
	}
	if rep.Files == nil {
		rep.Files = []FileReport{}
	}
	rep.Results = len(imp.Results)
	rep.Health = append(rep.Health, imp.Health...)

	if !f.dryRun && len(files) > 0 {
		if err := st.ImportRun(ctx, imp); err != nil {
			var dup *store.DuplicateError
			if errors.As(err, &dup) {
				// Another import stored the same file meanwhile.
				rep.Duplicates = append(rep.Duplicates, dup.Files...)
				return writeReport(d, f, rep, imp, sameTwice)
			}
			return err
		}
		rep.RunID = imp.Run.ID
		rep.Health = imp.Health
	}
	if f.dryRun {
		rep.Preview = imp.Results
		rep.Health = imp.Health
	}
	return writeReport(d, f, rep, imp, sameTwice)
}

func readInput(d cli.Deps, name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(d.In)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return data, nil
}

// openStore opens the database; a dry run does not create one that does
// not exist yet (and so cannot find duplicates in it).
func openStore(ctx context.Context, d cli.Deps, dryRun bool) (*store.SQLite, error) {
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

func withoutDuplicates(files []*importer.File, dups []store.ImportedFile) []*importer.File {
	gone := map[string]bool{}
	for _, d := range dups {
		gone[d.SHA256] = true
	}
	var out []*importer.File
	for _, f := range files {
		if !gone[f.SHA256] {
			out = append(out, f)
		}
	}
	return out
}

// buildImport makes the run and gathers every file's results and health.
func buildImport(files []*importer.File, labels map[string]string, now time.Time) *store.Import {
	run := &result.Run{
		ID:      result.NewRunID(now, uint16(rand.IntN(1<<16))),
		Suite:   "import",
		Labels:  labels,
		Status:  result.StatusComplete,
		Started: now, Finished: now,
	}
	imp := &store.Import{Run: run}
	var sources, notes []string
	workloads, targets := map[string]bool{}, map[string]bool{}
	for _, f := range files {
		for _, format := range f.Formats {
			sources = appendUnique(sources, string(format))
		}
		desc := fmt.Sprintf("%s (%s", filepath.Base(f.Name), strings.Join(formatStrings(f.Formats), "+"))
		if f.ToolVersion != "" {
			desc += " " + f.ToolVersion
		}
		notes = append(notes, desc+", sha256 "+f.SHA256[:12]+")")
		for _, r := range f.Results {
			merged := map[string]string{}
			for k, v := range labels {
				merged[k] = v
			}
			for k, v := range r.Labels {
				merged[k] = v
			}
			r.Labels = merged
			imp.Results = append(imp.Results, r)
			if !workloads[r.Workload] {
				workloads[r.Workload] = true
				run.Workloads = append(run.Workloads, r.Workload)
			}
			if !targets[r.Target] {
				targets[r.Target] = true
				run.Targets = append(run.Targets, r.Target)
			}
		}
		for _, h := range f.Health {
			imp.Health = append(imp.Health, h)
			if !targets[h.Target] {
				targets[h.Target] = true
				run.Targets = append(run.Targets, h.Target)
			}
		}
		imp.Files = append(imp.Files, store.ImportedFile{SHA256: f.SHA256, File: f.Name, Format: strings.Join(formatStrings(f.Formats), "+"),
			Tool: f.Tool, ToolVersion: f.ToolVersion, SizeBytes: f.Size, Results: len(f.Results) + len(f.Health), Imported: now})
	}
	run.Source = strings.Join(sources, ",")
	run.Note = "imported from " + strings.Join(notes, "; ")
	return imp
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

func writeReport(d cli.Deps, f *flags, rep *Report, imp *store.Import, sameTwice []string) error {
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
	fmt.Fprintln(tw, "FILE\tFORMAT\tTOOL\tRESULTS\tHEALTH\tROWS")
	for _, fr := range rep.Files {
		tool := strings.TrimSpace(fr.Tool + " " + fr.ToolVersion)
		if strings.HasPrefix(fr.ToolVersion, fr.Tool) {
			tool = fr.ToolVersion
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", fr.File, strings.Join(formatStrings(fr.Formats), "+"), tool, fr.Results, fr.Health, fr.Rows)
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
	}
	if f.dryRun {
		fmt.Fprintf(w, "\nDry run: would store %d results", rep.Results)
		if len(rep.Health) > 0 {
			fmt.Fprintf(w, " and %d device health records", len(rep.Health))
		}
		fmt.Fprintln(w, ":")
		if err := previewTable(w, imp.Results); err != nil {
			return err
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
		fmt.Fprintf(w, "Device health of %s%s: %s\n", h.Target, id, verdict)
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
			fmt.Fprintln(w, "  no reallocated, pending or uncorrectable sectors, CRC errors or command timeouts")
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
