package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/safety"
	"github.com/storbench/storbench/internal/units"
)

// RawJob is a fio job file given by the user, read as fio reads it
// (includes spliced in, ${VAR} expanded).
type RawJob struct {
	Path string
	File *fio.JobFile
}

// JobFileName is the job file storbench writes for fio in its work
// directory on the target.
const JobFileName = "storbench-job.fio"

// Judged is a job file ready to run on one prepared target: the file fio
// runs, fio's reading of it and the safety verdict.
type Judged struct {
	File    *fio.JobFile
	Text    []byte
	Reading *fio.Reading
	Verdict *safety.JobVerdict
	// WorkDir is where fio runs and relative files land.
	WorkDir string
}

// JudgeOptions say where a job file is judged.
type JudgeOptions struct {
	Policy safety.Policy
	// File is the target's test file or device, given to jobs that leave
	// filename or size to their runner.
	File fio.File
	// Device says the target is a block device.
	Device bool
	// Local says fio runs on this host: paths and devices are read here.
	Local bool
	// Owned are paths the runner prepared for this run (its block volume)
	// and engine targets it created (Prepared.Owned).
	Owned []string
	// Engines reads whether an engine target a job writes is in use
	// (Prepared.EngineFacts); nil checks names only.
	Engines safety.EngineFacts
	// Facts reads block devices where fio runs when that is not here (an
	// SSH host); nil, and not Local, refuses every write to a device not
	// Owned.
	Facts safety.Facts
	// Name is the job file's name in the work directory; JobFileName when
	// empty.
	Name string
	// KeepGoing leaves an engine fio lacks to fail its own workload when the
	// job runs (a suite's generated file: the other workloads still run)
	// instead of refusing the whole file.
	KeepGoing bool
}

// Judge writes jf, completed for the target, into work (which must exist)
// through fr, asks fio how it reads it (refusing what fio refuses, and
// engines fio lacks), and asks the safety owner whether it may run.
func Judge(ctx context.Context, fr fio.Runner, jf *fio.JobFile, work string, o JudgeOptions) (*Judged, error) {
	jf = jf.Clone()
	stat := remoteStat(fr.Cmder)
	if o.Local {
		stat = safety.LocalStat
	}
	jf.Relocate(func(p string) bool {
		k, err := stat(ctx, p)
		return err != nil || k == safety.PathBlock || k == safety.PathChar
	})
	jf.FillRunnerDefaults(o.File, o.Device)
	eng := engines{fr: fr, jf: jf, keepGoing: o.KeepGoing, has: map[string]bool{}}
	// The file's own reading is screened before fio reads it: an engine
	// fio lacks is refused in fio's words, and fio never parses a job that
	// loads an engine from a path (fio loads it while parsing).
	for i, sec := range jf.Sections {
		if sec.Global {
			continue
		}
		m := jf.Resolved(i)
		missing, err := eng.check(ctx, sec.Name, m["ioengine"])
		if err != nil {
			return nil, err
		}
		if missing {
			continue
		}
		if err := safety.Screen(safety.FioJob{Name: sec.Name, Options: m}); err != nil {
			return nil, locate(jf, err)
		}
	}
	text := jf.Render()
	fr.Dir = work
	name := o.Name
	if name == "" {
		name = JobFileName
	}
	if err := fr.WriteFile(ctx, name, text); err != nil {
		return nil, err
	}
	rd, err := fr.Read(ctx, jf, name)
	if err != nil {
		return nil, err
	}
	real, err := realDir(ctx, fr, work, o.Local)
	if err != nil {
		return nil, err
	}
	check := safety.JobCheck{Policy: o.Policy, WorkDir: real, Owned: o.Owned, Stat: stat, Engines: o.Engines}
	check.Facts = o.Facts
	if o.Local {
		check.Facts = safety.LocalFacts{}
	}
	var jobs []safety.FioJob
	for _, j := range rd.Jobs {
		e, _ := j.Value("ioengine")
		missing, err := eng.check(ctx, j.Section, e)
		if err != nil {
			return nil, err
		}
		if missing {
			continue
		}
		jobs = append(jobs, safety.FioJob{Name: j.Section, Options: j.Values()})
	}
	v, err := check.Judge(ctx, jobs)
	if err != nil {
		return nil, locate(jf, err)
	}
	return &Judged{File: jf, Text: text, Reading: rd, Verdict: v, WorkDir: real}, nil
}

// engines asks fio (--enghelp) which engines it has, once each.
type engines struct {
	fr        fio.Runner
	jf        *fio.JobFile
	keepGoing bool
	has       map[string]bool
}

// check reports whether the job's engine is missing here and may be left
// to fail its own workload (keepGoing: a suite's generated file; a job that
// cannot start touches nothing); otherwise a missing engine is refused in
// fio's words at the line that names it. External engines are never asked
// about: the safety owner refuses them.
func (e *engines) check(ctx context.Context, job, engine string) (missing bool, err error) {
	engine = strings.TrimSpace(engine)
	if engine == "" {
		engine = "psync"
	}
	if strings.HasPrefix(engine, "external") || strings.ContainsRune(engine, '/') {
		return false, nil
	}
	has, known := e.has[engine]
	if !known {
		if has, err = e.fr.HasEngine(ctx, engine); err != nil {
			return false, err
		}
		e.has[engine] = has
	}
	switch {
	case has:
		return false, nil
	case e.keepGoing:
		return true, nil
	}
	pos, _ := e.jf.Where(job, "ioengine")
	return false, &fio.ParseError{Pos: pos, Message: fmt.Sprintf("fio here has no I/O engine %q (fio --enghelp lists those it has)", engine)}
}

// locate adds the file and line of the refused option to a refusal.
func locate(jf *fio.JobFile, err error) error {
	var jr *safety.JobRefusal
	if errors.As(err, &jr) {
		key := jr.Option
		if key == "name" {
			key = "filename"
		}
		if p, ok := jf.Where(jr.Job, key); ok {
			return fmt.Errorf("%s: %w", p, err)
		}
		for _, s := range jf.Sections {
			if s.Name == jr.Job {
				return fmt.Errorf("%s: %w", s.Pos, err)
			}
		}
	}
	var rf *safety.Refusal
	if errors.As(err, &rf) {
		for _, w := range rf.Writers {
			if p, ok := jf.Where(w, "filename"); ok {
				return fmt.Errorf("%s: %w", p, err)
			}
		}
	}
	return err
}

// realDir resolves symbolic links in the work directory, so a relative
// "../" in a job is judged where the kernel will take it.
func realDir(ctx context.Context, fr fio.Runner, dir string, local bool) (string, error) {
	if local {
		r, err := filepath.EvalSymlinks(dir)
		if err != nil {
			return "", fmt.Errorf("work directory: %w", err)
		}
		return r, nil
	}
	out, err := execx.Output(fr.Cmder.Command(ctx, "sh", "-c", `cd "$1" && pwd -P`, "sh", dir))
	if err != nil {
		return "", fmt.Errorf("work directory %s: %w", dir, err)
	}
	return strings.TrimSpace(string(out)), nil
}

// remoteStat asks stat(1) where fio runs what a path is.
func remoteStat(c execx.Cmder) safety.Stat {
	return func(ctx context.Context, path string) (safety.PathKind, error) {
		out, err := execx.Output(c.Command(ctx, "sh", "-c", `if [ -e "$1" ]; then stat -L -c %F -- "$1"; else echo missing; fi`, "sh", path))
		if err != nil {
			return safety.PathOther, err
		}
		switch s := strings.TrimSpace(string(out)); {
		case s == "missing":
			return safety.PathMissing, nil
		case strings.HasPrefix(s, "regular"):
			return safety.PathRegular, nil
		case s == "directory":
			return safety.PathDir, nil
		case s == "block special file":
			return safety.PathBlock, nil
		case s == "character special file":
			return safety.PathChar, nil
		}
		return safety.PathOther, nil
	}
}

// workDir gives fio a directory of storbench's own on the target: the
// runner's (a directory target's new work directory), else a new one made
// for the run and removed by the returned cleanup: in the system's
// temporary directory on this host (a device target: nothing lands in the
// caller's working directory), or in a remote runner's own working
// directory (a Kubernetes pod's work volume).
func workDir(ctx context.Context, p *runner.Prepared) (string, func(context.Context) error, error) {
	if p.Dir != "" {
		return p.Dir, func(context.Context) error { return nil }, nil
	}
	var dir string
	if p.Local {
		d, err := os.MkdirTemp("", "storbench-job.")
		if err != nil {
			return "", nil, fmt.Errorf("target %s: creating a work directory: %w", p.Name, err)
		}
		dir = d
	} else {
		// Where fio runs there may be no mktemp (a minimal fio image has sh,
		// mkdir and rm): storbench names the directory itself, and mkdir
		// without -p fails rather than reuse one that exists.
		var b [6]byte
		if _, err := rand.Read(b[:]); err != nil {
			return "", nil, err
		}
		mk := p.Cmder.Command(ctx, "sh", "-c", `mkdir -m 700 -- "$PWD/$1" && echo "$PWD/$1"`, "sh", "storbench-job."+hex.EncodeToString(b[:]))
		out, err := execx.Output(mk)
		if err != nil {
			return "", nil, fmt.Errorf("target %s: creating a work directory: %w", p.Name, err)
		}
		dir = strings.TrimSpace(string(out))
		if !filepath.IsAbs(dir) {
			return "", nil, fmt.Errorf("target %s: the work directory %q is not absolute", p.Name, dir)
		}
	}
	return dir, func(ctx context.Context) error {
		if err := p.Cmder.Command(ctx, "rm", "-rf", "--", dir).Run(); err != nil {
			return fmt.Errorf("removing %s: %w", dir, err)
		}
		return nil
	}, nil
}

// judgeOn judges, on a prepared target, every job file the plan runs: a
// raw job's, a suite's job workloads', and the suite's generated one where
// a suite could reach data storbench did not create (targets on this host;
// a runner's own volume elsewhere is storbench's). It returns the runner to
// use (working in the judged work directory) and the cleanup of what it
// made, nil when there was nothing to judge.
func (e *Engine) judgeOn(ctx context.Context, plan Plan, p *runner.Prepared, fr fio.Runner, ioEngine string) (fio.Runner, func(context.Context) error, error) {
	files := jobFilesFor(plan, p, ioEngine)
	if len(files) == 0 {
		return fr, nil, nil
	}
	work, cleanup, err := workDir(ctx, p)
	if err != nil {
		return fr, nil, err
	}
	o := TargetJudgeOptions(plan.Policy, p)
	if o.File.Size == 0 {
		// The runner sized its volume for the plan: jobs that leave size to
		// their runner get the plan's.
		o.File.Size = e.need(plan, "").FileSize
	}
	var holds []*safety.Hold
	var remoteHolds []func() error
	removeWork := cleanup
	cleanup = func(ctx context.Context) error {
		var errs []error
		for _, h := range holds {
			errs = append(errs, h.Release())
		}
		for _, release := range remoteHolds {
			errs = append(errs, release())
		}
		return errors.Join(append(errs, removeWork(ctx))...)
	}
	for _, f := range files {
		var jf *fio.JobFile
		if jf, err = f.read(); err != nil {
			break
		}
		o.Name, o.KeepGoing = f.name, f.generated
		var j *Judged
		if j, err = Judge(ctx, fr, jf, work, o); err != nil {
			break
		}
		if p.Local {
			// The last guard, as for a device target: the devices a job
			// writes are held open exclusively until the run is over.
			var hs []*safety.Hold
			hs, err = claimWritten(ctx, plan.Policy, j.Verdict, heldByTarget(p))
			holds = append(holds, hs...)
			if err != nil {
				break
			}
		} else if p.Devices != nil && p.Devices.Hold != nil {
			// The same guard on the host fio runs on.
			var rs []func() error
			rs, err = holdRemoteWritten(ctx, p.Devices, j.Verdict)
			remoteHolds = append(remoteHolds, rs...)
			if err != nil {
				break
			}
		}
	}
	if err == nil {
		fr.Dir = work
		return fr, cleanup, nil
	}
	if cerr := cleanup(context.WithoutCancel(ctx)); cerr != nil {
		err = errors.Join(err, cerr)
	}
	return fr, nil, err
}

// TargetJudgeOptions are the options a job file is judged with on a
// prepared target. Where the runner reads the devices of fio's host
// (p.Devices), every device a job writes there, the target's own included,
// is judged from that host's facts as fio itself reads the job: the
// runner's early check read only storbench's reading of the file. Where it
// cannot, only the volume the runner made (a Kubernetes block volume) may
// be written.
func TargetJudgeOptions(policy safety.Policy, p *runner.Prepared) JudgeOptions {
	o := JudgeOptions{Policy: policy, File: p.File, Device: p.Device || filepath.IsAbs(p.File.Name), Local: p.Local}
	switch {
	case p.Local:
	case p.Devices != nil:
		o.Policy, o.Facts = p.Devices.Policy, p.Devices.Facts
	case filepath.IsAbs(p.File.Name):
		o.Owned = []string{p.File.Name}
	}
	o.Owned = append(o.Owned, p.Owned...)
	o.Engines = p.EngineFacts
	return o
}

type namedJobFile struct {
	name string
	read func() (*fio.JobFile, error)
	// generated marks a suite's generated file, whose workloads fail one by
	// one.
	generated bool
}

// jobFilesFor lists the job files a plan runs on a prepared target, by
// their names in the work directory.
func jobFilesFor(plan Plan, p *runner.Prepared, ioEngine string) []namedJobFile {
	if plan.RawJob != nil {
		return []namedJobFile{{JobFileName, func() (*fio.JobFile, error) { return plan.RawJob.File, nil }, false}}
	}
	var out []namedJobFile
	gen := fio.FromSuite(plan.Suite, p.File, ioEngine)
	// An engine target is judged wherever fio runs: the image or volume it
	// names is reached from anywhere.
	if (p.Local || p.File.Engine != nil) && len(gen.Sections) > 0 {
		out = append(out, namedJobFile{SuiteJobFileName, func() (*fio.JobFile, error) {
			return fio.ParseJobText([]byte(gen.String()), "suite "+plan.Suite.Name, fio.ReadOptions{Getenv: func(string) (string, bool) { return "", false }})
		}, true})
	}
	for i, w := range plan.Suite.Workloads {
		if w.Job != "" {
			out = append(out, namedJobFile{jobWorkloadFile(i), func() (*fio.JobFile, error) { return fio.ReadJobFile(w.Job, fio.ReadOptions{}) }, false})
		}
	}
	return out
}

// jobWorkloadFile names the job file of a suite's i-th workload (a job
// workload) in the work directory.
func jobWorkloadFile(i int) string { return fmt.Sprintf("storbench-job-%d.fio", i+1) }

// SuiteJobFileName is the file a suite's generated job is judged from.
const SuiteJobFileName = "storbench-suite.fio"

var ownJobFile = regexp.MustCompile(`^storbench-(job|job-[0-9]+|suite)\.fio$`)

// IsJobFile reports whether name is a job file the engine writes into a
// work directory (a raw job's, a suite's, a job workload's).
func IsJobFile(name string) bool { return ownJobFile.MatchString(name) }

// RawNeeds reads from a user's job file, with [global] applied as the file
// says, the largest size it uses, which jobs write, and whether any uses
// direct I/O, for the free-space and early device checks. The safety owner
// judges fio's own reading once the target is prepared.
func RawNeeds(jf *fio.JobFile) (size int64, writers []string, direct bool) {
	for i, s := range jf.Sections {
		if s.Global {
			continue
		}
		m := jf.Resolved(i)
		if v, ok := m["size"]; ok {
			// fio's units, not storbench's: with fio's default kb_base
			// size=1GB is 2^30 bytes and size=1GiB 10^9.
			kbBase, _ := strconv.ParseInt(strings.TrimSpace(m["kb_base"]), 10, 64)
			if sz, err := units.ParseFioSize(v, kbBase); err == nil && sz > size {
				size = sz
			}
		}
		if safety.Writes(m) {
			writers = append(writers, s.Name)
		}
		if v, ok := m["direct"]; ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil && b {
				direct = true
			}
		}
	}
	if size == 0 {
		size = 1 << 30
	}
	return size, writers, direct
}

// reportNames names each of fio's job reports as fio prints it; a name fio
// reports more than once (numjobs clones without group_reporting, or two
// sections of one name) is told apart by its place: "name", "name#2",
// "name#3", in fio's order.
func reportNames(jobs []fio.JobResult) []string {
	seen := map[string]int{}
	out := make([]string, len(jobs))
	for i, j := range jobs {
		seen[j.Name]++
		if n := seen[j.Name]; n > 1 {
			out[i] = fmt.Sprintf("%s#%d", j.Name, n)
		} else {
			out[i] = j.Name
		}
	}
	return out
}

// ranWith says what a job report ran with: the job file, fio's group, and
// the options fio reports for it (global, then the job's own).
func ranWith(path string, global map[string]string, j fio.JobResult) string {
	m := map[string]string{}
	for k, v := range global {
		m[k] = v
	}
	for k, v := range j.Options {
		m[k] = v
	}
	rd := fio.JobReading{}
	for k, v := range m {
		rd.Options = append(rd.Options, fio.Option{Key: k, Value: v})
	}
	return fmt.Sprintf("fio job file %s, group %d: %s", path, j.GroupID, rd.String())
}

// heldByTarget is the device a prepared device target already holds
// exclusively for the run (resolved), or "".
func heldByTarget(p *runner.Prepared) string {
	if !p.Device {
		return ""
	}
	return resolved(p.File.Name)
}

func resolved(path string) string {
	if r, err := filepath.EvalSymlinks(path); err == nil {
		return r
	}
	return path
}

// claimWritten claims, on this host, every block device outside storbench's
// own files that the judged jobs write, except the one the target already
// holds.
func claimWritten(ctx context.Context, policy safety.Policy, v *safety.JobVerdict, held string) ([]*safety.Hold, error) {
	devices, writers := writtenDevices(v, held)
	var holds []*safety.Hold
	for _, dev := range devices {
		h, err := policy.Claim(ctx, safety.LocalFacts{}, dev, writers[dev])
		if err != nil {
			return holds, err
		}
		holds = append(holds, h)
	}
	return holds, nil
}

// writtenDevices are the block devices the judged jobs write, in order,
// with the jobs that write each, leaving out the one already held.
func writtenDevices(v *safety.JobVerdict, held string) ([]string, map[string][]string) {
	writers := map[string][]string{}
	var devices []string
	if v == nil {
		return nil, writers
	}
	for _, t := range v.Touches {
		if t.Kind != safety.PathBlock || !t.Writes || t.Own || (held != "" && resolved(t.Path) == held) {
			continue
		}
		if _, seen := writers[t.Path]; !seen {
			devices = append(devices, t.Path)
		}
		writers[t.Path] = append(writers[t.Path], t.Job)
	}
	return devices, writers
}

// holdRemoteWritten holds, on the host fio runs on, every device the
// judged jobs write, as claimWritten does here; it returns the releases.
func holdRemoteWritten(ctx context.Context, d *runner.RemoteDevices, v *safety.JobVerdict) ([]func() error, error) {
	devices, writers := writtenDevices(v, "")
	var releases []func() error
	for _, dev := range devices {
		release, err := d.Hold(ctx, dev, writers[dev])
		if err != nil {
			return releases, err
		}
		releases = append(releases, release)
	}
	return releases, nil
}
