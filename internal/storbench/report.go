package storbench

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/store"
)

// ReportRequest is a comparison and the verdicts to add to it.
type ReportRequest struct {
	CompareRequest
	// For names the verdicts (analysis.Kinds); empty: every verdict the
	// runs hold the data for.
	For []string
}

// Report compares the named runs and judges them. Besides Compare's
// errors, an unknown verdict, or one the runs hold no data for, is a
// RequestError (its message names the request field: storbench.Field).
func Report(ctx context.Context, st store.Reader, req ReportRequest) (*Comparison, error) {
	for _, k := range req.For {
		if !slices.Contains(analysis.Kinds, k) {
			return nil, badRequest("%s %q: choose among %s", FieldFor, k, strings.Join(analysis.Kinds, ", "))
		}
	}
	cmp, err := Compare(ctx, st, req.CompareRequest)
	if err != nil {
		return nil, err
	}
	// sqlite is judged from app-fitness results, not the comparison.
	kinds := slices.DeleteFunc(slices.Clone(req.For), func(k string) bool { return k == analysis.ForSQLite })
	if len(kinds) > 0 || len(req.For) == 0 {
		cmp.Verdicts, err = analysis.Verdicts(cmp.View.Comparison, kinds)
	}
	if err == nil {
		err = appVerdict(ctx, st, cmp, slices.Contains(req.For, analysis.ForSQLite))
	}
	var missing *analysis.MissingError
	if errors.As(err, &missing) {
		return nil, &RequestError{err}
	}
	if err != nil {
		return nil, err
	}
	return cmp, nil
}

// SaveReport replaces path with data only once data is complete, so an
// interrupted report never leaves half a file nor spoils an older one.
func SaveReport(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
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
