package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/testenv"
)

const corpusDir = "../fio/testdata/corpus"

// refusedExamples are fio examples fio runs here that storbench refuses on
// purpose, with the reason its refusal must give.
var refusedExamples = map[string]string{
	"exec.fio":            "ioengine=exec",
	"netio.fio":           "ioengine=net",
	"netio_multicast.fio": "ioengine=net",
}

// hangingExamples are fio examples that fio 3.33 itself runs to the end in
// only some tries: with io_submit_mode=offload its submission thread and the
// job deadlock at exit in about half the runs, bare fio included (measured:
// 4 of 10 bare runs and 11 of 15 with --status-interval hung until killed).
// A hang is fio's, not storbench's, so these are not compared; storbench
// must still stop such a fio on its deadline and leave nothing behind,
// which TestHungFioStopsOnDeadline checks.
var hangingExamples = map[string]string{
	"fixed-rate-submission.fio":   "io_submit_mode=offload",
	"poisson-rate-submission.fio": "io_submit_mode=offload",
}

// racingExamples are fio examples whose jobs end one another (exitall,
// exit_what): which directions a job's group report shows I/O in depends
// on how far the other jobs got when they were ended, which differs from
// run to run on a loaded machine (exitwhat.fio reported slow2's group as
// write only under storbench, read+write under fio, once in five runs).
// Their reports, options and groups are compared, not their directions.
var racingExamples = map[string]string{
	"exitwhat.fio": "exitall=1 and exit_what end jobs mid-run",
}

// verifyingExamples verify in a later phase what an earlier one wrote:
// cut short by the 300ms runtime on a loaded machine, the writer leaves
// blocks the verifier rejects (EILSEQ), so only their size is capped.
var verifyingExamples = map[string]string{
	"surface-scan.fio": "verify-phase reads back all that write-phase was to fill",
}

// rawDeadline bounds one example's run under storbench: every example is
// shortened to 300ms of I/O, so a run this long is a hang.
const rawDeadline = 90 * time.Second

// runRaw runs a job file through the engine on a new directory target and
// returns fio's JSON as storbench stored it.
func runRaw(t *testing.T, path string, policy safety.Policy) (*fio.Output, error) {
	t.Helper()
	return runRawWithin(t, path, policy, rawDeadline)
}

func runRawWithin(t *testing.T, path string, policy safety.Policy, deadline time.Duration) (*fio.Output, error) {
	t.Helper()
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{})
	if err != nil {
		return nil, err
	}
	st, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "r.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	target := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	run, err := (&Engine{Store: st, Observer: &notes{}}).Run(ctx, Plan{
		RawJob: &RawJob{Path: path, File: jf}, Policy: policy, Targets: []runner.Target{local.NewTarget(target, local.Options{})},
	})
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("%s left %d entries in the target", filepath.Base(path), len(ents))
	}
	if err != nil {
		return nil, err
	}
	results, err := st.Results(context.Background(), store.ResultFilter{RunIDs: []string{run.ID}})
	if err != nil || len(results) == 0 {
		t.Fatalf("results: %v (%d)", err, len(results))
	}
	raw, err := st.RawFioJSON(context.Background(), results[0].ID)
	if err != nil {
		t.Fatal(err)
	}
	var out fio.Output
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatal(err)
	}
	return &out, nil
}

// runFio runs a job file with fio itself in a new directory; ok is false
// when fio cannot run it here (missing engine, hardware, network, or too
// slow once shortened).
func runFio(t *testing.T, path string) (*fio.Output, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 40*time.Second)
	defer cancel()
	out, err := fio.RunBare(ctx, t.TempDir(), path)
	return out, err == nil
}

var devPath = regexp.MustCompile(`/dev/[A-Za-z0-9_./-]+`)

// namesDevice reports whether a job file's options (not its comments) name
// something under /dev.
func namesDevice(path string) bool {
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{Getenv: func(string) (string, bool) { return "", false }})
	if err != nil {
		data, _ := os.ReadFile(path)
		return strings.Contains(string(data), "/dev/")
	}
	return jf.Mentions("/dev/")
}

// Every fio example that fio itself runs here runs the same under
// storbench: the same job reports, the same effective options apart from
// file placement, the same directions with I/O; a few are refused on
// purpose, with the reason. Both sides run the same shortened file. The
// examples run side by side (nothing here is timed), except those naming a
// file outside their directory, which two examples may share.
func TestFioExamplesRunAsFioRunsThem(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	if testing.Short() {
		t.Skip("runs every fio example twice")
	}
	files, err := filepath.Glob(filepath.Join(corpusDir, "fio-examples", "*.fio"))
	if err != nil || len(files) < 100 {
		t.Fatalf("corpus: %v, %d files", err, len(files))
	}
	work := t.TempDir()
	var tally exampleTally
	t.Run("examples", func(t *testing.T) {
		for _, f := range files {
			name := filepath.Base(f)
			if namesDevice(f) {
				continue // TestFioExamplesOnDevicesRefused
			}
			if why, ok := hangingExamples[name]; ok {
				t.Logf("%s: not compared, fio itself hangs in some runs (%s)", name, why)
				continue
			}
			short := shortenExample(t, f, work)
			shared := len(absoluteFiles(short)) > 0
			t.Run(name, func(t *testing.T) {
				if !shared {
					t.Parallel()
				}
				compareExample(t, short, &tally)
			})
		}
	})
	t.Logf("fio examples: %d that fio runs here compared, %d identical under storbench, %d refused on purpose", tally.runnable, tally.identical, tally.refused)
	if tally.runnable < 15 {
		t.Errorf("only %d examples ran under fio here", tally.runnable)
	}
	if tally.refused != len(refusedExamples) {
		t.Errorf("%d of the %d examples refused on purpose were refused", tally.refused, len(refusedExamples))
	}
}

// exampleTally counts what became of the fio examples; their subtests run
// side by side.
type exampleTally struct {
	mu                           sync.Mutex
	runnable, identical, refused int
}

func (c *exampleTally) add(runnable, identical, refused int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.runnable += runnable
	c.identical += identical
	c.refused += refused
}

// shortenExample writes the example f into work cut to 300ms of I/O and
// 16m per file, and returns its path. The files it names in /tmp that do
// not exist yet are removed when the test ends: fio itself leaves them.
func shortenExample(t *testing.T, f, work string) string {
	t.Helper()
	name := filepath.Base(f)
	text, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(work, name)
	runtime := "300ms"
	if _, ok := verifyingExamples[name]; ok {
		runtime = "60s" // the 16m size ends it first
	}
	if err := os.WriteFile(short, fio.Shorten(text, runtime, "16m"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, p := range absoluteFiles(short) {
		if _, err := os.Lstat(p); err != nil {
			t.Cleanup(func() { os.Remove(p) })
		}
	}
	return short
}

// compareExample runs the shortened example under storbench and, unless
// storbench refuses it on purpose, under fio itself, and compares the two.
// An example refused on purpose is refused whether or not fio runs it here:
// fio waits out its whole deadline on netio.fio, a sender with no receiver.
func compareExample(t *testing.T, short string, tally *exampleTally) {
	name := filepath.Base(short)
	if want, ok := refusedExamples[name]; ok {
		_, err := runRaw(t, short, safety.Policy{})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("want a refusal naming %q, got %v", want, err)
		}
		tally.add(0, 0, 1)
		return
	}
	own, ok := runFio(t, short)
	if !ok {
		t.Logf("%s: fio cannot run it here", name)
		return
	}
	tally.add(1, 0, 0)
	got, err := runRaw(t, short, safety.Policy{})
	if err != nil {
		t.Fatalf("fio runs it, storbench fails: %v", err)
	}
	d := fio.Differences(own, got)
	if _, racing := racingExamples[name]; racing {
		d = slices.DeleteFunc(d, func(s string) bool { return strings.Contains(s, ": I/O in ") })
	}
	if len(d) > 0 {
		t.Fatalf("differs from fio's own run:\n%s", strings.Join(d, "\n"))
	}
	tally.add(0, 1, 0)
}

// The fio examples that name devices, pointed at a loop device carrying
// ext4, never change it: storbench refuses every one that would write.
func TestFioExamplesOnDevicesRefused(t *testing.T) {
	testenv.Root(t)
	testenv.Fio(t)
	testenv.Tool(t, "mkfs.ext4", "e2fsprogs")
	dev := testenv.LoopDevice(t, 64<<20)
	if out, err := exec.Command("mkfs.ext4", "-q", dev).CombinedOutput(); err != nil {
		t.Fatalf("mkfs.ext4: %v %s", err, out)
	}
	before := deviceSum(t, dev)
	files, err := filepath.Glob(filepath.Join(corpusDir, "fio-examples", "*.fio"))
	if err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	n := 0
	for _, f := range files {
		if !namesDevice(f) {
			continue
		}
		n++
		name := filepath.Base(f)
		t.Run(name, func(t *testing.T) {
			text, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			pointed := devPath.ReplaceAll(fio.Shorten(text, "300ms", "16m"), []byte(dev))
			p := filepath.Join(work, name)
			if err := os.WriteFile(p, pointed, 0o644); err != nil {
				t.Fatal(err)
			}
			jf, rerr := fio.ReadJobFile(p, fio.ReadOptions{})
			writes := false
			if rerr == nil {
				for i, s := range jf.Sections {
					if !s.Global && safety.Writes(jf.Resolved(i)) {
						writes = true
					}
				}
			}
			_, err = runRaw(t, p, safety.Policy{})
			if writes && err == nil {
				t.Errorf("a writing example ran on the device")
			}
			t.Logf("%s: %v", name, err)
			if deviceSum(t, dev) != before {
				t.Fatalf("changed the device")
			}
		})
	}
	if n < 30 {
		t.Errorf("only %d device examples", n)
	}
}

// kbench's job files leave filename and size to their runner and include
// shared option files: storbench runs them unchanged on a directory.
func TestKbenchJobsRunUnchanged(t *testing.T) {
	testenv.Fio(t)
	files, err := filepath.Glob(filepath.Join(corpusDir, "kbench", "*.fio"))
	if err != nil || len(files) < 20 {
		t.Fatalf("corpus: %v, %d files", err, len(files))
	}
	for _, f := range files {
		if strings.HasSuffix(f, "-include.fio") {
			continue
		}
		jf, err := fio.ReadJobFile(f, fio.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		// Every file is judged as fio reads it, on a directory of its own.
		dir := t.TempDir()
		j, err := Judge(context.Background(), fio.Runner{Cmder: execx.Local{}}, jf, dir, JudgeOptions{File: fio.File{Name: local.TestFileName, Size: 64 << 20}, Local: true})
		if err != nil {
			t.Fatalf("%s: %v", filepath.Base(f), err)
		}
		for _, job := range j.Reading.Jobs {
			if v, _ := job.Value("filename"); v != local.TestFileName {
				t.Errorf("%s [%s]: filename %q, want storbench's test file", filepath.Base(f), job.Section, v)
			}
			if v, _ := job.Value("stonewall"); v != "1" {
				t.Errorf("%s [%s]: the included stonewall=1 is lost", filepath.Base(f), job.Section)
			}
		}
	}
	if testing.Short() {
		return
	}
	// One runs for real: the job file and its other includes unchanged,
	// quick-include.fio's 1s ramp + 5s per job cut to 200ms + 1s (4 jobs).
	out, err := runRaw(t, kbenchShortened(t, "iops-quick.fio"), safety.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range out.Jobs {
		names = append(names, j.Name)
		if r := fio.ToResult(j); r.Read == nil && r.Write == nil {
			t.Errorf("%s did no I/O", j.Name)
		}
	}
	if strings.Join(names, ",") != "rand-read-iops,rand-write-iops,seq-read-iops,seq-write-iops" {
		t.Errorf("jobs %v", names)
	}
}

// kbenchShortened copies kbench's job files into a new directory with
// quick-include.fio's timing cut, and returns the copy of the file named.
func kbenchShortened(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := filepath.Glob(filepath.Join(corpusDir, "kbench", "*.fio"))
	if err != nil {
		t.Fatal(err)
	}
	cut := strings.NewReplacer("ramp_time=1s\n", "ramp_time=200ms\n", "runtime=5s\n", "runtime=1s\n")
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "quick-include.fio" {
			short := cut.Replace(string(text))
			if !strings.Contains(short, "runtime=1s\n") || !strings.Contains(short, "ramp_time=200ms\n") {
				t.Fatalf("quick-include.fio no longer says ramp_time=1s and runtime=5s:\n%s", text)
			}
			text = []byte(short)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, name)
}

// absoluteFiles lists the absolute regular-file names a job file gives.
func absoluteFiles(path string) []string {
	jf, err := fio.ReadJobFile(path, fio.ReadOptions{})
	if err != nil {
		return nil
	}
	var out []string
	for _, s := range jf.Sections {
		for _, l := range s.Lines {
			if l.Key() == "filename" {
				for _, p := range fio.SplitList(l.Value()) {
					if strings.HasPrefix(p, "/") && !strings.HasPrefix(p, "/dev/") {
						out = append(out, p)
					}
				}
			}
		}
	}
	return out
}

// A fio that hangs and ignores SIGTERM (fio 3.33 with io_submit_mode=offload
// deadlocks at exit in about half its runs) is stopped on the caller's
// deadline: the run ends within the deadline plus the stop grace, no fio
// process is left below storbench, and the target is empty (runRawWithin
// checks). Tries until one run hangs, at most three.
func TestHungFioStopsOnDeadline(t *testing.T) {
	testenv.Fio(t)
	text, err := os.ReadFile(filepath.Join(corpusDir, "fio-examples", "poisson-rate-submission.fio"))
	if err != nil {
		t.Fatal(err)
	}
	short := filepath.Join(t.TempDir(), "offload.fio")
	if err := os.WriteFile(short, fio.Shorten(text, "300ms", "16m"), 0o644); err != nil {
		t.Fatal(err)
	}
	const deadline = 12 * time.Second
	hung := 0
	for try := 1; try <= 3 && hung == 0; try++ {
		start := time.Now()
		_, runErr := runRawWithin(t, short, safety.Policy{}, deadline)
		took := time.Since(start)
		if limit := deadline + execx.StopGrace + 5*time.Second; took > limit {
			t.Fatalf("try %d: the run ended after %v, over the deadline plus the stop grace (%v)", try, took.Round(time.Millisecond), limit)
		}
		if runErr != nil {
			if took < deadline {
				t.Fatalf("try %d: failed before the deadline, not a hang: %v", try, runErr)
			}
			hung++
		}
		below, err := proc.Reader{}.Descendants(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range below {
			comm, _ := os.ReadFile(fmt.Sprintf("/proc/%d/comm", p.PID))
			if strings.TrimSpace(string(comm)) == "fio" && p.State != "Z" {
				t.Fatalf("try %d: fio pid %d is still running below the test after the run ended", try, p.PID)
			}
		}
		t.Logf("try %d: ended in %v, err %v", try, took.Round(time.Millisecond), runErr)
	}
	t.Logf("%d of the tries hung in fio and were stopped on the deadline", hung)
}
