package storbench_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/runnertest"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/storbench"
	"github.com/storbench/storbench/internal/testenv"
)

// scratchKind is a kind written only for these tests, the proof that a
// kind is local: "scratch:ROOT" is a directory ROOT in which each run gets
// a scratch directory of its own (ROOT/sb-scratch-RUNID, marked with the
// run's ID), removed by its cleanup, found and removed by cleanup when a
// run was killed. It registers itself with Kinds().With, passes the
// conformance suites and runs a suite through the library unchanged.
type scratchKind struct{}

const scratchPrefix = "scratch:"

func (scratchKind) Name() string { return "scratch" }

func (scratchKind) Parse(target string) (runner.Spec, bool, error) {
	root, ok := strings.CutPrefix(target, scratchPrefix)
	if !ok {
		return nil, false, nil
	}
	if !filepath.IsAbs(root) {
		return nil, true, fmt.Errorf("targets: %s: write scratch:/ABSOLUTE/DIR", target)
	}
	return scratchSpec(root), true, nil
}

func (scratchKind) Doctor(_ context.Context, specs []runner.Spec, _ runner.Options) []result.Check {
	var out []result.Check
	for _, s := range specs {
		c := result.Check{Area: "scratch", Name: s.String(), Status: result.CheckOK, Detail: "a directory"}
		if fi, err := os.Stat(scratchRoot(s)); err != nil || !fi.IsDir() {
			c.Status, c.Detail, c.Fix = result.CheckFail, fmt.Sprintf("not a directory (%v)", err), "create it"
		}
		out = append(out, c)
	}
	return out
}

func (scratchKind) FindLeftovers(_ context.Context, s runner.Spec, runID string) ([]runner.Leftover, error) {
	dirs, err := filepath.Glob(filepath.Join(scratchRoot(s), "sb-scratch-*"))
	if err != nil {
		return nil, err
	}
	var out []runner.Leftover
	for _, d := range dirs {
		id, err := os.ReadFile(filepath.Join(d, ".run"))
		if err != nil || runID != "" && string(id) != runID {
			continue
		}
		out = append(out, runner.Leftover{Kind: "scratch", Where: s.String(), Name: d, RunID: string(id), Detail: "scratch directory"})
	}
	return out, nil
}

func (scratchKind) RemoveLeftover(_ context.Context, l runner.Leftover) error {
	return os.RemoveAll(l.Name)
}

type scratchSpec string

func scratchRoot(s runner.Spec) string { return string(s.(scratchSpec)) }

func (s scratchSpec) String() string { return scratchPrefix + string(s) }
func (s scratchSpec) Describe() string {
	return "a scratch directory of the run's own in " + string(s) + ", removed after the run"
}
func (s scratchSpec) Target(runner.Options) (runner.Target, error) { return scratchTarget{s}, nil }

type scratchTarget struct{ spec scratchSpec }

func (t scratchTarget) Name() string { return t.spec.String() }

func (t scratchTarget) Prepare(_ context.Context, need runner.Need) (*runner.Prepared, error) {
	dir := filepath.Join(string(t.spec), "sb-scratch-"+need.RunID)
	if err := os.Mkdir(dir, 0o700); err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".run"), []byte(need.RunID), 0o600); err != nil {
		return nil, errors.Join(fmt.Errorf("target %s: %w", t.Name(), err), os.RemoveAll(dir))
	}
	return &runner.Prepared{Name: t.Name(), Kind: "scratch", Cmder: execx.Local{}, Local: true, Dir: dir,
		File:    fio.File{Name: "scratch.dat", Size: need.FileSize},
		Cleanup: func(context.Context) error { return os.RemoveAll(dir) }}, nil
}

// scratchSubject is a scratch target in a new root; leftovers are the
// root's entries.
func scratchSubject(t *testing.T, root string, runID string) runnertest.Subject {
	return runnertest.Subject{
		Target: scratchTarget{scratchSpec(root)},
		Need:   runner.Need{RunID: runID, FileSize: 8 << 20, Writers: []string{"w"}, Direct: true},
		Leftovers: func() []string {
			if l := runnertest.Listing(root); l != "" {
				return strings.Split(l, "\n")
			}
			return nil
		},
	}
}

func TestScratchKindConformance(t *testing.T) {
	testenv.Fio(t)
	root := t.TempDir()
	runnertest.KindConformance(t, runnertest.KindSuite{
		Kind:      scratchKind{},
		Valid:     []string{scratchPrefix + root},
		Malformed: []runnertest.Malformed{{Target: "scratch:relative", Want: "scratch:/ABSOLUTE/DIR"}},
		Foreign:   []string{root, "rbd:bench/img", "ssh://host/srv"},
		Targets: &runnertest.TargetSuite{
			Safe: func(t *testing.T) runnertest.Subject { return scratchSubject(t, t.TempDir(), "conf") },
			Unsafe: []runnertest.Unsafe{{Name: "missing root", Want: "no such file", Make: func(t *testing.T) runnertest.Subject {
				return scratchSubject(t, filepath.Join(t.TempDir(), "missing"), "r")
			}}},
		},
		Killed: func(t *testing.T) (runner.Spec, runnertest.Subject, runner.Need) {
			sub := scratchSubject(t, t.TempDir(), "killed-1")
			if _, err := sub.Target.Prepare(context.Background(), sub.Need); err != nil {
				t.Fatal(err)
			}
			return scratchSpec(sub.Target.Name()[len(scratchPrefix):]), sub, sub.Need
		},
	})
}

// The scratch kind, added by its caller alone, runs a suite end to end
// through the library: results name its target and kind, and the run
// leaves nothing; a dry run of a raw job describes it; doctor checks it;
// cleanup finds and removes what a killed run left.
func TestScratchKindEndToEnd(t *testing.T) {
	testenv.Fio(t)
	ctx := context.Background()
	root := t.TempDir()
	kinds := storbench.Kinds().With(scratchKind{})
	s, err := spec.Parse([]byte("name: scratch\nworkloads:\n  - {name: w, rw: randwrite, bs: 4KiB, size: 8MiB, runtime: 1s, ioengine: psync}\n"), "scratch")
	if err != nil {
		t.Fatal(err)
	}
	req := storbench.DefaultRunRequest()
	req.SuiteSpec, req.Targets, req.Kinds, req.Telemetry = s, []string{scratchPrefix + root}, kinds, false
	st := sqliteStore(t)
	run, err := storbench.Run(ctx, st, req, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, err := storbench.LoadRunOutcome(ctx, st, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Results) != 1 || out.Results[0].Target != scratchPrefix+root || result.LabelTargetKind.Of(out.Results[0].Labels) != "scratch" {
		t.Fatalf("results: %+v", out.Results)
	}
	if r := out.Results[0]; r.Write == nil || r.Write.IOPS <= 0 {
		t.Errorf("no write IOPS measured: %+v", r)
	}
	if l := runnertest.Listing(root); l != "" {
		t.Errorf("the run left %s", l)
	}

	// A dry run of a raw job prepares the target, judges the job there
	// and cleans up again.
	job := filepath.Join(t.TempDir(), "job.fio")
	if err := os.WriteFile(job, []byte("[a]\nrw=randwrite\nbs=4k\nsize=1m\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	dreq := storbench.DefaultRunRequest()
	dreq.FioJob, dreq.Targets, dreq.Kinds = job, []string{scratchPrefix + root}, kinds
	views, err := storbench.DryRun(ctx, dreq)
	if err != nil || len(views) != 1 || views[0].Target != scratchPrefix+root || len(views[0].Touches) != 1 || !views[0].Touches[0].Own {
		t.Fatalf("dry run: %+v, %v", views, err)
	}
	if l := runnertest.Listing(root); l != "" {
		t.Errorf("the dry run left %s", l)
	}

	// Without the kind, the library has no such target: it is a path.
	req.Kinds = nil
	if _, err := storbench.Run(ctx, st, req, nil); err == nil {
		t.Error("a scratch: target ran without its kind")
	}

	checks := storbench.Doctor(ctx, storbench.DoctorRequest{DB: filepath.Join(t.TempDir(), "r.db"), Targets: []string{scratchPrefix + root, scratchPrefix + "/nonexistent"}, Kinds: kinds})
	var got []string
	for _, c := range checks {
		if c.Area == "scratch" {
			got = append(got, string(c.Status))
		}
	}
	if strings.Join(got, ",") != "ok,fail" {
		t.Errorf("doctor's scratch checks: %v", got)
	}

	// A killed run's scratch directory, found and removed by cleanup.
	if _, err := (scratchTarget{scratchSpec(root)}).Prepare(ctx, runner.Need{RunID: "killed-2"}); err != nil {
		t.Fatal(err)
	}
	dry, err := storbench.CleanupKinds(ctx, storbench.KindCleanupRequest{Targets: []string{scratchPrefix + root}, Kinds: kinds, DryRun: true})
	if err != nil || len(dry.Targets) != 1 || len(dry.Targets[0].Leftovers) != 1 || dry.Targets[0].Leftovers[0].RunID != "killed-2" {
		t.Fatalf("dry cleanup: %+v, %v", dry, err)
	}
	if runnertest.Listing(root) == "" {
		t.Fatal("a dry cleanup removed the leftover")
	}
	rep, err := storbench.CleanupKinds(ctx, storbench.KindCleanupRequest{Targets: []string{scratchPrefix + root}, Kinds: kinds})
	if err != nil || !rep.Targets[0].Leftovers[0].Removed {
		t.Fatalf("cleanup: %+v, %v", rep, err)
	}
	if l := runnertest.Listing(root); l != "" {
		t.Errorf("cleanup left %s", l)
	}
}
