package runnertest

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/spec"
)

// Subject is one target under test with what it needs.
type Subject struct {
	Target runner.Target
	// Need is what the suite asks of it; conformance runs write workloads.
	Need runner.Need
	// Leftovers lists what storbench created on the target and still
	// exists: files, exclusive holds, Kubernetes objects. Empty when clean.
	Leftovers func() []string
	// State fingerprints what a refusal must leave unchanged (a device's
	// sha256, a directory listing). May be nil.
	State func() string
}

// Unsafe is a situation a runner must refuse.
type Unsafe struct {
	Name string
	// Make arranges the situation.
	Make func(t *testing.T) Subject
	// Want is what the refusal must say.
	Want string
	// PrepareOnly marks a situation Check cannot see because it arises
	// after it (a device mounted between Check and Prepare): only Prepare
	// must refuse it.
	PrepareOnly bool
	// CheckOnly marks a refusal only Check makes, because the engine
	// always calls Check before Prepare and Prepare does not repeat it.
	CheckOnly bool
}

// TargetSuite is one runner's entry into the Target conformance suite.
type TargetSuite struct {
	// Safe returns a target every step may use.
	Safe func(t *testing.T) Subject
	// Unsafe lists every refusal the runner promises.
	Unsafe []Unsafe
}

// TargetConformance runs the runner.Target contract: Check refuses every
// unsafe case and so does Prepare, leaving the target unchanged; Prepare
// leaves nothing on error; Cleanup leaves nothing after fio succeeded,
// failed or was cancelled mid-run; a target that offers telemetry records
// the host while fio runs. It needs fio where the target runs. It is a list
// of subtests; the longer ones live in the check helpers below.
func TargetConformance(t *testing.T, s TargetSuite) {
	for _, u := range s.Unsafe {
		t.Run("refuses/"+u.Name, func(t *testing.T) {
			checkRefusal(t, u)
		})
	}
	t.Run("cleanup after success", func(t *testing.T) {
		sub := s.Safe(t)
		p := prepare(t, sub)
		var rec runner.Recording
		if p.Telemetry != nil {
			if sampler, err := p.Telemetry(); err != nil {
				t.Errorf("telemetry: %v", err)
			} else if sampler != nil {
				rec = sampler.Start()
			}
		}
		if err := runFio(t, p, "", "2s"); err != nil {
			t.Errorf("fio: %v", err)
		}
		if rec != nil {
			checkRecording(t, rec)
		}
		cleanup(t, sub, p)
	})
	t.Run("cleanup after failure", func(t *testing.T) {
		sub := s.Safe(t)
		p := prepare(t, sub)
		if err := runFio(t, p, "storbench-no-such-engine", "2s"); err == nil {
			t.Error("fio with a missing engine succeeded")
		}
		cleanup(t, sub, p)
	})
	t.Run("cleanup after cancel", func(t *testing.T) {
		checkCleanupAfterCancel(t, s.Safe(t))
	})
	t.Run("prepare twice, clean up both", func(t *testing.T) {
		sub := s.Safe(t)
		a := prepare(t, sub)
		need := sub.Need
		need.RunID += "-second"
		b, err := sub.Target.Prepare(context.Background(), need)
		if err == nil {
			if err := b.Cleanup(context.Background()); err != nil {
				t.Error(err)
			}
		}
		cleanup(t, sub, a)
	})
}

// checkRefusal arranges one unsafe situation and checks that Check and
// Prepare refuse it, saying why, leaving nothing behind and the target unchanged.
func checkRefusal(t *testing.T, u Unsafe) {
	sub := u.Make(t)
	var before string
	if sub.State != nil {
		before = sub.State()
	}
	ctx := context.Background()
	if c, ok := sub.Target.(runner.Checker); ok && !u.PrepareOnly {
		err := c.Check(ctx, sub.Need)
		if err == nil || !strings.Contains(err.Error(), u.Want) {
			t.Errorf("Check: want a refusal saying %q, got %v", u.Want, err)
		}
	}
	if u.CheckOnly {
		return
	}
	p, err := sub.Target.Prepare(ctx, sub.Need)
	if err == nil {
		cerr := p.Cleanup(context.Background())
		t.Fatalf("Prepare accepted it (cleanup: %v)", cerr)
	}
	if !strings.Contains(err.Error(), u.Want) {
		t.Errorf("Prepare: refusal does not say %q: %v", u.Want, err)
	}
	if left := sub.Leftovers(); len(left) > 0 {
		t.Errorf("a refused Prepare left %v", left)
	}
	if sub.State != nil {
		if after := sub.State(); after != before {
			t.Errorf("the refused target changed: %s -> %s", before, after)
		}
	}
}

// checkCleanupAfterCancel prepares sub, cancels fio once it reports
// progress and checks that fio fails and Cleanup leaves nothing.
func checkCleanupAfterCancel(t *testing.T, sub Subject) {
	p := prepare(t, sub)
	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, err := fio.Runner{Cmder: p.Cmder, Dir: p.Dir}.Run(ctx, job(t, p, "", "60s"), func(result.Progress) {
			select {
			case <-started:
			default:
				close(started)
			}
		})
		done <- err
	}()
	select {
	case <-started:
	case err := <-done:
		t.Fatalf("fio ended before it was cancelled: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("fio reported no progress in 30s")
	}
	cancel()
	select {
	case err := <-done:
		if err == nil {
			t.Error("cancelled fio reported success")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fio still running 30s after cancel")
	}
	cleanup(t, sub, p)
}

// checkRecording stops a recording made while fio ran: it must say what
// it saw over that time, and the same again when stopped twice.
func checkRecording(t *testing.T, rec runner.Recording) {
	t.Helper()
	tel := rec.Stop()
	switch {
	case tel == nil:
		t.Error("the target's sampler recorded nothing while fio ran")
	case tel.Totals.Elapsed < time.Second:
		t.Errorf("the recording covers %s of a 2s fio run", tel.Totals.Elapsed)
	case rec.Stop() != tel:
		t.Error("a second Stop returned other telemetry")
	}
}

func prepare(t *testing.T, sub Subject) *runner.Prepared {
	t.Helper()
	if c, ok := sub.Target.(runner.Checker); ok {
		if err := c.Check(context.Background(), sub.Need); err != nil {
			t.Fatalf("Check refused a safe target: %v", err)
		}
	}
	p, err := sub.Target.Prepare(context.Background(), sub.Need)
	if err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	return p
}

// cleanup runs Cleanup with a fresh context, as the engine does, and
// checks that nothing is left: not on the target, and no fio process.
func cleanup(t *testing.T, sub Subject, p *runner.Prepared) {
	t.Helper()
	if err := p.Cleanup(context.Background()); err != nil {
		t.Errorf("Cleanup: %v", err)
	}
	if err := p.Cleanup(context.Background()); err != nil {
		t.Errorf("a second Cleanup: %v", err)
	}
	if left := sub.Leftovers(); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
	if kids := FioChildren(); len(kids) > 0 {
		t.Errorf("fio still running: %v", kids)
	}
}

func job(t *testing.T, p *runner.Prepared, engine, runtime string) fio.Job {
	t.Helper()
	// fio.FromWorkload replaces only libaio with the engine given.
	base := "psync"
	if engine != "" {
		base = "libaio"
	}
	s, err := spec.Parse([]byte(`
name: target-conformance
workloads:
  - {name: w, rw: randwrite, bs: 4KiB, size: 8MiB, runtime: `+runtime+`, ioengine: `+base+`}
`), "target-conformance")
	if err != nil {
		t.Fatal(err)
	}
	f := p.File
	if f.Size == 0 || f.Size > 8<<20 {
		f.Size = 8 << 20
	}
	if engine != "" && f.Engine != nil {
		// An engine target's own engine replaces the workload's: the
		// engine asked for (a missing one) replaces it instead.
		e := *f.Engine
		e.IOEngine = engine
		f.Engine = &e
	}
	return fio.FromWorkload(s.Workloads[0], f, engine)
}

func runFio(t *testing.T, p *runner.Prepared, engine, runtime string) error {
	t.Helper()
	_, err := fio.Runner{Cmder: p.Cmder, Dir: p.Dir}.Run(context.Background(), job(t, p, engine, runtime), nil)
	return err
}

// FioChildren lists fio processes whose parent is this process: a
// cancelled or failed run must not leave one writing.
func FioChildren() []string {
	entries, _ := os.ReadDir("/proc")
	me := os.Getpid()
	var out []string
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...
		s := string(stat)
		rp := strings.LastIndexByte(s, ')')
		lp := strings.IndexByte(s, '(')
		if lp < 0 || rp < lp {
			continue
		}
		comm := s[lp+1 : rp]
		f := strings.Fields(s[rp+1:])
		if len(f) < 2 || comm != "fio" || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == me {
			out = append(out, "fio pid "+strconv.Itoa(pid))
		}
	}
	return out
}

// Listing is every path under dir, relative to it and sorted, one per line:
// a TargetSuite's State for a target whose files are on this host.
func Listing(dir string) string {
	var out []string
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err == nil && p != dir {
			out = append(out, strings.TrimPrefix(p, dir))
		}
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}
