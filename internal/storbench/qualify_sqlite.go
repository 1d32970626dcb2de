package storbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/appfit"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/ssh"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/version"
)

// qualifySQLite is qualify --for sqlite: on --target directories, the
// filesystem-semantics probe and SQLite's commits measured by two
// processes of storbench's own binary on this host, stored as a run of
// round result.RoundApp; or the stored runs named. Judged by
// analysis.SQLiteVerdict.
func qualifySQLite(ctx context.Context, st store.Store, req QualifyRequest) (*Qualification, error) {
	q := &Qualification{}
	ids := req.RunIDs
	if len(req.Targets) > 0 {
		if req.Suite != "" || len(req.Destructive) > 0 || req.Repeat != 1 {
			return nil, badRequest("the sqlite verdict measures directories with its own probe: Suite, Destructive and Repeat do not apply")
		}
		id, err := measureApps(ctx, st, req)
		if id == "" {
			return nil, err
		}
		q.Measured, q.Failed, ids = id, err, []string{id}
		if ctx.Err() != nil {
			return q, err
		}
	}
	var results []result.Result
	for _, id := range ids {
		run, err := st.Run(ctx, id)
		if err != nil {
			return q, &RequestError{fmt.Errorf("run %s: %w", id, err)}
		}
		q.Runs = append(q.Runs, *run)
		rs, err := st.Results(ctx, store.ResultFilter{RunIDs: []string{run.ID}, Round: result.RoundApp})
		if err != nil {
			return q, err
		}
		results = append(results, rs...)
	}
	v, err := analysis.SQLiteVerdict(results)
	var missing *analysis.MissingError
	switch {
	case errors.As(err, &missing) && q.Failed == nil:
		return q, &RequestError{err}
	case err != nil:
		return q, errors.Join(q.Failed, err)
	}
	q.Verdict = v
	return q, nil
}

// measureApps probes each target directory and stores the run; it returns
// the run's ID ("" when nothing was stored).
func measureApps(ctx context.Context, st store.Recorder, req QualifyRequest) (string, error) {
	bin := req.Binary
	if bin == "" {
		var err error
		if bin, err = os.Executable(); err != nil {
			return "", fmt.Errorf("finding storbench's own binary for the probe: %w", err)
		}
	}
	clients := map[string]appfit.Client{}
	for _, t := range req.Targets {
		c, done, err := sshAppClient(ctx, t, bin) // qualify_sqlite_ssh.go
		if err != nil {
			return "", err
		}
		if c != nil {
			defer done()
			clients[t] = *c
			continue
		}
		if fi, err := os.Stat(t); err != nil || !fi.IsDir() {
			return "", badRequest("Targets: %s: the sqlite verdict needs an existing directory", t)
		}
		clients[t] = appfit.Client{Cmder: execx.Local{}, Binary: bin, Where: "this host", Dir: t}
	}
	now := time.Now()
	run := &result.Run{ID: result.NewRunID(now, uint16(rand.UintN(1<<16))), Suite: "appfit", Targets: req.Targets,
		Status: result.StatusRunning, Started: now, Source: "storbench", Labels: map[string]string{string(result.LabelStorbenchVersion): version.Version}}
	sctx := context.WithoutCancel(ctx)
	if err := st.CreateRun(sctx, run); err != nil {
		return "", err
	}
	var errs []error
	for _, t := range req.Targets {
		m, err := measureApp(ctx, clients[t], run.ID, req)
		errs = append(errs, err)
		m.Target = t
		for _, r := range m.Results() {
			run.Workloads = append(run.Workloads, r.Workload)
			if err := st.AddResult(sctx, &r); err != nil {
				return run.ID, err
			}
		}
	}
	err := errors.Join(errs...)
	run.Status, run.Finished = result.StatusComplete, time.Now()
	switch {
	case ctx.Err() != nil:
		run.Status = result.StatusInterrupted
	case err != nil:
		run.Status, run.Note = result.StatusFailed, err.Error()
	}
	return run.ID, errors.Join(err, st.UpdateRun(sctx, run))
}

// measureApp is one directory's probe: the semantics by two clients,
// SQLite's modes by one, and WAL with synchronous=FULL by both at once.
func measureApp(ctx context.Context, c appfit.Client, runID string, req QualifyRequest) (appfit.Measured, error) {
	kind := "local"
	if _, ok := c.Cmder.(*ssh.Client); ok {
		kind = "ssh"
	}
	m := appfit.Measured{RunID: runID, Labels: req.Labels, Kind: kind, Started: time.Now()}
	id := fmt.Sprintf("%s-%d", runID, os.Getpid())
	rep, err := appfit.Probe(ctx, appfit.ProbeOptions{First: c, Second: c, ID: id})
	if err != nil {
		return m, fmt.Errorf("probing %s: %w", c.Dir, err)
	}
	m.Semantic = rep
	one, err := appfit.BenchSQLite(ctx, appfit.SQLiteBenchOptions{Clients: []appfit.Client{c}, ID: id, Duration: req.AppDuration})
	m.SQLite = append(m.SQLite, one...)
	if err != nil {
		return m, fmt.Errorf("SQLite on %s: %w", c.Dir, err)
	}
	two, err := appfit.BenchSQLite(ctx, appfit.SQLiteBenchOptions{Clients: []appfit.Client{c, c}, ID: id + "-2",
		Modes: []appfit.Mode{{Journal: appfit.JournalWAL, Synchronous: appfit.SyncFull}}, Duration: req.AppDuration})
	m.SQLite = append(m.SQLite, two...)
	if err != nil {
		return m, fmt.Errorf("SQLite by two clients on %s: %w", c.Dir, err)
	}
	return m, nil
}
