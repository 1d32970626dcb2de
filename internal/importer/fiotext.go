package importer

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/units"
)

var (
	// A job's description line: 3.x "NAME: (g=0): rw=randrw, bs=(R) 4096B-4096B, (W) 4096B-4096B, (T) ..., ioengine=libaio, iodepth=32",
	// 2.x "NAME: (g=0): rw=randread, bs=4K-4K/4K-4K/4K-4K, ioengine=libaio, iodepth=16".
	reTextPreamble = regexp.MustCompile(`^(\S.*?): \(g=(\d+)\): rw=(\w+), bs=(.*?), ioengine=([\w.-]+), iodepth=(\d+)`)
	reTextVersion  = regexp.MustCompile(`^fio-(\d\S*)\s*$`)
	reTextJob      = regexp.MustCompile(`^(\S.*?): \(groupid=(\d+), jobs=(\d+)\): err=\s*(-?\d+)(?:: pid=\d+)?(?:: (.+))?$`)
	reTextDir      = regexp.MustCompile(`^\s+(read|write|trim)\s*: IOPS=([\d.]+[kKMG]?), BW=([\d.]+)([kKMGT]?i?B/s) \(([\d.]+)([kKMGT]?B/s)\)\(([\d.]+)([kKMGTP]?i?B)/(\d+)msec\)`)
	reTextDirV2    = regexp.MustCompile(`^\s+(read|write|trim)\s*: io=\s*([\d.]+)([kKMGTP]?B), bw=\s*([\d.]+)([kKMGT]?B)/s, iops=\s*([\d.]+[kKMG]?), runt=\s*(\d+)msec`)
	reTextDirAny   = regexp.MustCompile(`^\s+(read|write|trim)\s*: (IOPS|io)=`)
	reTextLat      = regexp.MustCompile(`^\s+(slat|clat|lat|sync) \((nsec|usec|msec)\): min=\s*([\d.]+[kKMG]?), max=\s*([\d.]+[kKMG]?), avg=\s*([\d.]+[kKMG]?), stdev=\s*([\d.]+[kKMG]?)\s*$`)
	reTextPctHead  = regexp.MustCompile(`^\s+(slat|clat|lat|sync) percentiles \((nsec|usec|msec)\):`)
	reTextPct      = regexp.MustCompile(`([\d.]+)th=\[\s*(\d+)\]`)
	reTextCPU      = regexp.MustCompile(`^\s+cpu\s*: usr=([\d.]+)%, sys=([\d.]+)%`)
	reTextIssued   = regexp.MustCompile(`issued rwts?: total=(\d+),(\d+),(\d+)(?:,(\d+))?`)
	reTextIssuedV2 = regexp.MustCompile(`issued\s*: total=r=(\d+)/w=(\d+)/d=(\d+)`)
	reMarkdownHead = regexp.MustCompile(`^#{1,6}\s+(\S.*?)\s*#*\s*$`)
)

var latUnit = map[string]time.Duration{"nsec": time.Nanosecond, "usec": time.Microsecond, "msec": time.Millisecond}

// textJob is one job block of fio's normal output.
type textJob struct {
	name    string
	group   int
	jobs    int
	run     int
	line    int
	err     int
	when    time.Time
	r       result.Result
	units   map[string]string
	sawDirs bool
	section string                // the Markdown heading the block is under, in notes
	broken  *result.ImportProblem // the block could not be read
	// decimalBW is the bandwidth fio printed in decimal units beside the
	// binary one ("BW=39.0MiB/s (40.9MB/s)"), per direction.
	decimalBW map[string]float64
	issued    bool // the I/O counts come from "issued", not derived
}

// parseFioText reads fio's normal (human) output: the per-job blocks with
// IOPS/BW lines, slat/clat/lat lines and percentile tables, whatever the
// units of each (nsec, usec, msec; k, K, M, G suffixes). "Run status
// group" and "Disk stats" sections are recognised and skipped.
//
// Every run is a result of its own: a run starts with description lines
// or fio's version line after job blocks, so a log of five repeats of one
// test gives five repetitions and a notes file of different tests gives
// each its own workload. Only jobs of one name in one group of one run
// (numjobs without group_reporting) are merged as parallel jobs. A job
// block that cannot be read is skipped and reported; the others are kept.
func parseFioText(data []byte) (*parsed, error) {
	t := &textParser{p: &parsed{tool: "fio"}, methods: map[textRunKey]Method{}, multi: map[int]bool{}}
	for i, line := range lines(data) {
		t.readLine(i+1, line)
	}
	if t.lat != nil && t.pctUnit != 0 {
		result.SortPercentiles(t.lat.Percentiles)
	}
	if len(t.jobs) == 0 {
		return nil, errAt(1, 0, "expected a fio job block starting with a line such as \"NAME: (groupid=0, jobs=1): err= 0: pid=123\", found none")
	}
	groups, firstErr := t.mergeParallelJobs()
	if len(groups) == 0 {
		return nil, firstErr
	}
	if last := groups[len(groups)-1].job; t.multi[last.run] && last.jobs == 1 {
		t.p.tailParallel = true // jobs reported one by one: more may follow
	}
	for _, g := range groups {
		t.addResult(g)
	}
	return t.p, nil
}

// textRunKey names a job of one run, for its description line.
type textRunKey struct {
	run  int
	name string
}

// textParser reads fio's text output one line at a time; its fields are
// where the reading stands: the run, the job block, the direction and the
// percentile table being read.
type textParser struct {
	p       *parsed
	methods map[textRunKey]Method // from the description lines
	multi   map[int]bool          // runs whose description said numjobs > 1 ("...")
	jobs    []*textJob
	cur     *textJob          // the job block being read
	dir     *result.Direction // the direction being read
	lat     *result.Latency   // the latency whose percentile table is being read
	pctUnit time.Duration     // the table's unit; 0 outside a table
	inSync  bool              // inside the fsync/fdatasync section
	run     int
	// jobsInRun counts the job blocks of the current run.
	jobsInRun int
	// afterSummary: a "Run status group" section ended the run's jobs.
	afterSummary bool
	section      string // the Markdown heading of notes
}

// newRun starts the next run, unless the current one has no jobs yet.
func (t *textParser) newRun() {
	if t.jobsInRun > 0 {
		t.run++
		t.jobsInRun = 0
	}
	t.afterSummary = false
}

// readLine reads the lines that frame job blocks (headings, description
// and version lines, job headers, summaries) and hands the others to the
// job block being read.
func (t *textParser) readLine(n int, line string) {
	if m := reMarkdownHead.FindStringSubmatch(line); m != nil && t.cur == nil {
		// Notes put each machine's output under a heading: results of
		// different sections are different results, not repeats.
		t.section = m[1]
		return
	}
	if m := reTextPreamble.FindStringSubmatch(line); m != nil {
		t.newRun()
		meth := Method{RW: m[3], BlockSize: descBlockSize(m[4], m[3]), IODepth: atoi(m[6])}
		switch m[5] {
		case "sync", "psync", "vsync", "pvsync", "pvsync2":
			meth.IODepth = 1
		}
		t.methods[textRunKey{t.run, m[1]}] = meth
		t.cur = nil
		return
	}
	if strings.TrimSpace(line) == "..." && t.cur == nil {
		t.multi[t.run] = true
		return
	}
	if m := reTextVersion.FindStringSubmatch(line); m != nil {
		t.newRun()
		if t.p.version == "" {
			t.p.version = "fio-" + m[1]
		}
		t.cur = nil
		return
	}
	if m := reTextJob.FindStringSubmatch(line); m != nil {
		t.startJob(n, m)
		return
	}
	trimmed := strings.TrimSpace(line)
	if strings.HasPrefix(trimmed, "Run status group") || strings.HasPrefix(trimmed, "Disk stats") {
		t.cur, t.dir, t.lat = nil, nil, nil
		t.afterSummary = t.afterSummary || t.jobsInRun > 0
		return
	}
	if t.cur == nil || t.cur.broken != nil {
		return
	}
	if t.pctUnit != 0 {
		if strings.HasPrefix(trimmed, "|") {
			t.percentileRow(trimmed)
			return
		}
		result.SortPercentiles(t.lat.Percentiles)
		t.pctUnit = 0
	}
	t.jobLine(n, line, trimmed)
}

// startJob opens a job block at its header line m.
func (t *textParser) startJob(n int, m []string) {
	if t.afterSummary {
		t.newRun() // runs pasted without their description lines
	}
	t.cur = &textJob{name: m[1], group: atoi(m[2]), jobs: atoi(m[3]), err: atoi(m[4]), line: n, run: t.run, units: map[string]string{}, section: t.section}
	if when, err := time.Parse("Mon Jan _2 15:04:05 2006", strings.TrimSpace(m[5])); err == nil {
		t.cur.when = when
	}
	t.jobs = append(t.jobs, t.cur)
	t.jobsInRun++
	t.dir, t.lat, t.pctUnit, t.inSync = nil, nil, 0, false
}

// percentileRow reads a row of a percentile table: "|  1.00th=[  143], ...".
func (t *textParser) percentileRow(trimmed string) {
	for _, m := range reTextPct.FindAllStringSubmatch(trimmed, -1) {
		pv, err1 := strconv.ParseFloat(m[1], 64)
		v, err2 := strconv.ParseInt(m[2], 10, 64)
		if err1 != nil || err2 != nil || pv <= 0 || pv > 100 {
			continue
		}
		t.lat.Percentiles = append(t.lat.Percentiles, result.Percentile{P: pv, Value: time.Duration(v) * t.pctUnit})
	}
}

// fail marks the job block being read as unreadable, with why.
func (t *textParser) fail(e *ParseError) {
	t.cur.broken = &result.ImportProblem{Line: e.Line, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("fio job block %q (line %d) not read: %s", t.cur.name, t.cur.line, e.Msg)}
}

// jobLine reads a line inside a job block: a direction, a latency, the
// head of a percentile table, CPU, or the issued I/O counts.
func (t *textParser) jobLine(n int, line, trimmed string) {
	switch {
	case reTextDir.MatchString(line):
		t.direction(n, reTextDir.FindStringSubmatch(line))
	case reTextDirV2.MatchString(line):
		t.directionV2(n, reTextDirV2.FindStringSubmatch(line))
	case reTextDirAny.MatchString(line):
		t.fail(errAt(n, 0, "expected a direction line such as \"read: IOPS=9989, BW=39.0MiB/s (40.9MB/s)(2341MiB/60002msec)\", found %q", trimmed))
	case trimmed == "fsync/fdatasync/sync_file_range:":
		t.inSync = true
	case reTextLat.MatchString(line):
		t.latency(n, reTextLat.FindStringSubmatch(line), trimmed)
	case reTextPctHead.MatchString(line):
		m := reTextPctHead.FindStringSubmatch(line)
		target, err := textLatTarget(n, &t.cur.r, t.dir, m[1], t.inSync)
		if err != nil {
			t.fail(err)
			return
		}
		target.Percentiles = nil
		t.lat, t.pctUnit = target, latUnit[m[2]]
	case reTextCPU.MatchString(line):
		m := reTextCPU.FindStringSubmatch(line)
		t.cur.r.CPU.UserPercent, _ = strconv.ParseFloat(m[1], 64)
		t.cur.r.CPU.SystemPercent, _ = strconv.ParseFloat(m[2], 64)
	case reTextIssued.MatchString(line) || reTextIssuedV2.MatchString(line):
		t.issued(line)
	}
}

// direction reads a fio 3 direction line: "read: IOPS=..., BW=...".
func (t *textParser) direction(n int, m []string) {
	d, err := textDirection(n, m)
	if err != nil {
		t.fail(err)
		return
	}
	if v, err := strconv.ParseFloat(m[5], 64); err == nil {
		if f, ok := unitFactor(strings.TrimSuffix(m[6], "/s"), false); ok {
			if t.cur.decimalBW == nil {
				t.cur.decimalBW = map[string]float64{}
			}
			t.cur.decimalBW[m[1]] = v * f
		}
	}
	t.dir = setDir(&t.cur.r, m[1], d)
	t.cur.units[m[1]+"_bw"] = m[4]
	t.cur.sawDirs, t.inSync = true, false
}

// directionV2 reads a fio 2 direction line: "read : io=..., bw=...".
func (t *textParser) directionV2(n int, m []string) {
	d, err := textDirectionV2(n, m)
	if err != nil {
		t.fail(err)
		return
	}
	t.dir = setDir(&t.cur.r, m[1], d)
	t.cur.units[m[1]+"_bw"] = strings.ToUpper(m[5][:len(m[5])-1]) + "iB/s"
	if m[5] == "B" {
		t.cur.units[m[1]+"_bw"] = "B/s"
	}
	t.cur.sawDirs, t.inSync = true, false
}

// latency reads a slat/clat/lat line: "clat (usec): min=..., max=...,
// avg=..., stdev=...".
func (t *textParser) latency(n int, m []string, trimmed string) {
	target, err := textLatTarget(n, &t.cur.r, t.dir, m[1], t.inSync)
	if err != nil {
		t.fail(err)
		return
	}
	unit := latUnit[m[2]]
	vals := make([]float64, 4)
	ok := true
	for k := range vals {
		v, good := suffixed(m[3+k])
		ok = ok && good
		vals[k] = v
	}
	if !ok {
		t.fail(errAt(n, 0, "expected four numbers for %s latency, found %q", m[1], trimmed))
		return
	}
	target.Min, target.Max = time.Duration(vals[0]*float64(unit)), time.Duration(vals[1]*float64(unit))
	target.Mean, target.StdDev = time.Duration(vals[2]*float64(unit)), time.Duration(vals[3]*float64(unit))
}

// issued reads the I/O counts: "issued rwts: total=...".
func (t *textParser) issued(line string) {
	m := reTextIssued.FindStringSubmatch(line)
	if m == nil {
		m = append(reTextIssuedV2.FindStringSubmatch(line), "")
	}
	for k, d := range []*result.Direction{t.cur.r.Read, t.cur.r.Write, t.cur.r.Trim} {
		if d != nil {
			d.TotalIOs, _ = strconv.ParseInt(m[1+k], 10, 64)
		}
	}
	t.cur.issued = true
	if t.cur.r.Sync != nil && m[4] != "" {
		t.cur.r.Sync.Samples, _ = strconv.ParseInt(m[4], 10, 64)
	}
}

// textGroup is the job blocks of one name and group in one run: one
// block, or several merged (numjobs without group_reporting).
type textGroup struct {
	run  int
	job  *textJob // the first block, with the others merged into it
	jobs int      // how many jobs ran in parallel
}

// mergeParallelJobs reports the blocks that could not be read and merges
// the jobs of one name and group of one run, reported separately, into
// one: they ran in parallel. It returns the groups in the order of the
// output, and the first block's error when none could be read.
func (t *textParser) mergeParallelJobs() ([]*textGroup, *ParseError) {
	type key struct {
		run   int
		name  string
		group int
	}
	var order []*textGroup
	merged := map[key]*textGroup{}
	var firstErr *ParseError
	for _, j := range t.jobs {
		if j.broken == nil && !j.sawDirs && j.err == 0 {
			j.broken = &result.ImportProblem{Line: j.line, Kind: result.ProblemSkipped, Msg: fmt.Sprintf("expected read:, write: or trim: lines after the job header of %q, found none", j.name)}
		}
		if j.broken != nil {
			t.p.problems = append(t.p.problems, *j.broken)
			if firstErr == nil {
				firstErr = errAt(j.broken.Line, 0, "%s", j.broken.Msg)
			}
			continue
		}
		t.p.notes = append(t.p.notes, j.fixRounding()...)
		k := key{j.run, j.name, j.group}
		if g, ok := merged[k]; ok {
			g.jobs += j.jobs
			mergeParallel(&g.job.r, j.r)
			continue
		}
		merged[k] = &textGroup{run: j.run, job: j, jobs: j.jobs}
		order = append(order, merged[k])
	}
	return order, firstErr
}

// addResult completes a group's result (I/O counts, workload, method,
// labels, times) and adds it.
func (t *textParser) addResult(g *textGroup) {
	j := g.job
	r := j.r
	for _, d := range r.Directions() {
		if d.TotalIOs == 0 && d.IOPS > 0 && d.Runtime > 0 {
			d.TotalIOs = int64(d.IOPS*d.Runtime.Seconds() + 0.5)
		}
	}
	if j.err != 0 {
		r.Status, r.Error = result.StatusFailed, fmt.Sprintf("fio job %s: error %d", j.name, j.err)
	}
	meth, known := t.methods[textRunKey{g.run, j.name}]
	meth.NumJobs = g.jobs
	r.Workload, r.Method, meth = t.workloadAndMethod(j, r.Sync != nil, meth, known)
	r.DisplayUnits = textDisplayUnits(j.units)
	// Different jobs are different tests even when their methods are
	// alike (the same test on two mounts); runs of one job are repeats.
	r.Labels = map[string]string{string(result.LabelJob): j.name}
	if t.p.version != "" {
		result.LabelFioVersion.Set(r.Labels, t.p.version)
	}
	if j.section != "" {
		result.LabelSection.Set(r.Labels, j.section)
	}
	if !j.when.IsZero() {
		r.Finished = j.when
		var longest time.Duration
		for _, d := range r.Directions() {
			longest = max(longest, d.Runtime)
		}
		r.Started = r.Finished.Add(-longest)
	}
	// Text figures are rounded to 3 significant digits; the I/O count
	// derived above is exact only when "issued" was printed.
	for _, why := range consistency(&r, meth.BlockSize) {
		t.p.problems = append(t.p.problems, result.ImportProblem{Line: j.line, Kind: result.ProblemInconsistent, Msg: fmt.Sprintf("fio job %q: %s", j.name, why)})
	}
	t.p.add(r, j.line)
	t.p.rows++
}

// workloadAndMethod names a job's workload and describes its method, from
// its description line when the output has one (known), else from its
// name.
func (t *textParser) workloadAndMethod(j *textJob, synced bool, meth Method, known bool) (string, string, Method) {
	version := orDefault(t.p.version, "fio")
	if !known {
		workload := sanitize(j.name)
		if workload == "" {
			workload = "fio-job"
		}
		return workload, fmt.Sprintf("%s text output, job %q, %d job(s); rw, bs and iodepth not in the output (the job's description line was not included)", version, j.name, meth.NumJobs), meth
	}
	syncNote := ""
	if synced && meth.Fdatasync == 0 && meth.Fsync == 0 {
		// The text output shows sync latency but not whether it was
		// fsync or fdatasync, nor how often: etcd's check (fdatasync
		// after every write) is by far the common case.
		meth.Fdatasync = 1
		syncNote = "; sync after each write assumed from the sync latency section (fsync or fdatasync not shown)"
	}
	workload, _ := Workload(meth)
	return workload, fmt.Sprintf("%s text output, job %q: %s (direct I/O not shown in fio's text output%s)", version, j.name, meth.Describe(), syncNote), meth
}

// fixRounding corrects figures that fio 3.0 and 3.1 printed wrongly: their
// number formatting dropped the fraction's carry, so "BW=11.0MiB/s
// (12.6MB/s)" and "IOPS=18.0k" appear for 12.0 MiB/s and 18.9k. When the
// binary and decimal bandwidths disagree by more than rounding, the
// decimal one is kept; when the printed IOPS disagrees with the issued
// I/O count over the runtime, the count wins. Each correction is noted.
func (j *textJob) fixRounding() []string {
	var notes []string
	for _, d := range j.r.Directions() {
		if dec := j.decimalBW[d.Name]; dec > 0 && off(d.BytesPerSec, dec) > 0.01 {
			notes = append(notes, fmt.Sprintf("line %d: fio job %q: %s bandwidth printed as %.0f B/s in binary units but %.0f B/s in decimal units; the decimal figure is kept (fio 3.0/3.1 rounding)",
				j.line, j.name, d.Name, d.BytesPerSec, dec))
			d.BytesPerSec = dec
		}
		if j.issued && d.TotalIOs > 0 && d.Runtime > 0 {
			calc := float64(d.TotalIOs) / d.Runtime.Seconds()
			if off(d.IOPS, calc) > 0.02 {
				notes = append(notes, fmt.Sprintf("line %d: fio job %q: %s IOPS printed as %.6g but %d I/Os in %v are %.6g IOPS; the count is kept",
					j.line, j.name, d.Name, d.IOPS, d.TotalIOs, d.Runtime, calc))
				d.IOPS = calc
			}
		}
	}
	return notes
}

// descBlockSize reads the block size of a description line for the
// direction rw uses: "(R) 4096B-4096B, (W) 4096B-4096B, (T) ..." (3.x) or
// "4K-4K/4K-4K/4K-4K" (2.x, read/write/trim). A range (bsrange) gives 0.
func descBlockSize(bs, rw string) int64 {
	write := rw == "write" || rw == "randwrite"
	var part string
	if strings.Contains(bs, "(R)") {
		for _, f := range strings.Split(bs, ",") {
			f = strings.TrimSpace(f)
			if write && strings.HasPrefix(f, "(W)") || !write && strings.HasPrefix(f, "(R)") {
				part = strings.TrimSpace(f[3:])
			}
		}
	} else {
		fs := strings.Split(bs, "/")
		part = fs[0]
		if write && len(fs) > 1 {
			part = fs[1]
		}
	}
	lo, hi, ok := strings.Cut(part, "-")
	if !ok {
		hi = lo
	}
	// fio prints sizes in IEC units (4096B, 128KiB) or, in 2.x, 4K: the
	// standard reading, not the one fio applies to its job files.
	a, err1 := units.ParseSize(lo)
	b, err2 := units.ParseSize(hi)
	if err1 != nil || err2 != nil || a != b {
		return 0
	}
	return a
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

func textLatTarget(n int, r *result.Result, dir *result.Direction, kind string, inSync bool) (*result.Latency, *ParseError) {
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

func textDirection(n int, m []string) (*result.Direction, *ParseError) {
	iops, ok1 := suffixed(m[2])
	bw, err2 := strconv.ParseFloat(m[3], 64)
	f, ok3 := unitFactor(strings.TrimSuffix(m[4], "/s"), false)
	io, err4 := strconv.ParseFloat(m[7], 64)
	g, ok4 := unitFactor(m[8], false)
	ms, err5 := strconv.ParseInt(m[9], 10, 64)
	if !ok1 || err2 != nil || !ok3 || err4 != nil || !ok4 || err5 != nil {
		return nil, errAt(n, 0, "expected IOPS, BW, I/O size and runtime figures, found %q", strings.TrimSpace(m[0]))
	}
	return &result.Direction{IOPS: iops, BytesPerSec: bw * f, Bytes: int64(io*g + 0.5), Runtime: time.Duration(ms) * time.Millisecond}, nil
}

// textDirectionV2 reads fio 2.x's "read : io=1024.0MB, bw=17476KB/s,
// iops=4369, runt= 60001msec" (KB means KiB there).
func textDirectionV2(n int, m []string) (*result.Direction, *ParseError) {
	io, err1 := strconv.ParseFloat(m[2], 64)
	f, ok1 := unitFactor(m[3], true)
	bw, err2 := strconv.ParseFloat(m[4], 64)
	g, ok2 := unitFactor(m[5], true)
	iops, ok3 := suffixed(m[6])
	ms, err4 := strconv.ParseInt(m[7], 10, 64)
	if err1 != nil || !ok1 || err2 != nil || !ok2 || !ok3 || err4 != nil {
		return nil, errAt(n, 0, "expected io=, bw=, iops= and runt= figures, found %q", strings.TrimSpace(m[0]))
	}
	return &result.Direction{IOPS: iops, BytesPerSec: bw * g, Bytes: int64(io*f + 0.5), Runtime: time.Duration(ms) * time.Millisecond}, nil
}

// unitFactor reads a byte unit of any case and scale: B, K/k/Ki, M, G, T,
// P followed by B. "KiB" is 1024; "kB"/"KB" is 1000 in fio 3, but 1024 in
// fio 2, which wrote binary sizes with decimal names (binaryNames).
func unitFactor(u string, binaryNames bool) (float64, bool) {
	u = strings.TrimSpace(u)
	if !strings.HasSuffix(u, "B") {
		return 0, false
	}
	u = strings.TrimSuffix(u, "B")
	if u == "" {
		return 1, true
	}
	bin := binaryNames || strings.HasSuffix(u, "i")
	u = strings.TrimSuffix(u, "i")
	if len(u) != 1 {
		return 0, false
	}
	exp := strings.IndexByte("KMGTP", strings.ToUpper(u)[0]) + 1
	if exp == 0 {
		return 0, false
	}
	if bin {
		return math.Pow(1024, float64(exp)), true
	}
	return math.Pow(1000, float64(exp)), true
}

// suffixed reads fio's abbreviated numbers: 9989, 10.0k, 3733.6K, 1.2M
// (powers of 1000, any case).
func suffixed(s string) (float64, bool) {
	mult := 1.0
	if n := len(s); n > 0 {
		switch s[n-1] {
		case 'k', 'K':
			mult = 1e3
		case 'M', 'm':
			mult = 1e6
		case 'G', 'g':
			mult = 1e9
		case 'T', 't':
			mult = 1e12
		}
		if mult > 1 {
			s = s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, false
	}
	return v * mult, true
}
