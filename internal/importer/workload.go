package importer

import (
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/spec"
)

// Method is how a figure was measured, in fio's terms, as far as the input
// tells. It decides which canonical workload an imported result belongs to.
type Method struct {
	// RW is fio's rw: read, write, randread, randwrite, rw, randrw, trim, randtrim.
	RW        string
	BlockSize int64
	IODepth   int // 0 means 1
	NumJobs   int // 0 means 1
	RWMixRead int // mixed workloads only; 0 means 50
	// Direct is nil when the input does not say (fio's text output).
	Direct    *bool
	Sync      bool // O_SYNC writes
	Fdatasync int
	Fsync     int
	EndFsync  bool
}

// Workload returns the canonical workload name for m and whether it is one
// of the built-in suites' workloads. A method equivalent to a built-in
// workload (same access pattern, block size, queue depth, jobs, direct and
// sync settings; file size and runtime do not change what is measured)
// gets that workload's name; any other gets a descriptive name of its own,
// in the same style: rand-read-4k-qd16, seq-write-128k-qd1-buffered.
func Workload(m Method) (string, bool) {
	m = m.normalized()
	for _, b := range builtinMethods() {
		if b.method.matches(m) {
			return b.name, true
		}
	}
	return m.name(), false
}

func (m Method) normalized() Method {
	switch m.RW {
	case "readwrite":
		m.RW = "rw"
	case "randreadwrite":
		m.RW = "randrw"
	}
	if m.IODepth <= 0 {
		m.IODepth = 1
	}
	if m.NumJobs <= 0 {
		m.NumJobs = 1
	}
	if m.mixed() && m.RWMixRead <= 0 {
		m.RWMixRead = 50
	}
	if !m.mixed() {
		m.RWMixRead = 0
	}
	return m
}

func (m Method) mixed() bool { return m.RW == "rw" || m.RW == "randrw" }

// matches compares a built-in method (b) with an imported one; an unknown
// Direct in the imported method matches either.
func (b Method) matches(m Method) bool {
	if b.RW != m.RW || b.BlockSize != m.BlockSize || b.IODepth != m.IODepth || b.NumJobs != m.NumJobs || b.RWMixRead != m.RWMixRead {
		return false
	}
	if b.Sync != m.Sync || b.Fdatasync != m.Fdatasync || b.Fsync != m.Fsync || b.EndFsync != m.EndFsync {
		return false
	}
	return m.Direct == nil || b.Direct == nil || *b.Direct == *m.Direct
}

func (m Method) name() string {
	var b strings.Builder
	switch m.RW {
	case "read", "write", "trim":
		b.WriteString("seq-" + m.RW)
	case "randread", "randwrite", "randtrim":
		b.WriteString("rand-" + strings.TrimPrefix(m.RW, "rand"))
	case "rw":
		b.WriteString("seq-rw")
	case "randrw":
		b.WriteString("rand-rw")
	default:
		b.WriteString(sanitize(m.RW))
	}
	if m.BlockSize > 0 {
		b.WriteString("-" + sizeName(m.BlockSize))
	}
	if m.mixed() {
		fmt.Fprintf(&b, "-%d", m.RWMixRead)
	}
	fmt.Fprintf(&b, "-qd%d", m.IODepth)
	if m.NumJobs > 1 {
		fmt.Fprintf(&b, "-%dj", m.NumJobs)
	}
	if m.Sync {
		b.WriteString("-sync")
	}
	if m.Fdatasync > 0 {
		b.WriteString("-fdatasync")
	}
	if m.Fsync > 0 {
		b.WriteString("-fsync")
	}
	if m.EndFsync {
		b.WriteString("-endfsync")
	}
	if m.Direct != nil && !*m.Direct {
		b.WriteString("-buffered")
	}
	return b.String()
}

// Describe says in words what the method is, for result.Result.Method.
func (m Method) Describe() string {
	m = m.normalized()
	var parts []string
	parts = append(parts, "rw="+m.RW)
	if m.mixed() {
		parts = append(parts, fmt.Sprintf("rwmixread=%d", m.RWMixRead))
	}
	if m.BlockSize > 0 {
		parts = append(parts, "bs="+sizeName(m.BlockSize))
	}
	parts = append(parts, fmt.Sprintf("iodepth=%d", m.IODepth))
	if m.NumJobs > 1 {
		parts = append(parts, fmt.Sprintf("numjobs=%d", m.NumJobs))
	}
	switch {
	case m.Direct == nil:
		parts = append(parts, "direct=unknown")
	case *m.Direct:
		parts = append(parts, "direct=1")
	default:
		parts = append(parts, "direct=0")
	}
	if m.Sync {
		parts = append(parts, "sync=1")
	}
	if m.Fdatasync > 0 {
		parts = append(parts, fmt.Sprintf("fdatasync=%d", m.Fdatasync))
	}
	if m.Fsync > 0 {
		parts = append(parts, fmt.Sprintf("fsync=%d", m.Fsync))
	}
	if m.EndFsync {
		parts = append(parts, "end_fsync=1")
	}
	return strings.Join(parts, " ")
}

// sizeName writes a block size the way workload names do: 4k, 1m, 2300.
func sizeName(b int64) string {
	switch {
	case b >= 1<<30 && b%(1<<30) == 0:
		return strconv.FormatInt(b>>30, 10) + "g"
	case b >= 1<<20 && b%(1<<20) == 0:
		return strconv.FormatInt(b>>20, 10) + "m"
	case b >= 1<<10 && b%(1<<10) == 0:
		return strconv.FormatInt(b>>10, 10) + "k"
	}
	return strconv.FormatInt(b, 10)
}

type namedMethod struct {
	name   string
	method Method
}

var builtinOnce = sync.OnceValue(func() []namedMethod {
	var out []namedMethod
	seen := map[string]bool{}
	for _, suite := range spec.BuiltinNames {
		s, err := spec.Builtin(suite)
		if err != nil {
			continue // the built-in suites are tested elsewhere
		}
		for _, w := range s.Workloads {
			if seen[w.Name] {
				continue
			}
			seen[w.Name] = true
			out = append(out, namedMethod{w.Name, methodOf(w.Options)})
		}
	}
	return out
})

func builtinMethods() []namedMethod { return builtinOnce() }

func methodOf(o spec.Options) Method {
	m := Method{RW: o.RW, BlockSize: int64(o.BlockSize), Direct: o.Direct}
	if o.IODepth != nil {
		m.IODepth = *o.IODepth
	}
	if o.NumJobs != nil {
		m.NumJobs = *o.NumJobs
	}
	if o.RWMixRead != nil {
		m.RWMixRead = *o.RWMixRead
	}
	if o.Sync != nil {
		m.Sync = *o.Sync
	}
	if o.Fdatasync != nil {
		m.Fdatasync = *o.Fdatasync
	}
	if o.Fsync != nil {
		m.Fsync = *o.Fsync
	}
	if o.EndFsync != nil {
		m.EndFsync = *o.EndFsync
	}
	return m.normalized()
}

// BuiltinWorkload reports whether name is a workload of a built-in suite,
// and its method.
func BuiltinWorkload(name string) (Method, bool) {
	for _, b := range builtinMethods() {
		if b.name == name {
			return b.method, true
		}
	}
	return Method{}, false
}

func sanitize(s string) string {
	s = strings.ToLower(strings.TrimSpace(s))
	var b strings.Builder
	dash := false
	for _, r := range s {
		ok := r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_'
		if ok {
			b.WriteRune(r)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}
