package storbench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/trend"
)

// Export formats.
const (
	// ExportPrometheus is Prometheus's text format, for node_exporter's
	// textfile collector (docs/metrics.md).
	ExportPrometheus = "prometheus"
)

// ExportFormats lists the formats Export writes.
var ExportFormats = []string{ExportPrometheus}

// ExportRequest asks for the stored results in another program's format.
type ExportRequest struct {
	Format string
	// Path is the file to write, replaced whole (see Export), or "-" for
	// Stdout.
	Path   string
	Stdout io.Writer
}

// Export writes what the database says in req.Format. A file is written
// beside its final path and renamed over it once complete, so a reader
// such as node_exporter's textfile collector never sees half of it and a
// failed export leaves the previous file in place. An unknown format, a
// missing path or a database that does not exist is a RequestError;
// nothing is created then.
func Export(ctx context.Context, st store.Store, req ExportRequest) error {
	switch {
	case !slices.Contains(ExportFormats, req.Format):
		return badRequest("%s %q: choose %s", FieldFormat, req.Format, strings.Join(ExportFormats, ", "))
	case req.Path == "":
		return badRequest("name the file to write, or - for standard output")
	}
	if _, err := os.Stat(st.Path()); errors.Is(err, fs.ErrNotExist) {
		return badRequest("no database at %s: nothing to export (storbench run or import stores results there)", st.Path())
	}
	var buf bytes.Buffer
	if err := metrics.Export(ctx, st, &buf, MetricsOptions(st)); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	if req.Path == "-" {
		if _, err := req.Stdout.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("export: writing to standard output: %w", err)
		}
		return nil
	}
	if err := replaceFile(req.Path, buf.Bytes()); err != nil {
		return fmt.Errorf("export: %w", err)
	}
	return nil
}

// MetricsOptions are the metrics' options over st with storbench_regression
// judged by Trend (every history, default thresholds): what serve's
// /metrics and export both show.
func MetricsOptions(st store.Reader) metrics.Options {
	return metrics.Options{Trend: func(ctx context.Context) ([]trend.Assessment, error) {
		rep, err := Trend(ctx, st, TrendRequest{})
		if err != nil {
			return nil, err
		}
		js := make([]trend.Assessment, len(rep.Series))
		for i, s := range rep.Series {
			js[i] = s.Assessment
		}
		return js, nil
	}}
}

// replaceFile writes data to a temporary file in path's folder (a rename
// is atomic only within one filesystem), syncs it, makes it readable by
// all (the textfile collector may run as another user) and renames it
// over path. On any error the temporary file is removed.
func replaceFile(path string, data []byte) (err error) {
	dir, base := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	// A leading dot: the textfile collector reads only *.prom files, so it
	// never reads the file while it is being written.
	tmp, err := os.CreateTemp(dir, "."+base+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreNotExist(os.Remove(tmp.Name())))
		}
	}()
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("replacing %s: %w", path, err)
	}
	return nil
}

func ignoreNotExist(err error) error {
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}
