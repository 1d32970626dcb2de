// Package storbenchtest runs a suite through the library and reads the run
// back as `storbench show` does, for tests and benchmarks on real storage
// (test/cephtest, test/glustertest, bench/faults).
package storbenchtest

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/store"
)

// Runner runs one suite on one target, with telemetry, into a store of
// its own that lives as long as the test.
type Runner struct {
	st     store.Store
	suite  *spec.Suite
	target string
}

// New parses suiteYAML (named name in errors) and opens a store in the
// test's temporary directory, closed when the test ends.
func New(ctx context.Context, tb testing.TB, name, suiteYAML, target string) *Runner {
	tb.Helper()
	s, err := spec.Parse([]byte(suiteYAML), name)
	if err != nil {
		tb.Fatal(err)
	}
	st, err := store.Open(ctx, filepath.Join(tb.TempDir(), "results.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	return &Runner{st: st, suite: s, target: target}
}

// Run runs the suite once and returns the run as show reads it.
func (r *Runner) Run(ctx context.Context, tb testing.TB) *storbench.RunDetail {
	tb.Helper()
	return r.RunWith(ctx, tb, nil)
}

// RunWith is Run with the request edited first (a round, a probe).
func (r *Runner) RunWith(ctx context.Context, tb testing.TB, edit func(*storbench.RunRequest)) *storbench.RunDetail {
	tb.Helper()
	req := storbench.DefaultRunRequest()
	req.SuiteSpec, req.Targets, req.Telemetry = r.suite, []string{r.target}, true
	if edit != nil {
		edit(&req)
	}
	run, err := storbench.Run(ctx, r.st, req, nil)
	if err != nil {
		tb.Fatal(err)
	}
	d, err := storbench.Show(ctx, r.st, storbench.ShowRequest{RunID: run.ID})
	if err != nil {
		tb.Fatal(err)
	}
	return d
}
