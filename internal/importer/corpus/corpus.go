// Package corpus checks the importer against published tool outputs. It
// reads the figures a file states with code of its own (generic JSON maps
// and regular expressions written here, never the importer's readers), and
// compares what the importer stored with them. The corpus test and
// bench/import both use it.
package corpus

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Tolerance is how far a stored figure may be from the file's own.
const Tolerance = 0.005

// Figure is one value a file states, in base units; any of Want is right
// (fio prints some figures twice: bandwidth in binary and decimal units,
// IOPS rounded and as an exact I/O count over the runtime).
type Figure struct {
	What string // "read iops", "write bw", "read p99", "read mean"
	Want []float64
}

// Expected is what one file holds, in file order.
type Expected struct {
	Kind    string // the format family, for the corpus table
	Results [][]Figure
	Health  []HealthFacts
	// Refuse, when set, says the file holds nothing storable and why.
	Refuse string
}

// HealthFacts are the figures of one SMART record.
type HealthFacts struct {
	PowerOnHours int64
	TemperatureC int64
	Healthy      bool
}

// Expect reads a file's figures.
func Expect(name string, data []byte) (*Expected, error) {
	t := bytes.TrimSpace(data)
	switch {
	case bytes.Contains(data, []byte(`"fio version"`)):
		return fioJSON(data)
	case bytes.HasPrefix(t, []byte("{")):
		return smartJSON(data)
	case reTextHeader.Match(data):
		return fioText(data), nil
	case reTerse.Match(data):
		return fioTerse(data), nil
	case reIozoneTable.Match(data):
		return iozoneTable(data), nil
	case reReport.Match(data):
		return iozoneReport(data), nil
	case reSmartBanner.Match(data) || reSmartTableHdr.Match(data):
		return smartText(data), nil
	case reDD.Match(data) || reHdparm.Match(data):
		return ddHdparm(data), nil
	}
	return nil, fmt.Errorf("%s: no expectation reader for this file", name)
}

func num(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := x.Float64()
		return f, err == nil
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}

func obj(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// fioJSON reads every fio document in a file: top-level objects starting
// a line, and fio documents nested in other JSON (a collector's "data").
func fioJSON(data []byte) (*Expected, error) {
	var docs []map[string]any
	var find func(any)
	find = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			if _, ok := x["fio version"]; ok {
				docs = append(docs, x)
				return
			}
			keys := make([]string, 0, len(x))
			for k := range x {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			for _, k := range keys {
				find(x[k])
			}
		case []any:
			for _, e := range x {
				find(e)
			}
		}
	}
	lines := strings.SplitAfter(string(data), "\n")
	off, skipTo := 0, 0
	for _, l := range lines {
		if off >= skipTo && strings.HasPrefix(strings.TrimLeft(l, " \t"), "{") {
			var v any
			dec := json.NewDecoder(strings.NewReader(string(data[off:])))
			if err := dec.Decode(&v); err == nil {
				find(v)
				skipTo = off + int(dec.InputOffset())
			}
		}
		off += len(l)
	}
	if len(docs) == 0 {
		return nil, fmt.Errorf("no fio JSON document found")
	}
	e := &Expected{}
	for _, doc := range docs {
		version, _ := doc["fio version"].(string)
		e.Kind = "fio JSON " + fioFamily(version)
		jobs, _ := doc["jobs"].([]any)
		if len(jobs) == 0 {
			cs, _ := doc["client_stats"].([]any)
			for _, j := range cs {
				if obj(j)["jobname"] != "All clients" {
					jobs = append(jobs, j)
				}
			}
			e.Kind = "fio JSON client/server"
		}
		for _, g := range parallelGroups(doc, jobs) {
			e.Results = append(e.Results, fioGroup(g))
		}
	}
	if strings.Contains(string(data), `"bins"`) {
		e.Kind = "fio JSON json+"
	}
	return e, nil
}

// parallelGroups splits a document's job entries into results: numjobs=N
// without group_reporting prints N consecutive entries of one name, group
// and client that ran side by side and make one result. Options come from
// the job, its client's global options (an array of per-client objects in
// client/server output) or the document's global options.
func parallelGroups(doc map[string]any, jobs []any) [][]map[string]any {
	option := func(job map[string]any, key string) (string, bool) {
		if v, ok := obj(job["job options"])[key]; ok {
			return fmt.Sprint(v), true
		}
		for _, c := range asList(doc["global options"]) {
			c := obj(c)
			if fmt.Sprint(c["hostname"]) == fmt.Sprint(job["hostname"]) && fmt.Sprint(c["port"]) == fmt.Sprint(job["port"]) {
				if v, ok := c[key]; ok {
					return fmt.Sprint(v), true
				}
			}
		}
		v, ok := obj(doc["global options"])[key]
		return fmt.Sprint(v), ok
	}
	var out [][]map[string]any
	var want int
	for _, j := range jobs {
		job := obj(j)
		if n := len(out); n > 0 && len(out[n-1]) < want && sameClient(out[n-1][0], job) {
			out[n-1] = append(out[n-1], job)
			continue
		}
		want = 1
		if gr, ok := option(job, "group_reporting"); !ok || gr == "0" {
			if v, ok := option(job, "numjobs"); ok {
				want, _ = strconv.Atoi(v)
			}
		}
		out = append(out, []map[string]any{job})
	}
	return out
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func sameClient(a, b map[string]any) bool {
	for _, k := range []string{"jobname", "groupid", "hostname", "port"} {
		if fmt.Sprint(a[k]) != fmt.Sprint(b[k]) {
			return false
		}
	}
	return true
}

// fioGroup states the figures of jobs that ran in parallel: IOPS and
// bandwidth add up, the mean is weighted by I/O count, and the p99 is the
// worst job's (percentiles of separate jobs cannot be merged).
func fioGroup(jobs []map[string]any) []Figure {
	var figs []Figure
	for _, dir := range []string{"read", "write", "trim"} {
		var iops, bw, meanSum, ios, p99 float64
		var hasIOPS, hasBW, hasMean, hasP99 bool
		for _, job := range jobs {
			for _, f := range fioJob(job) {
				d, what, _ := strings.Cut(f.What, " ")
				if d != dir {
					continue
				}
				v := f.Want[0]
				switch what {
				case "iops":
					iops, hasIOPS = iops+v, true
				case "bw":
					bw, hasBW = bw+v, true
				case "mean":
					n, _ := num(obj(job[dir])["total_ios"])
					n = max(n, 1)
					meanSum, ios, hasMean = meanSum+v*n, ios+n, true
				case "p99":
					p99, hasP99 = max(p99, v), true
				}
			}
		}
		if hasIOPS {
			figs = append(figs, Figure{dir + " iops", []float64{iops}})
		}
		if hasBW {
			figs = append(figs, Figure{dir + " bw", []float64{bw}})
		}
		if hasMean {
			figs = append(figs, Figure{dir + " mean", []float64{meanSum / ios}})
		}
		if hasP99 {
			figs = append(figs, Figure{dir + " p99", []float64{p99}})
		}
	}
	return figs
}

func fioJob(job map[string]any) []Figure {
	var figs []Figure
	for _, dir := range []string{"read", "write", "trim"} {
		d := obj(job[dir])
		if d == nil {
			continue
		}
		ios, _ := num(d["total_ios"])
		io, _ := num(d["io_bytes"])
		if ios == 0 && io == 0 {
			continue
		}
		if v, ok := num(d["iops"]); ok {
			figs = append(figs, Figure{dir + " iops", []float64{v}})
		}
		if v, ok := num(d["bw_bytes"]); ok {
			figs = append(figs, Figure{dir + " bw", []float64{v}})
		} else if v, ok := num(d["bw"]); ok {
			figs = append(figs, Figure{dir + " bw", []float64{v * 1024}})
		}
		clat, scale := obj(d["clat_ns"]), 1.0
		if clat == nil {
			clat, scale = obj(d["clat"]), 1000
		}
		if v, ok := num(clat["mean"]); ok && v > 0 {
			figs = append(figs, Figure{dir + " mean", []float64{v * scale}})
		}
		if v, ok := num(obj(clat["percentile"])["99.000000"]); ok && v > 0 {
			figs = append(figs, Figure{dir + " p99", []float64{v * scale}})
		}
	}
	return figs
}

func fioFamily(v string) string {
	v = strings.TrimPrefix(v, "fio-")
	major, rest, _ := strings.Cut(v, ".")
	minor := 0
	if f := strings.FieldsFunc(rest, func(r rune) bool { return r < '0' || r > '9' }); len(f) > 0 {
		minor, _ = strconv.Atoi(f[0])
	}
	switch {
	case major == "2":
		return "2.x"
	case major == "3" && minor < 20:
		return "3.0-3.19"
	}
	return "3.20+"
}

var (
	reTextHeader = regexp.MustCompile(`(?m)^\S.*: \(groupid=\d+, jobs=\d+\): err=`)
	reTextV3     = regexp.MustCompile(`^\s+(read|write|trim)\s*: IOPS=([\d.]+)([kKM]?), BW=([\d.]+)([KMG]i?B)/s \(([\d.]+)([kKMG]?B)/s\)\(([\d.]+)[KMGT]?i?B/(\d+)msec\)`)
	reTextV2     = regexp.MustCompile(`^\s+(read|write|trim)\s*: io=([\d.]+)[KMG]?B, bw=([\d.]+)([KMG]?B)/s, iops=(\d+)\s*, runt=\s*(\d+)msec`)
	reTextPctHdr = regexp.MustCompile(`^\s+(clat|sync|lat|slat) percentiles \((\w+)\)`)
	reText99     = regexp.MustCompile(`99\.00th=\[\s*(\d+)\]`)
	reTextIss3   = regexp.MustCompile(`issued rwts?: total=(\d+),(\d+),(\d+)`)
	reTextIss2   = regexp.MustCompile(`issued\s*: total=r=(\d+)/w=(\d+)/d=(\d+)`)
	reTextVer    = regexp.MustCompile(`(?m)^fio-(\d+)\.(\d+)`)
)

var unitMult = map[string]float64{"B": 1, "KiB": 1024, "MiB": 1 << 20, "GiB": 1 << 30, "kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9}
var timeMult = map[string]float64{"nsec": 1, "usec": 1e3, "msec": 1e6}

// fioText reads fio's normal output: each job block gives one result in
// file order (the corpus has no numjobs without group_reporting).
func fioText(data []byte) *Expected {
	e := &Expected{Kind: "fio text 3.x"}
	if m := reTextVer.FindSubmatch(data); m != nil && string(m[1]) == "2" {
		e.Kind = "fio text 2.x"
	}
	var cur []*textDir
	var last *textDir
	pctUnit, pctOf := 0.0, ""
	flush := func() {
		if cur == nil {
			return
		}
		e.Results = append(e.Results, textFigures(cur))
		cur = nil
	}
	for _, line := range strings.Split(strings.ReplaceAll(string(data), "\r", ""), "\n") {
		if reTextHeader.MatchString(line) {
			flush()
			cur, last = []*textDir{}, nil
			continue
		}
		if cur == nil {
			continue
		}
		if m := reTextV3.FindStringSubmatch(line); m != nil {
			d := textDirV3(m)
			cur, last = append(cur, d), d
			continue
		}
		if m := reTextV2.FindStringSubmatch(line); m != nil {
			d := textDirV2(m)
			cur, last = append(cur, d), d
			continue
		}
		if m := reTextPctHdr.FindStringSubmatch(line); m != nil {
			pctUnit, pctOf = timeMult[m[2]], m[1]
			continue
		}
		if pctUnit > 0 && strings.Contains(line, "|") {
			if m := reText99.FindStringSubmatch(line); m != nil && pctOf == "clat" && last != nil {
				v, _ := strconv.ParseFloat(m[1], 64)
				last.p99, last.hasP99 = v*pctUnit, true
			}
			continue
		}
		pctUnit = 0
		m := reTextIss3.FindStringSubmatch(line)
		if m == nil {
			m = reTextIss2.FindStringSubmatch(line)
		}
		if m != nil {
			setExactIOPS(cur, m)
		}
		if strings.HasPrefix(strings.TrimSpace(line), "Run status group") {
			flush()
		}
	}
	flush()
	return e
}

// textDir is one direction's figures in a fio text job block.
type textDir struct {
	name               string
	iops, iops2        float64 // printed, and I/O count over runtime
	bw, dec, runtimeMS float64
	p99                float64
	hasP99             bool
}

// textDirV3 reads a fio 3.x direction line ("read: IOPS=..., BW=...").
func textDirV3(m []string) *textDir {
	d := &textDir{name: m[1]}
	d.iops, _ = strconv.ParseFloat(m[2], 64)
	switch strings.ToLower(m[3]) {
	case "k":
		d.iops *= 1e3
	case "m":
		d.iops *= 1e6
	}
	v, _ := strconv.ParseFloat(m[4], 64)
	d.bw = v * unitMult[m[5]]
	v, _ = strconv.ParseFloat(m[6], 64)
	d.dec = v * unitMult[strings.Replace(m[7], "k", "K", 1)]
	d.runtimeMS, _ = strconv.ParseFloat(m[9], 64)
	return d
}

// textDirV2 reads a fio 2.x direction line ("read : io=..., bw=..., iops=...").
func textDirV2(m []string) *textDir {
	d := &textDir{name: m[1]}
	v, _ := strconv.ParseFloat(m[3], 64)
	// fio 2.x: KB means KiB.
	d.bw = v * map[string]float64{"B": 1, "KB": 1024, "MB": 1 << 20, "GB": 1 << 30}[m[4]]
	d.iops, _ = strconv.ParseFloat(m[5], 64)
	d.runtimeMS, _ = strconv.ParseFloat(m[6], 64)
	return d
}

// setExactIOPS sets each direction's exact rate from the issued I/O counts
// in m (read, write, trim) over its runtime.
func setExactIOPS(dirs []*textDir, m []string) {
	for _, d := range dirs {
		i := map[string]int{"read": 1, "write": 2, "trim": 3}[d.name]
		n, _ := strconv.ParseFloat(m[i], 64)
		if d.runtimeMS > 0 && n > 0 {
			// The exact rate, besides the rounded one printed.
			d.iops2 = n / (d.runtimeMS / 1000)
		}
	}
}

// textFigures turns a job block's directions into one result's figures.
func textFigures(dirs []*textDir) []Figure {
	var figs []Figure
	for _, d := range dirs {
		iops := []float64{d.iops}
		if d.iops2 > 0 {
			iops = append(iops, d.iops2)
		}
		figs = append(figs, Figure{d.name + " iops", iops})
		bw := []float64{d.bw}
		if d.dec > 0 {
			bw = append(bw, d.dec)
		}
		figs = append(figs, Figure{d.name + " bw", bw})
		if d.hasP99 {
			figs = append(figs, Figure{d.name + " p99", []float64{d.p99}})
		}
	}
	return figs
}

// iozoneReport reads iozone -R blocks: every rate of every row, in kB/s.
func iozoneReport(data []byte) *Expected {
	e := &Expected{Kind: "iozone -R"}
	for _, line := range strings.Split(string(data), "\n") {
		t := strings.TrimSpace(line)
		if !reRow.MatchString(t) {
			continue
		}
		for _, v := range strings.Fields(t)[1:] {
			if x, err := strconv.ParseFloat(v, 64); err == nil {
				e.Results = append(e.Results, []Figure{{"bw", []float64{x * 1024}}})
			}
		}
	}
	return e
}

var reIozoneTable = regexp.MustCompile(`(?m)^\s*(kB|KB)\s+reclen\s+write`)

// iozoneTable reads iozone -a tables: rows of file size, record size and
// rates in kB/s.
func iozoneTable(data []byte) *Expected {
	e := &Expected{Kind: "iozone -a"}
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		if reIozoneTable.MatchString(line) {
			in = true
			continue
		}
		f := strings.Fields(line)
		if !in || len(f) < 3 {
			continue
		}
		var vals []float64
		for _, s := range f {
			x, err := strconv.ParseFloat(s, 64)
			if err != nil {
				vals = nil
				break
			}
			vals = append(vals, x)
		}
		for _, x := range vals[min(2, len(vals)):] {
			e.Results = append(e.Results, []Figure{{"bw", []float64{x * 1024}}})
		}
	}
	return e
}

var (
	reReport = regexp.MustCompile(`(?m)^"[A-Za-z -]+ report"`)
	reRow    = regexp.MustCompile(`^"\d+"(\s+\d+)+$`)
	reDD     = regexp.MustCompile(`(?m)^(\d+) bytes.* copied, ([\d.,]+) s, ([\d.,]+) ([kMG]?B)/s`)
	reHdparm = regexp.MustCompile(`(?m)Timing .*= *([\d.]+) ([kM])B/sec`)
)

func ddHdparm(data []byte) *Expected {
	e := &Expected{Kind: "dd/hdparm"}
	for _, line := range strings.Split(string(data), "\n") {
		if m := reHdparm.FindStringSubmatch(line); m != nil {
			v, _ := strconv.ParseFloat(m[1], 64)
			e.Results = append(e.Results, []Figure{{"bw", []float64{v * map[string]float64{"k": 1024, "M": 1 << 20}[m[2]]}}})
		}
		if m := reDD.FindStringSubmatch(line); m != nil {
			n, _ := strconv.ParseFloat(m[1], 64)
			s, _ := strconv.ParseFloat(strings.Replace(m[2], ",", ".", 1), 64)
			r, _ := strconv.ParseFloat(strings.Replace(m[3], ",", ".", 1), 64)
			want := []float64{r * map[string]float64{"B": 1, "kB": 1e3, "MB": 1e6, "GB": 1e9}[m[4]]}
			if s > 0 {
				want = append(want, n/s)
			}
			e.Results = append(e.Results, []Figure{{"bw", want}})
		}
	}
	return e
}

// smartJSON reads smartctl --json with its own rules for "healthy": the
// checks docs/import.md lists.
func smartJSON(data []byte) (*Expected, error) {
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	e := &Expected{Kind: "smartctl JSON"}
	ata := obj(doc["ata_smart_attributes"])
	nvme := obj(doc["nvme_smart_health_information_log"])
	_, scsiDefects := doc["scsi_grown_defect_list"]
	scsiLog := obj(doc["scsi_error_counter_log"])
	status := obj(doc["smart_status"])
	if ata == nil && nvme == nil && !scsiDefects && scsiLog == nil && status == nil {
		e.Refuse = "no SMART data"
		if msgs, _ := obj(doc["smartctl"])["messages"].([]any); len(msgs) > 0 {
			e.Refuse = fmt.Sprint(obj(msgs[0])["string"])
		}
		return e, nil
	}
	h := HealthFacts{Healthy: true}
	if v, ok := num(obj(doc["power_on_time"])["hours"]); ok {
		h.PowerOnHours = int64(v)
	}
	if v, ok := num(obj(doc["temperature"])["current"]); ok {
		h.TemperatureC = int64(v)
	}
	if p, ok := status["passed"].(bool); ok && !p {
		h.Healthy = false
	}
	seagate := strings.HasPrefix(fmt.Sprint(doc["model_name"]), "ST") || strings.Contains(strings.ToLower(fmt.Sprint(doc["model_family"])), "seagate")
	table, _ := ata["table"].([]any)
	for _, a := range table {
		attr := obj(a)
		id, _ := num(attr["id"])
		raw, _ := num(obj(attr["raw"])["value"])
		if wf, _ := attr["when_failed"].(string); wf != "" && wf != "-" {
			h.Healthy = false
		}
		if int(id) == 9 && h.PowerOnHours == 0 {
			s := fmt.Sprint(obj(attr["raw"])["string"])
			if f := strings.Fields(s); len(f) > 0 {
				v, _ := strconv.ParseInt(strings.TrimRight(f[0], "h"), 10, 64)
				h.PowerOnHours = v
			}
		}
		switch int(id) {
		case 5, 187, 196, 197, 198, 199:
			if raw > 0 {
				h.Healthy = false
			}
		case 188:
			r := uint64(raw)
			if seagate {
				r = r&0xFFFF + (r>>16)&0xFFFF + (r>>32)&0xFFFF
			}
			if r > 0 {
				h.Healthy = false
			}
		}
	}
	if nvme != nil {
		get := func(k string) float64 { v, _ := num(nvme[k]); return v }
		if get("critical_warning") != 0 || get("media_errors") > 0 || get("percentage_used") >= 100 ||
			get("available_spare_threshold") > 0 && get("available_spare") < get("available_spare_threshold") ||
			get("unsafe_shutdowns") >= 10 && get("unsafe_shutdowns") >= 0.5*get("power_cycles") {
			h.Healthy = false
		}
		if h.PowerOnHours == 0 {
			h.PowerOnHours = int64(get("power_on_hours"))
		}
	}
	if v, ok := num(doc["scsi_grown_defect_list"]); ok && v > 0 {
		h.Healthy = false
	}
	for _, op := range []string{"read", "write", "verify"} {
		if v, ok := num(obj(scsiLog[op])["total_uncorrected_errors"]); ok && v > 0 {
			h.Healthy = false
		}
	}
	e.Health = append(e.Health, h)
	return e, nil
}

// Stored reads the figures of a stored result in the same terms.
func Stored(r *result.Result, what string) (float64, bool) {
	dir, kind, ok := strings.Cut(what, " ")
	if !ok {
		// "bw": the result's one direction.
		v, ok := r.Metric(result.MetricBW)
		return v, ok
	}
	var d *result.Direction
	switch dir {
	case "read":
		d = r.Read
	case "write":
		d = r.Write
	case "trim":
		d = r.Trim
	}
	if d == nil {
		return 0, false
	}
	switch kind {
	case "iops":
		return d.IOPS, d.IOPS > 0
	case "bw":
		return d.BytesPerSec, d.BytesPerSec > 0
	case "mean":
		return float64(d.Completion.Mean), d.Completion.Mean > 0
	case "p99":
		v, ok := d.Completion.At(99)
		return float64(v), ok
	}
	return 0, false
}

// Compare lists where the stored results and health records differ from
// the file's own figures (nothing when they agree).
func Compare(e *Expected, results []result.Result, health []result.Health) []string {
	var out []string
	if len(results) != len(e.Results) {
		out = append(out, fmt.Sprintf("%d results stored, the file holds %d", len(results), len(e.Results)))
	}
	for i := 0; i < min(len(results), len(e.Results)); i++ {
		out = append(out, compareOne(i, &results[i], e.Results[i])...)
	}
	if len(health) != len(e.Health) {
		out = append(out, fmt.Sprintf("%d health records stored, the file holds %d", len(health), len(e.Health)))
	}
	for i := 0; i < min(len(health), len(e.Health)); i++ {
		h, w := health[i], e.Health[i]
		if h.PowerOnHours != w.PowerOnHours || h.TemperatureC != w.TemperatureC || h.Healthy() != w.Healthy {
			out = append(out, fmt.Sprintf("health %d: stored %d h, %d °C, healthy %v; the file says %d h, %d °C, healthy %v",
				i, h.PowerOnHours, h.TemperatureC, h.Healthy(), w.PowerOnHours, w.TemperatureC, w.Healthy))
		}
	}
	return out
}

func compareOne(i int, r *result.Result, figs []Figure) []string {
	var out []string
	for _, f := range figs {
		got, ok := Stored(r, f.What)
		if !ok {
			out = append(out, fmt.Sprintf("result %d (%s): %s not stored, the file says %v", i+1, r.Workload, f.What, f.Want))
			continue
		}
		if !Near(got, f.Want) {
			out = append(out, fmt.Sprintf("result %d (%s): %s stored %v, the file says %v", i+1, r.Workload, f.What, got, f.Want))
		}
	}
	return out
}

// Near reports whether got is within Tolerance of any of want.
func Near(got float64, want []float64) bool {
	for _, w := range want {
		if w == 0 && got == 0 || w != 0 && math.Abs(got-w)/math.Abs(w) <= Tolerance {
			return true
		}
	}
	return false
}

// CutFigures checks the results read from a cut copy: each must be one of
// the full file's, figure for figure (a result may lack figures the cut
// removed, never hold one the full file does not).
func CutFigures(full []result.Result, cut []result.Result) []string {
	var out []string
	for i := range cut {
		if i >= len(full) {
			out = append(out, fmt.Sprintf("cut copy: result %d is not in the full file", i+1))
			continue
		}
		for _, what := range []string{"read iops", "read bw", "read mean", "read p99", "write iops", "write bw", "write mean", "write p99", "bw"} {
			got, ok := Stored(&cut[i], what)
			if !ok {
				continue
			}
			want, ok := Stored(&full[i], what)
			if !ok || !Near(got, []float64{want}) {
				out = append(out, fmt.Sprintf("cut copy: result %d (%s): %s %v, the full file gives %v", i+1, cut[i].Workload, what, got, want))
			}
		}
	}
	return out
}

// Kinds sorts format families for the corpus table.
func Kinds(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

var (
	reSmartBanner   = regexp.MustCompile(`(?m)^smartctl \d`)
	reSmartTableHdr = regexp.MustCompile(`(?m)^ID# +ATTRIBUTE_NAME`)
	reSmartSCSI     = regexp.MustCompile(`^(read|write|verify):\s.*\s(\d+)\s*$`)
	reSmartDefects  = regexp.MustCompile(`^Elements in grown defect list:\s*(\d+)`)
	reSmartField    = regexp.MustCompile(`^(Critical Warning|Temperature|Available Spare|Available Spare Threshold|Percentage Used|Power Cycles|Power On Hours|Unsafe Shutdowns|Media and Data Integrity Errors|SMART overall-health self-assessment test result):\s+(\S+)`)
	reSmartAttr     = regexp.MustCompile(`^\s*(\d+)\s+\S+\s+0x[0-9a-f]+\s+\d+\s+\d+\s+\d+\s+\S+\s+\S+\s+(\S+)\s+(\d+)`)
)

// smartText reads smartctl -a text, one record per smartctl banner.
func smartText(data []byte) *Expected {
	e := &Expected{Kind: "smartctl text"}
	var cur map[string]string
	var attrs map[int]float64
	failedAttr, scsiBad := false, false
	if !reSmartBanner.Match(data) {
		cur, attrs = map[string]string{}, map[int]float64{} // one record without a banner
	}
	flush := func() {
		if cur == nil {
			return
		}
		get := func(k string) float64 {
			s := strings.TrimSuffix(strings.ReplaceAll(cur[k], ",", ""), "%")
			if strings.HasPrefix(s, "0x") {
				v, _ := strconv.ParseUint(s[2:], 16, 64)
				return float64(v)
			}
			v, _ := strconv.ParseFloat(s, 64)
			return v
		}
		h := HealthFacts{PowerOnHours: int64(get("Power On Hours")), TemperatureC: int64(get("Temperature")), Healthy: true}
		if h.PowerOnHours == 0 {
			h.PowerOnHours = int64(attrs[9])
		}
		if h.TemperatureC == 0 {
			h.TemperatureC = int64(attrs[194])
		}
		if cur["SMART overall-health self-assessment test result"] == "FAILED!" || cur["SMART overall-health self-assessment test result"] == "FAILED" ||
			get("Critical Warning") != 0 || get("Media and Data Integrity Errors") > 0 || get("Percentage Used") >= 100 ||
			get("Available Spare Threshold") > 0 && get("Available Spare") < get("Available Spare Threshold") ||
			get("Unsafe Shutdowns") >= 10 && get("Unsafe Shutdowns") >= 0.5*get("Power Cycles") || failedAttr || scsiBad {
			h.Healthy = false
		}
		for _, id := range []int{5, 187, 188, 196, 197, 198, 199} {
			if attrs[id] > 0 {
				h.Healthy = false
			}
		}
		e.Health = append(e.Health, h)
	}
	for _, line := range strings.Split(string(data), "\n") {
		if reSmartBanner.MatchString(line) {
			flush()
			cur, attrs, failedAttr, scsiBad = map[string]string{}, map[int]float64{}, false, false
			continue
		}
		if cur == nil {
			continue
		}
		if m := reSmartField.FindStringSubmatch(line); m != nil {
			cur[m[1]] = m[2]
		}
		if m := reSmartSCSI.FindStringSubmatch(line); m != nil && m[2] != "0" {
			scsiBad = true
		}
		if m := reSmartDefects.FindStringSubmatch(line); m != nil && m[1] != "0" {
			scsiBad = true
		}
		if m := reSmartAttr.FindStringSubmatch(line); m != nil {
			id, _ := strconv.Atoi(m[1])
			v, _ := strconv.ParseFloat(m[3], 64)
			attrs[id] = v
			if m[2] != "-" {
				failedAttr = true
			}
		}
	}
	flush()
	return e
}

var reTerse = regexp.MustCompile(`(?m)^3;fio-`)

// fioTerse reads terse version 3 lines by field number (fio HOWTO):
// read KiB/s and IOPS at 7 and 8, write at 48 and 49 (1-based),
// completion latency percentiles "P%=µs" after them. Consecutive lines of
// one job name and group ran in parallel: their IOPS and bandwidth add up,
// the percentile is the worst job's.
func fioTerse(data []byte) *Expected {
	e := &Expected{Kind: "fio terse"}
	type sums struct{ riops, rbw, wiops, wbw, rp99, wp99 float64 }
	var cur *sums
	last := ""
	flush := func() {
		if cur == nil {
			return
		}
		var figs []Figure
		if cur.riops > 0 {
			figs = append(figs, Figure{"read iops", []float64{cur.riops}}, Figure{"read bw", []float64{cur.rbw}})
			if cur.rp99 > 0 {
				figs = append(figs, Figure{"read p99", []float64{cur.rp99}})
			}
		}
		if cur.wiops > 0 {
			figs = append(figs, Figure{"write iops", []float64{cur.wiops}}, Figure{"write bw", []float64{cur.wbw}})
			if cur.wp99 > 0 {
				figs = append(figs, Figure{"write p99", []float64{cur.wp99}})
			}
		}
		e.Results = append(e.Results, figs)
	}
	p99 := func(f []string, from, to int) float64 {
		for _, s := range f[from:min(to, len(f))] {
			if v, ok := strings.CutPrefix(s, "99.000000%="); ok {
				x, _ := strconv.ParseFloat(v, 64)
				return x * 1000
			}
		}
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(strings.TrimSpace(line), ";")
		if len(f) < 90 || f[0] != "3" {
			continue
		}
		if key := f[2] + ";" + f[3]; key != last {
			flush()
			cur, last = &sums{}, key
		}
		val := func(i int) float64 { x, _ := strconv.ParseFloat(f[i], 64); return x }
		cur.rbw += val(6) * 1024
		cur.riops += val(7)
		cur.wbw += val(47) * 1024
		cur.wiops += val(48)
		cur.rp99 = max(cur.rp99, p99(f, 17, 37))
		cur.wp99 = max(cur.wp99, p99(f, 58, 78))
	}
	flush()
	return e
}
