package safety

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/storbench/storbench/internal/fio"
)

// PathKind is what a path is where fio runs.
type PathKind int

// Kinds of path.
const (
	PathMissing PathKind = iota
	PathRegular
	PathDir
	PathBlock
	PathChar
	PathOther
	// PathEngine is an engine target's image or file (safety/engine.go),
	// reached through fio's engine, not a path where fio runs.
	PathEngine
)

func (k PathKind) String() string {
	return [...]string{"missing", "regular file", "directory", "block device", "character device", "special file", "engine target"}[k]
}

// Stat tells what a path is where fio runs, following symbolic links as
// fio's open does.
type Stat func(ctx context.Context, path string) (PathKind, error)

// LocalStat is Stat on this host.
func LocalStat(_ context.Context, path string) (PathKind, error) {
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return PathMissing, nil
	case err != nil:
		return PathOther, err
	}
	m := fi.Mode()
	switch {
	case m.IsRegular():
		return PathRegular, nil
	case m.IsDir():
		return PathDir, nil
	case m&os.ModeDevice != 0 && m&os.ModeCharDevice == 0:
		return PathBlock, nil
	case m&os.ModeCharDevice != 0:
		return PathChar, nil
	}
	return PathOther, nil
}

// FioJob is one job as fio will run it: its name and every option fio
// applies to it ([global] included), by fio's canonical option name, the
// last value given winning. Build it from fio's own reading of the job
// (fio --showcmd), never from a second parser's.
type FioJob struct {
	Name    string
	Options map[string]string
}

// JobCheck judges fio jobs before they run.
//
// The rules: storbench writes only what it created. Every file a job
// touches (directory joined with each relative or absolute filename, colon
// lists, filename_format, opendir, fio's logs) must lie in WorkDir, the new,
// empty directory storbench made for the run, or be one of Owned; a block
// device elsewhere may be read, and written only when Policy.CheckWrite
// allows it; any other path outside WorkDir is refused, read or written,
// since fio creates and extends files it reads. Options that run commands,
// replay I/O from a file, reach over the network or change system settings
// are refused outright, as is any I/O engine not known to do plain local
// I/O.
type JobCheck struct {
	Policy Policy
	// Facts reads block devices where fio runs; nil refuses every write to
	// a block device outside Owned.
	Facts Facts
	Stat  Stat
	// WorkDir is absolute and free of symbolic links: fio's working
	// directory, where relative files land.
	WorkDir string
	// Owned are absolute paths outside WorkDir that storbench prepared for
	// this run and already judged (a runner's own block volume), and
	// engine targets this run created (rbd:POOL/IMAGE, gluster:VOLUME or
	// gluster:VOLUME/DIR: everything below it).
	Owned []string
	// Engines reads whether an engine target is in use; nil checks only
	// that it was created by the run or named with --destructive.
	Engines EngineFacts
}

// Touch is a path a job uses.
type Touch struct {
	Job    string
	Path   string
	Kind   PathKind
	Writes bool
	// Own says the path is storbench's: in the work directory or Owned.
	Own bool
	// Engine, for an engine target (Kind PathEngine), is its name as
	// --destructive gives it (rbd:POOL/IMAGE, gluster:VOLUME); Path is
	// then the image or the file in the volume.
	Engine string
}

// JobVerdict is what the jobs will do, once allowed.
type JobVerdict struct {
	Touches []Touch
	// Writers are the jobs that write.
	Writers []string
}

// JobRefusal is a job refused for one of its options.
type JobRefusal struct {
	Job    string
	Option string
	Value  string
	Msg    string
}

func (e *JobRefusal) Error() string {
	opt := e.Option
	if e.Value != "" {
		opt += "=" + e.Value
	}
	return fmt.Sprintf("refusing fio job %s: %s: %s", e.Job, opt, e.Msg)
}

// refusedOptions run commands, replay or write outside storbench's control,
// or change the system; none is needed to measure storage.
var refusedOptions = map[string]string{
	"exec_prerun":         "runs a command",
	"exec_postrun":        "runs a command",
	"read_iolog":          "replays I/O from a log, to offsets and files storbench cannot judge beforehand",
	"replay_redirect":     "redirects replayed I/O to another device",
	"merge_blktrace_file": "writes a merged trace file",
	"ioscheduler":         "changes the device's I/O scheduler for the whole system",
	"cgroup":              "creates control groups on the host",
	"cgroup_nodelete":     "leaves control groups on the host",
}

// localEngines do plain local file or block I/O (or none).
var localEngines = map[string]bool{
	"sync": true, "psync": true, "vsync": true, "pvsync": true, "pvsync2": true,
	"libaio": true, "io_uring": true, "posixaio": true, "mmap": true, "splice": true,
	"null": true, "cpuio": true, "falloc": true, "ftruncate": true,
	"filecreate": true, "filestat": true, "filedelete": true,
	"dircreate": true, "dirstat": true, "dirdelete": true,
}

// writingEngines change files whatever rw says.
var writingEngines = map[string]bool{
	"falloc": true, "ftruncate": true, "filecreate": true, "filedelete": true, "dircreate": true, "dirdelete": true,
}

// logOptions name files fio writes: a path, or a prefix of one.
var logOptions = []string{"write_iolog", "write_bw_log", "write_lat_log", "write_iops_log", "write_hist_log"}

// Writes reports whether a job changes data: any rw but read and randread
// (trim, trimwrite and verify-writes included), an engine that creates,
// deletes or resizes, or files created or unlinked.
func Writes(opts map[string]string) bool {
	rw := strings.TrimSpace(opts["rw"])
	if v, ok := opts["readwrite"]; ok {
		rw = strings.TrimSpace(v)
	}
	if i := strings.IndexByte(rw, ':'); i >= 0 {
		rw = rw[:i]
	}
	switch rw {
	case "", "read", "randread":
	default:
		return true
	}
	if writingEngines[strings.TrimSpace(opts["ioengine"])] {
		return true
	}
	for _, k := range []string{"create_only", "unlink", "unlink_each_loop", "trim_percentage"} {
		if v, ok := opts[k]; ok && isTrue(v) {
			return true
		}
	}
	return false
}

func isTrue(v string) bool {
	v = strings.TrimSpace(v)
	return v == "" || (v != "0" && v != "false" && v != "no" && v != "off")
}

// Judge decides whether the jobs may run. It returns the verdict, or a
// *JobRefusal or *Refusal saying why not.
func (c JobCheck) Judge(ctx context.Context, jobs []FioJob) (*JobVerdict, error) {
	if !filepath.IsAbs(c.WorkDir) {
		return nil, fmt.Errorf("judging fio jobs: work directory %q is not absolute", c.WorkDir)
	}
	v := &JobVerdict{}
	devWriters := map[string][]string{}
	var devices []string
	var reach engineReach
	for _, j := range jobs {
		touches, err := c.judgeJob(ctx, j)
		if err != nil {
			return nil, err
		}
		writes := Writes(j.Options)
		if writes {
			v.Writers = append(v.Writers, j.Name)
		}
		for _, t := range touches {
			t.Writes = writes
			v.Touches = append(v.Touches, t)
			if t.Own {
				continue
			}
			switch {
			case t.Kind == PathEngine:
				reach.add(t, engineSchemes[strings.TrimSpace(j.Options["ioengine"])])
			case t.Kind == PathBlock && writes:
				if _, seen := devWriters[t.Path]; !seen {
					devices = append(devices, t.Path)
				}
				devWriters[t.Path] = appendOnce(devWriters[t.Path], j.Name)
			case t.Kind == PathBlock:
			default:
				return nil, &JobRefusal{Job: j.Name, Option: "filename", Value: t.Path, Msg: outsideMsg(t)}
			}
		}
	}
	if err := c.judgeEngineWrites(ctx, reach); err != nil {
		return nil, err
	}
	for _, dev := range devices {
		if c.Facts == nil {
			return nil, &Refusal{Device: dev, Writers: devWriters[dev], Rule: RuleUnknown,
				Msg: fmt.Sprintf("jobs %s write to %s, whose contents storbench cannot read where fio runs", strings.Join(devWriters[dev], ", "), dev)}
		}
		if err := c.Policy.CheckWrite(ctx, c.Facts, dev, devWriters[dev]); err != nil {
			return nil, err
		}
	}
	return v, nil
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

func outsideMsg(t Touch) string {
	switch t.Kind {
	case PathMissing:
		return fmt.Sprintf("fio would create %s, outside storbench's work directory: storbench writes only where it created its own directory (use a relative file name)", t.Path)
	case PathChar:
		return fmt.Sprintf("%s is a character device, which storbench cannot prove safe", t.Path)
	}
	return fmt.Sprintf("%s is a %s storbench did not create, outside its work directory: fio may create, extend or overwrite it", t.Path, t.Kind)
}

// Screen refuses a job for its options alone: options that run commands,
// replay or change the system, and engines that are not plain local I/O.
// Callers may screen a job file's own reading before fio reads it, so fio
// never loads an engine from a path of the job's choosing; Judge screens
// fio's reading again.
func Screen(j FioJob) error {
	o := j.Options
	refuse := func(opt, msg string) error {
		return &JobRefusal{Job: j.Name, Option: opt, Value: o[opt], Msg: msg}
	}
	keys := make([]string, 0, len(o))
	for k := range o {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if why, bad := refusedOptions[k]; bad {
			return refuse(k, why+"; storbench refuses it")
		}
		if strings.HasPrefix(k, "replay_") {
			return refuse(k, "belongs to I/O replay, which storbench refuses")
		}
	}
	engine := strings.TrimSpace(o["ioengine"])
	if engine == "" {
		engine = "psync"
	}
	if !localEngines[engine] && engineSchemes[engine] == "" {
		return refuse("ioengine", "storbench runs only engines that do plain local I/O ("+strings.Join(sortedKeys(localEngines), ", ")+
			") and those reaching an RBD image or a Gluster volume it judges by name (rbd, gfapi, gfapi_async); this one runs commands, reaches elsewhere or drives hardware directly")
	}
	for _, k := range []string{"mem", "iomem"} {
		if strings.Contains(o[k], ":") {
			return refuse(k, "maps a file of its own choosing")
		}
	}
	return nil
}

func (c JobCheck) judgeJob(ctx context.Context, j FioJob) ([]Touch, error) {
	o := j.Options
	refuse := func(opt, msg string) error {
		return &JobRefusal{Job: j.Name, Option: opt, Value: o[opt], Msg: msg}
	}
	if err := Screen(j); err != nil {
		return nil, err
	}
	var touches []Touch
	if scheme := engineSchemes[strings.TrimSpace(o["ioengine"])]; scheme != "" {
		ets, err := engineTouches(j, scheme)
		if err != nil {
			return nil, err
		}
		for _, et := range ets {
			own := false
			for _, owned := range c.Owned {
				own = own || IsEngineTarget(owned) && ownsEngine(owned, et.Path)
			}
			touches = append(touches, Touch{Job: j.Name, Path: et.Path, Kind: PathEngine, Engine: et.Target, Own: own})
		}
		return touches, c.judgeLogs(ctx, j)
	}
	add := func(opt, path string) error {
		t, err := c.classify(ctx, j.Name, path)
		if err != nil {
			return err
		}
		touches = append(touches, t)
		return nil
	}
	dirs := []string{""}
	if d, ok := o["directory"]; ok && d != "" {
		dirs = fio.SplitList(d)
	}
	join := func(dir, name string) string {
		if dir == "" {
			return name
		}
		// fio prepends the directory to every name, absolute ones too.
		return dir + "/" + name
	}
	if names, ok := o["filename"]; ok && names != "" {
		for _, n := range fio.SplitList(names) {
			if n == "-" {
				return nil, refuse("filename", "\"-\" is fio's standard input or output")
			}
			for _, d := range dirs {
				if err := add("filename", join(d, n)); err != nil {
					return nil, err
				}
			}
		}
	} else {
		format, ok := o["filename_format"]
		opt := "filename_format"
		if !ok || format == "" {
			format, opt = "$jobname.$jobnum.$filenum", "name"
		}
		name := strings.ReplaceAll(format, "$jobname", jobName(j))
		if strings.Contains(name, "/") {
			return nil, refuse(opt, "file names made from it hold a path separator; storbench refuses them")
		}
		// The first clone's first file stands for all: they differ in
		// numbers only, never in directory.
		name = strings.NewReplacer("$jobnum", "0", "$filenum", "0", "$clientuid", "0").Replace(name)
		for _, d := range dirs {
			if err := add(opt, join(d, name)); err != nil {
				return nil, err
			}
		}
	}
	if d, ok := o["opendir"]; ok {
		t, err := c.classify(ctx, j.Name, d)
		if err != nil {
			return nil, err
		}
		if !t.Own {
			return nil, refuse("opendir", "adds every file under a directory storbench did not create")
		}
		touches = append(touches, t)
	}
	return touches, c.judgeLogs(ctx, j)
}

// judgeLogs refuses a job whose logs fio would write outside the work
// directory.
func (c JobCheck) judgeLogs(ctx context.Context, j FioJob) error {
	for _, k := range logOptions {
		v, ok := j.Options[k]
		if !ok || v == "" {
			continue
		}
		t, err := c.classify(ctx, j.Name, v)
		if err != nil {
			return err
		}
		if !t.Own {
			return &JobRefusal{Job: j.Name, Option: k, Value: v, Msg: "fio would write its log outside storbench's work directory"}
		}
	}
	return nil
}

func jobName(j FioJob) string {
	if n, ok := j.Options["name"]; ok && n != "" {
		return n
	}
	return j.Name
}

// classify resolves path as fio's open would from WorkDir and says what it is.
func (c JobCheck) classify(ctx context.Context, job, path string) (Touch, error) {
	p := path
	if !filepath.IsAbs(p) {
		p = filepath.Join(c.WorkDir, p)
	}
	p = filepath.Clean(p)
	t := Touch{Job: job, Path: p}
	wd := filepath.Clean(c.WorkDir)
	if p == wd || strings.HasPrefix(p, wd+"/") {
		t.Own = true
		return t, nil
	}
	for _, o := range c.Owned {
		if filepath.Clean(o) == p {
			t.Own = true
			t.Kind = PathBlock
			return t, nil
		}
	}
	kind, err := c.Stat(ctx, p)
	if err != nil {
		return t, &JobRefusal{Job: job, Option: "filename", Value: path, Msg: "cannot tell what it is: " + err.Error()}
	}
	t.Kind = kind
	return t, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
