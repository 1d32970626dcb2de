package spec

import (
	"bytes"
	"embed"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/storbench/storbench/internal/inputfile"
)

//go:embed suites/*.yaml
var builtinFS embed.FS

// BuiltinNames lists the built-in suites, in the order users meet them.
var BuiltinNames = []string{"quick", "standard", "crystal", "mixed", "etcd", "ceph-osd", "pi", "sustained"}

// Builtin returns a built-in suite by name.
func Builtin(name string) (*Suite, error) {
	data, err := builtinFS.ReadFile("suites/" + name + ".yaml")
	if err != nil {
		return nil, fmt.Errorf("no built-in suite %q (built-in: %s)", name, strings.Join(BuiltinNames, ", "))
	}
	s, err := Parse(data, "built-in "+name)
	if err != nil {
		return nil, err
	}
	s.Source = "built-in"
	return s, nil
}

// BuiltinYAML returns the YAML text of a built-in suite, as written.
func BuiltinYAML(name string) ([]byte, error) {
	return builtinFS.ReadFile("suites/" + name + ".yaml")
}

// Resolve finds a suite by built-in name or by file path. A value containing
// a path separator or ending in .yaml/.yml is always read as a file.
func Resolve(nameOrPath string) (*Suite, error) {
	if !strings.ContainsRune(nameOrPath, os.PathSeparator) && !strings.HasSuffix(nameOrPath, ".yaml") && !strings.HasSuffix(nameOrPath, ".yml") {
		return Builtin(nameOrPath)
	}
	return Load(nameOrPath)
}

// Load reads and validates a suite file.
func Load(path string) (*Suite, error) {
	data, err := inputfile.Read(path)
	if err != nil {
		return nil, fmt.Errorf("reading suite: %w", err)
	}
	s, err := Parse(data, path)
	if err != nil {
		return nil, err
	}
	s.Source = path
	return s, nil
}

// Error is a problem in a suite file, located by line and field.
type Error struct {
	File  string
	Line  int
	Field string
	Msg   string
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": %s", e.Field)
	}
	fmt.Fprintf(&b, ": %s", e.Msg)
	return b.String()
}

var yamlLine = regexp.MustCompile(`line (\d+): (.*)`)

// Parse decodes and validates suite YAML; source names it in errors.
func Parse(data []byte, source string) (*Suite, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(data, &root); err != nil {
		return nil, yamlError(source, err)
	}
	if len(root.Content) == 0 {
		return nil, &Error{File: source, Msg: "empty suite file"}
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var s Suite
	if err := dec.Decode(&s); err != nil && !errors.Is(err, io.EOF) {
		return nil, yamlError(source, err)
	}
	s.applyDefaults()
	if !strings.HasPrefix(source, "built-in ") {
		for i := range s.Workloads {
			if j := s.Workloads[i].Job; j != "" && !filepath.IsAbs(j) {
				s.Workloads[i].Job = filepath.Join(filepath.Dir(source), j)
			}
		}
	}
	if err := s.validate(source, root.Content[0]); err != nil {
		return nil, err
	}
	return &s, nil
}

func yamlError(source string, err error) error {
	var te *yaml.TypeError
	if errors.As(err, &te) && len(te.Errors) > 0 {
		err = errors.New(te.Errors[0])
	}
	if m := yamlLine.FindStringSubmatch(err.Error()); m != nil {
		line, _ := strconv.Atoi(m[1])
		msg := strings.TrimPrefix(m[2], "field ")
		msg = strings.Replace(msg, " not found in type spec.Suite", " is not a suite field (fields: name, description, defaults, workloads)", 1)
		msg = strings.Replace(msg, " not found in type spec.Workload", " is not a workload option", 1)
		msg = strings.Replace(msg, " not found in type spec.Options", " is not a workload option", 1)
		return &Error{File: source, Line: line, Msg: msg}
	}
	return &Error{File: source, Msg: err.Error()}
}

var (
	validRW      = map[string]bool{"read": true, "write": true, "randread": true, "randwrite": true, "rw": true, "readwrite": true, "randrw": true, "trim": true, "randtrim": true, "trimwrite": true}
	validName    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)
	reservedKeys = map[string]string{
		"gtod_reduce":   "it drops the timing storbench reports",
		"filename":      "storbench chooses the file or device from --target",
		"directory":     "storbench chooses the file or device from --target",
		"output":        "storbench reads fio's output itself",
		"output-format": "storbench reads fio's output itself",
		"randrepeat":    "storbench always sets randrepeat=0",
	}
)

func (s *Suite) validate(source string, root *yaml.Node) error {
	fail := func(line int, field, format string, args ...any) error {
		return &Error{File: source, Line: line, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if s.Name == "" {
		return fail(root.Line, "name", "is required")
	}
	if !validName.MatchString(s.Name) {
		return fail(lineOf(root, "name"), "name", "%q may hold only letters, digits, '.', '_' and '-'", s.Name)
	}
	if len(s.Workloads) == 0 {
		return fail(lineOf(root, "workloads"), "workloads", "the suite needs at least one workload")
	}
	seen := map[string]int{}
	wnodes := child(root, "workloads")
	for i, w := range s.Workloads {
		at := workloadSite{source: source, root: root, index: i}
		if wnodes != nil && i < len(wnodes.Content) {
			at.node = wnodes.Content[i]
		}
		if w.Name == "" {
			return at.fail("name", "is required")
		}
		if !validName.MatchString(w.Name) {
			return at.fail("name", "%q may hold only letters, digits, '.', '_' and '-'", w.Name)
		}
		if prev, dup := seen[w.Name]; dup {
			return at.fail("name", "%q is already the name of workloads[%d]", w.Name, prev)
		}
		seen[w.Name] = i
		var err error
		if w.Job != "" {
			err = at.checkJob(w)
		} else {
			err = at.checkOptions(w)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// workloadSite is where a workload stands in its suite file, to name the
// file, line and field of what is wrong with it.
type workloadSite struct {
	source string
	root   *yaml.Node
	node   *yaml.Node // the workload's own; nil when the file has none
	index  int
}

// line is the line that sets field: the workload's own, else the
// defaults', else the workload's first line.
func (at workloadSite) line(field string) int {
	if l := lineOf(at.node, field); l > 0 {
		return l
	}
	if l := lineOf(child(at.root, "defaults"), field); l > 0 {
		return l
	}
	if at.node != nil {
		return at.node.Line
	}
	return 0
}

// field names a field of the workload: "workloads[2].bs".
func (at workloadSite) field(name string) string {
	return fmt.Sprintf("workloads[%d].%s", at.index, name)
}

// fail is an error in field, at the line that sets it.
func (at workloadSite) fail(field, format string, args ...any) error {
	return at.failAt(at.line(field), field, format, args...)
}

func (at workloadSite) failAt(line int, field, format string, args ...any) error {
	return &Error{File: at.source, Line: line, Field: at.field(field), Msg: fmt.Sprintf(format, args...)}
}

// checkJob checks a job workload: its job file sets every option, so the
// workload may set none, and the file must exist.
func (at workloadSite) checkJob(w Workload) error {
	for _, field := range []string{"rw", "bs", "size", "iodepth", "numjobs", "runtime", "ramp", "ioengine", "direct", "rwmixread", "fdatasync", "fsync", "sync", "end_fsync", "extra"} {
		if l := lineOf(at.node, field); l > 0 {
			return at.failAt(l, field, "a job workload runs its job file as it is: set %s in %s", field, w.Job)
		}
	}
	if fi, err := os.Stat(w.Job); err != nil || !fi.Mode().IsRegular() {
		if err == nil {
			err = errors.New("not a regular file")
		}
		return at.fail("job", "%v", err)
	}
	return nil
}

// checkOptions checks a workload's options: each in its range, and
// together consistent.
func (at workloadSite) checkOptions(w Workload) error {
	switch {
	case w.RW == "":
		return at.fail("rw", "is required (one of %s)", keys(validRW))
	case !validRW[w.RW]:
		return at.fail("rw", "%q is not a fio access pattern (one of %s)", w.RW, keys(validRW))
	case w.BlockSize <= 0:
		return at.fail("bs", "is required and must be positive (e.g. 4KiB)")
	case *w.Direct && w.BlockSize%512 != 0:
		return at.fail("bs", "%d bytes is not a multiple of 512, which direct I/O needs; set direct: false for buffered I/O", int64(w.BlockSize))
	case w.FileSize < w.BlockSize:
		return at.fail("size", "%s is smaller than the block size %s", w.FileSize, w.BlockSize)
	case *w.IODepth < 1 || *w.IODepth > 65536:
		return at.fail("iodepth", "%d is out of range (1 to 65536)", *w.IODepth)
	case *w.NumJobs < 1 || *w.NumJobs > 1024:
		return at.fail("numjobs", "%d is out of range (1 to 1024)", *w.NumJobs)
	case w.RWMixRead != nil && (*w.RWMixRead < 0 || *w.RWMixRead > 100):
		return at.fail("rwmixread", "%d is not a percentage (0 to 100)", *w.RWMixRead)
	case w.Runtime < 0 || w.Ramp < 0:
		return at.fail("runtime", "durations cannot be negative")
	case w.Ramp > 0 && w.Runtime == 0:
		return at.fail("ramp", "a ramp needs a runtime: set runtime as well, or drop ramp")
	}
	if err := w.checkMeasurement(func(field, msg string) error {
		return at.failAt(at.line(strings.Split(field, ".")[0]), field, "%s", msg)
	}); err != nil {
		return err
	}
	if w.IOEngine != "" && !validName.MatchString(w.IOEngine) {
		return at.fail("ioengine", "%q is not an engine name", w.IOEngine)
	}
	return at.checkExtra(w)
}

// checkExtra checks that extra holds only tuning options storbench passes
// through to fio.
func (at workloadSite) checkExtra(w Workload) error {
	for _, k := range sortedExtra(w.Extra) {
		line := lineOf(child(at.node, "extra"), k)
		if line == 0 {
			line = lineOf(child(child(at.root, "defaults"), "extra"), k)
		}
		if line == 0 {
			line = at.line("extra")
		}
		if why, bad := reservedKeys[k]; bad {
			return at.failAt(line, "extra."+k, "cannot be set: %s", why)
		}
		if !TuningOptions[k] {
			return at.failAt(line, "extra."+k, "is not a tuning option storbench passes through: extra takes only options that change neither what is written nor where, nor run commands (%s); for anything else write a fio job file and reference it with job:", strings.Join(tuningNames(), ", "))
		}
	}
	return nil
}

func child(n *yaml.Node, key string) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}

func lineOf(n *yaml.Node, key string) int {
	if c := child(n, key); c != nil {
		return c.Line
	}
	return 0
}

func keys(m map[string]bool) string {
	var k []string
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return strings.Join(k, ", ")
}

// TuningOptions are the fio options a suite's extra: may set. Each changes
// how I/O is issued (batching, pacing, randomness, CPU placement, queue
// tuning) but neither whether a workload writes, nor what data or where
// (files, offsets, sizes), nor runs commands, nor drops timing or result
// detail. The safety owner still judges fio's own reading of every
// generated job, so a mistake here cannot let a read become a write.
var TuningOptions = map[string]bool{
	"iodepth_batch": true, "iodepth_batch_submit": true, "iodepth_batch_complete": true,
	"iodepth_batch_complete_min": true, "iodepth_batch_complete_max": true, "iodepth_low": true,
	"io_submit_mode": true, "serialize_overlap": true,
	"norandommap": true, "random_distribution": true, "random_generator": true, "percentage_random": true,
	"file_service_type": true,
	"bssplit":           true, "bsrange": true, "blockalign": true,
	"rate": true, "rate_min": true, "rate_iops": true, "rate_iops_min": true, "rate_process": true,
	"rate_cycle": true, "rate_ignore_thinktime": true,
	"thinktime": true, "thinktime_spin": true, "thinktime_blocks": true, "thinktime_blocks_type": true, "thinktime_iotime": true,
	"startdelay": true, "io_size": true, "loops": true,
	"latency_target": true, "latency_window": true, "latency_percentile": true, "latency_run": true, "max_latency": true,
	"steadystate": true, "steadystate_duration": true, "steadystate_ramp_time": true,
	"cpus_allowed": true, "cpus_allowed_policy": true, "cpumask": true, "numa_cpu_nodes": true, "numa_mem_policy": true,
	"nice": true, "prio": true, "prioclass": true, "cmdprio_percentage": true, "cmdprio_class": true, "cmdprio": true,
	"hipri": true, "fixedbufs": true, "registerfiles": true, "sqthread_poll": true, "sqthread_poll_cpu": true,
	"nonvectored": true, "userspace_reap": true,
	"fadvise_hint": true, "invalidate": true, "sync_file_range": true, "clocksource": true,
}

func tuningNames() []string {
	n := make([]string, 0, len(TuningOptions))
	for k := range TuningOptions {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

func sortedExtra(m map[string]string) []string {
	k := make([]string, 0, len(m))
	for s := range m {
		k = append(k, s)
	}
	sort.Strings(k)
	return k
}
