package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// ReportRuns writes the report of stored runs (what finished of them) to
// path; a run where nothing finished gets a notice instead.
func ReportRuns(ctx context.Context, d Deps, st store.Reader, ids []string, format, path string) error {
	c, err := storbench.Report(ctx, st, storbench.ReportRequest{CompareRequest: storbench.CompareRequest{RunIDs: ids}})
	if errors.Is(err, analysis.ErrNoResults) {
		fmt.Fprintf(d.ErrOut, "no report written to %s: no workload finished\n", path)
		return nil
	} else if err != nil {
		return err
	}
	return WriteReport(d, c, format, path)
}

// WriteReport renders a report of c in format and saves it at path (written
// whole, then renamed), or prints it when path is "".
func WriteReport(d Deps, c *storbench.Comparison, format, path string) error {
	var buf bytes.Buffer
	doc := &render.Report{View: c.View, Runs: c.Runs, Verdicts: c.Verdicts, Environment: true, Generated: time.Now()}
	if err := render.WriteReport(&buf, doc, format, path == "" && d.Color(d.Out)); err != nil {
		return err
	}
	if path == "" {
		_, err := d.Out.Write(buf.Bytes())
		return err
	}
	if err := storbench.SaveReport(path, buf.Bytes()); err != nil {
		return err
	}
	fmt.Fprintf(d.ErrOut, "wrote %s (%s, %d bytes)\n", path, format, buf.Len())
	return nil
}
