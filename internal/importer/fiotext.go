package importer

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

var (
	reTextPreamble = regexp.MustCompile(`^(\S.*?): \(g=\d+\): rw=(\w+), bs=\(R\) ([\d.]+[KMGT]?i?B)-\S+, \(W\) ([\d.]+[KMGT]?i?B)-\S+.*?, ioengine=([\w.-]+), iodepth=(\d+)`)
	reTextVersion  = regexp.MustCompile(`^fio-(\d\S*)\s*$`)
	reTextJob      = regexp.MustCompile(`^(\S.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(-?\d+)(?:: pid=\d+)?(?:: (.+))?$`)
	reTextDir      = regexp.MustCompile(`^\s+(read|write|trim)\s*: IOPS=([\d.]+[kMG]?), BW=([\d.]+)([KMGT]?i?B/s) \(([\d.]+)([kKMGT]?B/s)\)\(([\d.]+)([KMGT]?i?B)/(\d+)msec\)`)
	reTextDirV2    = regexp.MustCompile(`^\s+(read|write|trim)\s*: io=\s*([\d.]+)([KMGT]?B), bw=\s*([\d.]+)([KMGT]?B)/s, iops=\s*([\d.]+), runt=\s*(\d+)msec`)
	reTextDirAny   = regexp.MustCompile(`^\s+(read|write|trim)\s*: (IOPS|io)=`)
	reTextLat      = regexp.MustCompile(`^\s+(slat|clat|lat|sync) \((nsec|usec|msec)\): min=\s*([\d.]+[kMG]?), max=\s*([\d.]+[kMG]?), avg=\s*([\d.]+), stdev=\s*([\d.]+)`)
	reTextPctHead  = regexp.MustCompile(`^\s+(slat|clat|lat|sync) percentiles \((nsec|usec|msec)\):`)
	reTextPct      = regexp.MustCompile(`([\d.]+)th=\[\s*(\d+)\]`)
	reTextCPU      = regexp.MustCompile(`^\s+cpu\s*: usr=([\d.]+)%, sys=([\d.]+)%`)
	reTextIssued   = regexp.MustCompile(`issued rwts: total=(\d+),(\d+),(\d+)(?:,(\d+))?`)
)

var latUnit = map[string]time.Duration{"nsec": time.Nanosecond, "usec": time.Microsecond, "msec": time.Millisecond}

// textJob is one job block of fio's normal output.
type textJob struct {
	name    string
	group   int
	jobs    int
	line    int
	err     int
	when    time.Time
	r       result.Result
	units   map[string]string
	sawDirs bool
}

// parseFioText reads fio's normal (human) output: the per-job blocks with
// IOPS/BW lines, slat/clat/lat lines and percentile tables, whatever the
// units of each (nsec, usec, msec; k and M suffixes). "Run status group"
// and "Disk stats" sections are recognised and skipped.
func parseFioText(data []byte) (*parsed, error) {
	p := &parsed{tool: "fio"}
	methods := map[string]Method{}
	var jobs []*textJob
	var cur *textJob
	var dir *result.Direction
	var lat *result.Latency
	var pctUnit time.Duration
	inSync := false
	ls := lines(data)
	for i, line := range ls {
		n := i + 1
		if m := reTextPreamble.FindStringSubmatch(line); m != nil {
			bs, _ := sizeWithUnit(m[3])
			if m[2] == "write" || m[2] == "randwrite" {
				bs, _ = sizeWithUnit(m[4])
			}
			meth := Method{RW: m[2], BlockSize: bs, IODepth: atoi(m[6])}
			switch m[5] {
			case "sync", "psync", "vsync", "pvsync", "pvsync2":
				meth.IODepth = 1
			}
			methods[m[1]] = meth
			continue
		}
		if m := reTextVersion.FindStringSubmatch(line); m != nil && p.version == "" {
			p.version = "fio-" + m[1]
			continue
		}
		if m := reTextJob.FindStringSubmatch(line); m != nil {
			cur = &textJob{name: m[1], group: atoi(m[2]), jobs: atoi(m[3]), err: atoi(m[4]), line: n, units: map[string]string{}}
			if t, err := time.Parse("Mon Jan _2 15:04:05 2006", strings.TrimSpace(m[5])); err == nil {
				cur.when = t
			}
			jobs = append(jobs, cur)
			dir, lat, pctUnit, inSync = nil, nil, 0, false
			continue
		}
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "Run status group") || strings.HasPrefix(trimmed, "Disk stats") {
			cur, dir, lat = nil, nil, nil
			continue
		}
		if cur == nil {
			continue
		}
		if pctUnit != 0 {
			if strings.HasPrefix(trimmed, "|") {
				ms := reTextPct.FindAllStringSubmatch(trimmed, -1)
				if ms == nil {
					return nil, errAt(n, 0, "expected percentile entries such as \"99.00th=[ 1234]\", found %q", trimmed)
				}
				for _, m := range ms {
					pv, err1 := strconv.ParseFloat(m[1], 64)
					v, err2 := strconv.ParseInt(m[2], 10, 64)
					if err1 != nil || err2 != nil {
						return nil, errAt(n, 0, "expected a percentile and a value, found %q", m[0])
					}
					lat.Percentiles = append(lat.Percentiles, result.Percentile{P: pv, Value: time.Duration(v) * pctUnit})
				}
				continue
			}
			result.SortPercentiles(lat.Percentiles)
			pctUnit = 0
		}
		switch {
		case reTextDir.MatchString(line):
			m := reTextDir.FindStringSubmatch(line)
			d, err := textDirection(n, m)
			if err != nil {
				return nil, err
			}
			dir = setDir(&cur.r, m[1], d)
			cur.units[m[1]+"_bw"] = m[4]
			cur.sawDirs, inSync = true, false
		case reTextDirV2.MatchString(line):
			m := reTextDirV2.FindStringSubmatch(line)
			d, err := textDirectionV2(n, m)
			if err != nil {
				return nil, err
			}
			dir = setDir(&cur.r, m[1], d)
			cur.units[m[1]+"_bw"] = m[5] + "/s"
			cur.sawDirs, inSync = true, false
		case reTextDirAny.MatchString(line):
			return nil, errAt(n, 0, "expected a direction line such as \"read: IOPS=9989, BW=39.0MiB/s (40.9MB/s)(2341MiB/60002msec)\", found %q", trimmed)
		case trimmed == "fsync/fdatasync/sync_file_range:":
			inSync = true
		case reTextLat.MatchString(line):
			m := reTextLat.FindStringSubmatch(line)
			target, err := textLatTarget(n, &cur.r, dir, m[1], inSync)
			if err != nil {
				return nil, err
			}
			unit := latUnit[m[2]]
			vals := make([]float64, 4)
			for k := range vals {
				v, ok := suffixed(m[3+k])
				if !ok {
					return nil, errAt(n, 0, "expected a number for %s %s, found %q", m[1], []string{"min", "max", "avg", "stdev"}[k], m[3+k])
				}
				vals[k] = v
			}
			target.Min, target.Max = time.Duration(vals[0]*float64(unit)), time.Duration(vals[1]*float64(unit))
			target.Mean, target.StdDev = time.Duration(vals[2]*float64(unit)), time.Duration(vals[3]*float64(unit))
		case reTextPctHead.MatchString(line):
			m := reTextPctHead.FindStringSubmatch(line)
			target, err := textLatTarget(n, &cur.r, dir, m[1], inSync)
			if err != nil {
				return nil, err
			}
			target.Percentiles = nil
			lat, pctUnit = target, latUnit[m[2]]
		case reTextCPU.MatchString(line):
			m := reTextCPU.FindStringSubmatch(line)
			cur.r.CPU.UserPercent, _ = strconv.ParseFloat(m[1], 64)
			cur.r.CPU.SystemPercent, _ = strconv.ParseFloat(m[2], 64)
		case reTextIssued.MatchString(line):
			m := reTextIssued.FindStringSubmatch(line)
			for k, d := range []*result.Direction{cur.r.Read, cur.r.Write, cur.r.Trim} {
				if d != nil {
					d.TotalIOs, _ = strconv.ParseInt(m[1+k], 10, 64)
				}
			}
			if cur.r.Sync != nil && m[4] != "" {
				cur.r.Sync.Samples, _ = strconv.ParseInt(m[4], 10, 64)
			}
		}
	}
	if lat != nil && pctUnit != 0 {
		result.SortPercentiles(lat.Percentiles)
	}
	if len(jobs) == 0 {
		return nil, errAt(1, 0, "expected a fio job block starting with a line such as \"NAME: (groupid=0, jobs=1): err= 0: pid=123\", found none")
	}
	// Jobs of one name and group reported separately ran in parallel
	// (numjobs without group_reporting): merge them into one result.
	type key struct {
		name  string
		group int
	}
	order := []key{}
	merged := map[key]*textJob{}
	counts := map[key]int{}
	for _, j := range jobs {
		if !j.sawDirs && j.err == 0 {
			return nil, errAt(j.line, 0, "expected read:, write: or trim: lines after the job header of %q, found none", j.name)
		}
		k := key{j.name, j.group}
		counts[k] += j.jobs
		if m, ok := merged[k]; ok {
			mergeParallel(&m.r, j.r)
			continue
		}
		merged[k] = j
		order = append(order, k)
	}
	for _, k := range order {
		j := merged[k]
		r := j.r
		for _, d := range r.Directions() {
			if d.TotalIOs == 0 && d.IOPS > 0 && d.Runtime > 0 {
				d.TotalIOs = int64(d.IOPS*d.Runtime.Seconds() + 0.5)
			}
		}
		if j.err != 0 {
			r.Status, r.Error = result.StatusFailed, fmt.Sprintf("fio job %s: error %d", j.name, j.err)
		}
		meth, known := methods[j.name]
		meth.NumJobs = counts[k]
		syncNote := ""
		if r.Sync != nil && meth.Fdatasync == 0 && meth.Fsync == 0 {
			// The text output shows sync latency but not whether it was
			// fsync or fdatasync, nor how often: etcd's check (fdatasync
			// after every write) is by far the common case.
			meth.Fdatasync = 1
			syncNote = "; sync after each write assumed from the sync latency section (fsync or fdatasync not shown)"
		}
		if known {
			r.Workload, _ = Workload(meth)
			r.Method = fmt.Sprintf("%s text output, job %q: %s (direct I/O not shown in fio's text output%s)", orDefault(p.version, "fio"), j.name, meth.Describe(), syncNote)
		} else {
			r.Workload = sanitize(j.name)
			if r.Workload == "" {
				r.Workload = "fio-job"
			}
			r.Method = fmt.Sprintf("%s text output, job %q, %d job(s); rw, bs and iodepth not in the output (the job's description line was not included)", orDefault(p.version, "fio"), j.name, meth.NumJobs)
		}
		r.DisplayUnits = textDisplayUnits(j.units)
		if !j.when.IsZero() {
			r.Finished = j.when
			var longest time.Duration
			for _, d := range r.Directions() {
				longest = max(longest, d.Runtime)
			}
			r.Started = r.Finished.Add(-longest)
		}
		p.results = append(p.results, r)
		p.rows++
	}
	return p, nil
}

// textDisplayUnits keeps the unit fio chose for bandwidth (the first
// direction's) and notes latencies in µs, fio's usual unit.
func textDisplayUnits(u map[string]string) map[string]string {
	for _, d := range []string{"read", "write", "trim"} {
		if v, ok := u[d+"_bw"]; ok {
			return map[string]string{result.MetricBW: v}
		}
	}
	return nil
}

func setDir(r *result.Result, name string, d *result.Direction) *result.Direction {
	switch name {
	case "read":
		r.Read = d
	case "write":
		r.Write = d
	default:
		r.Trim = d
	}
	return d
}

func textLatTarget(n int, r *result.Result, dir *result.Direction, kind string, inSync bool) (*result.Latency, error) {
	if kind == "sync" || inSync {
		if r.Sync == nil {
			r.Sync = &result.Latency{}
		}
		return r.Sync, nil
	}
	if dir == nil {
		return nil, errAt(n, 0, "expected a read:, write: or trim: line before the %s latency line", kind)
	}
	switch kind {
	case "slat":
		return &dir.Submission, nil
	case "clat":
		return &dir.Completion, nil
	}
	return &dir.Total, nil
}

func textDirection(n int, m []string) (*result.Direction, error) {
	iops, ok1 := suffixed(m[2])
	bw, err2 := strconv.ParseFloat(m[3], 64)
	f, ok3 := units.ThroughputFactor(m[4])
	io, ok4 := byteSize(m[7], m[8])
	ms, err5 := strconv.ParseInt(m[9], 10, 64)
	if !ok1 || err2 != nil || !ok3 || !ok4 || err5 != nil {
		return nil, errAt(n, 0, "expected IOPS, BW, I/O size and runtime figures, found %q", strings.TrimSpace(m[0]))
	}
	return &result.Direction{IOPS: iops, BytesPerSec: bw * f, Bytes: io, Runtime: time.Duration(ms) * time.Millisecond}, nil
}

// textDirectionV2 reads fio 2.x's "read : io=1024.0MB, bw=17476KB/s,
// iops=4369, runt= 60001msec" (KB means KiB there).
func textDirectionV2(n int, m []string) (*result.Direction, error) {
	io, ok1 := byteSize(m[2], strings.Replace(m[3], "B", "iB", 1))
	bw, ok2 := byteSize(m[4], strings.Replace(m[5], "B", "iB", 1))
	if m[3] == "B" {
		io, ok1 = byteSize(m[2], "B")
	}
	if m[5] == "B" {
		bw, ok2 = byteSize(m[4], "B")
	}
	iops, err3 := strconv.ParseFloat(m[6], 64)
	ms, err4 := strconv.ParseInt(m[7], 10, 64)
	if !ok1 || !ok2 || err3 != nil || err4 != nil {
		return nil, errAt(n, 0, "expected io=, bw=, iops= and runt= figures, found %q", strings.TrimSpace(m[0]))
	}
	return &result.Direction{IOPS: iops, BytesPerSec: float64(bw), Bytes: io, Runtime: time.Duration(ms) * time.Millisecond}, nil
}

// suffixed reads fio's abbreviated numbers: 9989, 10.0k, 1.2M (powers of 1000).
func suffixed(s string) (float64, bool) {
	mult := 1.0
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1e3, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1e6, strings.TrimSuffix(s, "M")
	case strings.HasSuffix(s, "G"):
		mult, s = 1e9, strings.TrimSuffix(s, "G")
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 {
		return 0, false
	}
	return v * mult, true
}

var byteUnits = map[string]float64{
	"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
}

func byteSize(num, unit string) (int64, bool) {
	v, err := strconv.ParseFloat(num, 64)
	f, ok := byteUnits[unit]
	if err != nil || !ok || v < 0 {
		return 0, false
	}
	return int64(v*f + 0.5), true
}

// sizeWithUnit reads "4096B", "1024KiB", "1MiB".
func sizeWithUnit(s string) (int64, bool) {
	i := strings.IndexFunc(s, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	if i < 0 {
		return byteSize(s, "B")
	}
	return byteSize(s[:i], s[i:])
}
