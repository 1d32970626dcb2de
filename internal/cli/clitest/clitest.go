// Package clitest runs storbench commands in tests: the real command tree,
// a real SQLite file, and results stored through the store API.
package clitest

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/cli"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// Invocation is one finished command.
type Invocation struct {
	Code           int
	Stdout, Stderr string
}

// Runner runs the command tree; app.Run fits (tests pass it in, since app
// imports every command package).
type Runner func(ctx context.Context, streams cli.Streams, args []string, getenv func(string) string) int

// Run runs storbench --db db args... with NO_COLOR set.
func Run(t *testing.T, run Runner, db string, args ...string) Invocation {
	t.Helper()
	var out, errb bytes.Buffer
	env := func(k string) string {
		if k == "NO_COLOR" {
			return "1"
		}
		return os.Getenv(k)
	}
	code := run(context.Background(), cli.Streams{In: strings.NewReader(""), Out: &out, ErrOut: &errb}, append([]string{"--db", db}, args...), env)
	return Invocation{code, out.String(), errb.String()}
}

// Seed stores a run holding the results of a JSON file (a list of
// result.Result) and returns the run's ID.
func Seed(t *testing.T, db, runID, fixture string) string {
	t.Helper()
	data, err := os.ReadFile(fixture)
	if err != nil {
		t.Fatal(err)
	}
	var rs []result.Result
	if err := json.Unmarshal(data, &rs); err != nil {
		t.Fatal(err)
	}
	return SeedResults(t, db, runID, rs)
}

// SeedResults stores a run with these results through store.AddResult.
func SeedResults(t *testing.T, db, runID string, rs []result.Result) string {
	t.Helper()
	ctx := context.Background()
	st, err := store.Open(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	run := &result.Run{ID: runID, Suite: "standard", Source: "storbench", Status: result.StatusComplete}
	if len(rs) > 0 {
		run.Started = rs[0].Started
	}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i := range rs {
		rs[i].RunID = runID
		if err := st.AddResult(ctx, &rs[i]); err != nil {
			t.Fatal(err)
		}
	}
	return runID
}
