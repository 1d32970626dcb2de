// Package reportcmd implements "storbench report": a comparison with
// verdicts, charts, stability warnings and each target's environment, as
// terminal text, Markdown, self-contained HTML, JSON or CSV.
package reportcmd

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/render"
)

type flags struct {
	groupBy  string
	baseline string
	round    string
	verdicts []string
	out      string
	format   string
}

// formats maps file extensions to report formats.
var formats = map[string]string{".html": "html", ".htm": "html", ".md": "markdown", ".markdown": "markdown",
	".json": "json", ".csv": "csv", ".txt": "text"}

// NewCommand returns the report command.
func NewCommand(d cli.Deps) *cobra.Command {
	f := &flags{}
	cmd := &cobra.Command{
		Use:   "report RUN-ID... [-o report.html|report.md|report.json|report.csv]",
		Short: "Write a report of stored runs: verdicts, charts, efficiency, stability, environment",
		Long: `Write a report of one or more runs: verdicts first, then per workload a
table and a bar chart, latency percentiles (HTML), efficiency against the
baseline, change between rounds, outliers, stability warnings and the
environment of every target.

The format follows the -o file's extension: .html (one self-contained page
with SVG charts that opens offline), .md (Markdown for GitHub issues and blog
posts), .json and .csv (stable schemas, see docs/analysis.md). Without -o the
report is printed for the terminal. Verdicts are those the runs hold data for
unless --for names them.`,
		Example: `  storbench report 20261122-1423 -o report.html
  storbench report RUN1 RUN2 --group-by storage --baseline storage=nvme -o report.md
  storbench report RUN --for etcd -o etcd.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cli.Usagef("%s: name at least one run ID (see: storbench runs)", cmd.CommandPath())
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.groupBy, "group-by", "", "group targets by this result label (e.g. storage, node) and average each group")
	fl.StringVar(&f.baseline, "baseline", "", "show efficiency against KEY=VALUE (a label) or a target name")
	fl.StringVar(&f.round, "round", "", "report only this round (isolated, parallel, contention)")
	fl.StringSliceVar(&f.verdicts, "for", nil, "verdicts to include: "+strings.Join(analysis.Kinds, ", ")+" (default: every one the runs hold data for)")
	fl.StringVarP(&f.out, "output", "o", "", "write the report to this file; the extension chooses the format (.html, .md, .json, .csv, .txt); a bare format name (json, markdown, csv, html, text) prints it")
	fl.StringVar(&f.format, "format", "", "format when -o has no known extension or is -: html, markdown, json, csv, text")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		format, err := chooseFormat(f)
		if err != nil {
			return err
		}
		for _, v := range f.verdicts {
			if !contains(analysis.Kinds, v) {
				return cli.Usagef("--for %q: choose among %s", v, strings.Join(analysis.Kinds, ", "))
			}
		}
		ctx := cmd.Context()
		st, err := d.OpenStore(ctx)
		if err != nil {
			return err
		}
		defer st.Close()
		cmp, err := cli.LoadComparison(ctx, st, args, analysis.Options{GroupBy: f.groupBy, Baseline: f.baseline, Round: f.round})
		if err != nil {
			return err
		}
		rep := &render.Report{Comparison: cmp.Comparison, Runs: cmp.Runs, Environment: true, Generated: time.Now()}
		kinds := f.verdicts
		if len(kinds) == 0 {
			kinds = analysis.Applicable(cmp.Comparison)
		}
		for _, k := range kinds {
			v, err := analysis.Judge(k, cmp.Comparison, analysis.VerdictOptions{})
			if err != nil {
				var missing *analysis.MissingError
				if errors.As(err, &missing) {
					return cli.Usage(err)
				}
				return err
			}
			rep.Verdicts = append(rep.Verdicts, v)
		}
		var buf bytes.Buffer
		color := f.out == "" && d.Color(d.Out)
		if err := write(&buf, rep, format, color); err != nil {
			return err
		}
		if f.out == "" || f.out == "-" {
			_, err := d.Out.Write(buf.Bytes())
			return err
		}
		if err := writeFileAtomic(f.out, buf.Bytes()); err != nil {
			return err
		}
		fmt.Fprintf(d.ErrOut, "wrote %s (%s, %d bytes)\n", f.out, format, buf.Len())
		return nil
	}
	return cmd
}

func chooseFormat(f *flags) (string, error) {
	if f.format != "" {
		for _, v := range formats {
			if v == f.format {
				return v, nil
			}
		}
		return "", cli.Usagef("--format %q: choose one of html, markdown, json, csv, text", f.format)
	}
	if f.out == "" || f.out == "-" {
		return "text", nil
	}
	// --output json prints, as with every other command.
	bare := map[string]string{"table": "text", "text": "text", "json": "json", "markdown": "markdown", "md": "markdown", "csv": "csv", "html": "html"}
	if v, ok := bare[f.out]; ok {
		f.out = "-"
		return v, nil
	}
	ext := strings.ToLower(filepath.Ext(f.out))
	if v, ok := formats[ext]; ok {
		return v, nil
	}
	return "", cli.Usagef("-o %s: unknown extension %q; use .html, .md, .json, .csv or .txt, or pass --format", f.out, ext)
}

func write(w io.Writer, rep *render.Report, format string, color bool) error {
	switch format {
	case "html":
		return render.ReportHTML(w, rep)
	case "markdown":
		return render.CompareMarkdown(w, rep)
	case "json":
		return render.CompareJSON(w, rep)
	case "csv":
		return render.CompareCSV(w, rep)
	}
	return render.CompareText(w, rep, color)
}

// writeFileAtomic replaces path with data only once data is complete, so
// an interrupted report never leaves half a file.
func writeFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return fmt.Errorf("writing report: %w", err)
	}
	name := tmp.Name()
	_, werr := tmp.Write(data)
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		return errors.Join(fmt.Errorf("writing report %s: %w", path, err), os.Remove(name))
	}
	if err := os.Chmod(name, 0o644); err != nil {
		return errors.Join(fmt.Errorf("writing report %s: %w", path, err), os.Remove(name))
	}
	if err := os.Rename(name, path); err != nil {
		return errors.Join(fmt.Errorf("writing report %s: %w", path, err), os.Remove(name))
	}
	return nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}
