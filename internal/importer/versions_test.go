package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func corpusFile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile("testdata/corpus/" + name)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// fio 3.1 wrote bw in KiB/s without bw_bytes, and no N in clat_ns: both
// figures must be read, in base units.
func TestFio31BandwidthAndLatencyWithoutN(t *testing.T) {
	f, err := Parse("fio31.json", corpusFile(t, "shared-fioplot-fio31-randrw.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	r := f.Results[0]
	near(t, "read B/s", r.Read.BytesPerSec, 268241*1024, 1e-12)
	if r.Read.Completion.Mean != 257875 {
		t.Errorf("clat mean %v, want 257.875µs", r.Read.Completion.Mean)
	}
	if got := pct(t, r.Read.Completion, 99); got != 1220608 {
		t.Errorf("clat p99 %v, want 1.220608ms", got)
	}
	if r.Read.Bytes != 16481320960 || r.Read.Runtime != 60002*time.Millisecond || r.Read.TotalIOs != 4023760 {
		t.Errorf("bytes %d runtime %v ios %d", r.Read.Bytes, r.Read.Runtime, r.Read.TotalIOs)
	}
	if _, ok := r.Metric(result.MetricLatP99); !ok {
		t.Error("lat_p99 not reported")
	}
}

// toFio2 rewrites a fio 3.x JSON document the way fio 2.x laid it out:
// latency objects "slat"/"clat"/"lat" in microseconds, io_bytes in KiB,
// "runt" for the runtime, no bw_bytes or io_kbytes.
func toFio2(t *testing.T, data []byte) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	doc["fio version"] = "fio-2.2.10"
	for _, j := range doc["jobs"].([]any) {
		job := j.(map[string]any)
		for _, dir := range []string{"read", "write", "trim"} {
			d, ok := job[dir].(map[string]any)
			if !ok {
				continue
			}
			d["io_bytes"] = math.Round(d["io_bytes"].(float64) / 1024)
			delete(d, "io_kbytes")
			delete(d, "bw_bytes")
			d["runt"] = d["runtime"]
			delete(d, "runtime")
			for _, k := range []string{"slat", "clat", "lat"} {
				l, ok := d[k+"_ns"].(map[string]any)
				if !ok {
					continue
				}
				us := map[string]any{}
				for f, v := range l {
					if x, ok := v.(float64); ok {
						us[f] = x / 1000
					}
				}
				if p, ok := l["percentile"].(map[string]any); ok {
					pu := map[string]any{}
					for f, v := range p {
						pu[f] = v.(float64) / 1000
					}
					us["percentile"] = pu
				}
				delete(d, k+"_ns")
				d[k] = us
			}
		}
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fio 2.x: bandwidth in KiB/s, latency in µs, io_bytes in KiB. The same
// run written the 2.x way gives the same figures.
func TestFio2JSONUnits(t *testing.T) {
	v3 := corpusFile(t, "shared-fioplot-fio31-randrw.json")
	a, err := Parse("v3.json", v3, Options{})
	if err != nil {
		t.Fatal(err)
	}
	b, err := Parse("v2.json", toFio2(t, v3), Options{})
	if err != nil {
		t.Fatal(err)
	}
	x, y := a.Results[0].Read, b.Results[0].Read
	near(t, "B/s", y.BytesPerSec, x.BytesPerSec, 1e-9)
	near(t, "IOPS", y.IOPS, x.IOPS, 1e-9)
	near(t, "bytes", float64(y.Bytes), float64(x.Bytes), 1e-6)
	near(t, "clat mean", float64(y.Completion.Mean), float64(x.Completion.Mean), 1e-6)
	near(t, "clat p99", float64(pct(t, y.Completion, 99)), float64(pct(t, x.Completion, 99)), 1e-6)
	if y.Runtime != x.Runtime {
		t.Errorf("runtime %v, want %v", y.Runtime, x.Runtime)
	}
}

// json+ bins give the percentiles fio computes from the same histogram.
func TestJSONPlusBinsGivePercentiles(t *testing.T) {
	data, err := os.ReadFile("testdata/fio-seqread-1m-qd8.jsonplus")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := json.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	clat := doc["jobs"].([]any)[0].(map[string]any)["read"].(map[string]any)["clat_ns"].(map[string]any)
	delete(clat, "percentile")
	delete(clat, "N")
	stripped, _ := json.Marshal(doc)
	f, err := Parse("plus.json", stripped, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := f.Results[0].Read.Completion
	for p, want := range map[float64]time.Duration{50: 8978432, 99: 11075584, 99.9: 15794176} {
		if got := pct(t, c, p); got != want {
			t.Errorf("p%v from bins = %v, fio's own %v", p, got, want)
		}
	}
	if c.Samples != 901 {
		t.Errorf("samples from bins %d, want 901", c.Samples)
	}
}

// Repeats of one test in a fio text log are repetitions, not parallel jobs
// (the 28k, 34k, 30k, 25k, 22k stored as one 139.5k).
func TestFioTextRunsAreRepetitions(t *testing.T) {
	f, err := Parse("vps.log", corpusFile(t, "shared-vpscomp-fio2210-5runs-randread.log"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{28422, 34092, 29814, 24976, 22221}
	if len(f.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(f.Results), len(want))
	}
	for i, r := range f.Results {
		if r.Read.IOPS != want[i] || r.Repetition != i+1 || r.Workload != "rand-read-4k-qd16-8j" {
			t.Errorf("result %d: %s rep %d IOPS %v, want rand-read-4k-qd16-8j rep %d %v", i, r.Workload, r.Repetition, r.Read.IOPS, i+1, want[i])
		}
		near(t, "bw", r.Read.BytesPerSec, map[int]float64{0: 113691, 1: 136369, 2: 119258, 3: 99905, 4: 88887}[i]*1024, 1e-12)
	}
}

// fio 2.x description lines map workloads; different jobs stay separate
// results; "max=3733.6K" (usec) is 3.7336 s.
func TestFio2TextGroupsAndUppercaseUnits(t *testing.T) {
	f, err := Parse("ceph.txt", corpusFile(t, "shared-cephfio-fio216-4groups.txt"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 4 {
		t.Fatalf("%d results, want 4", len(f.Results))
	}
	jobs := map[string]bool{}
	for _, r := range f.Results {
		if r.Workload != "rand-read-1m-qd32-4j" || r.Repetition != 1 {
			t.Errorf("%s rep %d", r.Workload, r.Repetition)
		}
		jobs[result.LabelJob.Of(r.Labels)] = true
	}
	if len(jobs) != 4 {
		t.Errorf("jobs %v, want 4 different", jobs)
	}
	if got := f.Results[0].Read.Completion.Max; got != 3733600*time.Microsecond {
		t.Errorf("clat max %v, want 3.7336s", got)
	}
	if got := pct(t, f.Results[0].Read.Completion, 99); got != 3556*time.Millisecond {
		t.Errorf("clat p99 %v, want 3.556s", got)
	}
}

// A Markdown note with prose around hdparm and dd outputs: the outputs are
// read, the prose lines reported.
func TestNotesWithProse(t *testing.T) {
	f, err := Parse("notes.md", corpusFile(t, "shared-cmdtips-hdparm-dd-notes.md"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 5 || fmt.Sprint(f.Skipped) != "[15 16]" {
		t.Errorf("%d results, skipped %v", len(f.Results), f.Skipped)
	}
}

func TestSmartctlNVMeTextRecordsAndFlags(t *testing.T) {
	data := corpusFile(t, "smartdisk-disk_record.md")
	f, err := Parse("nvme.md", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Health) != 6 {
		t.Fatalf("%d records, want 6", len(f.Health))
	}
	h := f.Health[0]
	if h.PowerOnHours != 870 || h.TemperatureC != 32 || !h.Healthy() || h.Captured.IsZero() || h.Captured.Equal(f.Health[1].Captured) {
		t.Errorf("record 1: %d h, %d °C, healthy %v, captured %v", h.PowerOnHours, h.TemperatureC, h.Healthy(), h.Captured)
	}
	// The same drive degraded: media errors and critical warning bit 2.
	bad := strings.Replace(string(data), "Critical Warning:                   0x00", "Critical Warning:                   0x04", 1)
	bad = strings.Replace(bad, "Media and Data Integrity Errors:    0", "Media and Data Integrity Errors:    12", 1)
	f, err = Parse("nvme.md", []byte(bad), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h = f.Health[0]
	if h.Healthy() {
		t.Fatal("degraded drive shown healthy")
	}
	var reasons []string
	for _, fl := range h.Flags {
		reasons = append(reasons, fl.Reason)
	}
	all := strings.Join(reasons, "\n")
	for _, want := range []string{"0x04, bit 2: NVM subsystem reliability is degraded", "12 NVMe media and data integrity errors"} {
		if !strings.Contains(all, want) {
			t.Errorf("flags lack %q:\n%s", want, all)
		}
	}
	if !f.Health[1].Healthy() {
		t.Error("record 2 is unchanged and must stay healthy")
	}
}

func TestSmartctlSCSIJSON(t *testing.T) {
	f, err := Parse("scsi.json", corpusFile(t, "shared-scrutiny-scsi-seagate.json"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	h := f.Health[0]
	if h.Healthy() || len(h.Flags) != 1 || h.Flags[0].Name != "grown_defect_list" || h.Flags[0].Count != 56 || h.PowerOnHours != 43549 {
		t.Errorf("SCSI health %+v", h)
	}
}

// Implausible figures are refused with their line; the rest is kept.
func TestPlausibilityBounds(t *testing.T) {
	data := string(corpusFile(t, "shared-fioplot-fio31-randrw.json"))
	for name, edit := range map[string][2]string{
		"1e308 IOPS":       {`"iops" : 67060.431319`, `"iops" : 1e308`},
		"negative latency": {`"mean" : 257875.028696`, `"mean" : -257875.028696`},
	} {
		t.Run(name, func(t *testing.T) {
			bad := strings.Replace(data, edit[0], edit[1], 1)
			twice := data + "\n" + bad
			f, err := Parse("two.json", []byte(twice), Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(f.Results) != 1 || f.Refused() != 1 {
				t.Fatalf("%d results, %d refused; problems %v", len(f.Results), f.Refused(), f.Problems)
			}
			p := f.Problems[0]
			if p.Kind != result.ProblemRefused || p.Line != strings.Count(data, "\n")+2 {
				t.Errorf("problem %+v, want refused at line %d", p, strings.Count(data, "\n")+2)
			}
		})
	}
}

func TestConsistencyFlags(t *testing.T) {
	data := strings.Replace(string(corpusFile(t, "shared-fioplot-fio31-randrw.json")), `"bw" : 268241`, `"bw" : 536482`, 1)
	f, err := Parse("x.json", []byte(data), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Problems) != 1 || f.Problems[0].Kind != result.ProblemInconsistent || !strings.Contains(f.Problems[0].Msg, "read bandwidth 549357568 B/s but IOPS 67060.4 x block size 4096 B") {
		t.Errorf("problems %+v", f.Problems)
	}
	if len(f.Results) != 1 {
		t.Error("an inconsistent result is kept, flagged")
	}
}

// A half-read number is never stored: an iozone row cut inside a figure
// (the 67,584 B/s instead of 6.7 GB/s) is left out.
func TestCutRowNotStored(t *testing.T) {
	data := corpusFile(t, "iozone2csv-iozone.out.txt")
	i := bytes.Index(data, []byte("5169375"))
	cut := data[:i+2] // "51"
	f, err := Parse("cut.out", cut, Options{})
	if err == nil {
		t.Fatalf("a table whose only row is cut gave %d results", len(f.Results))
	}
	if !strings.Contains(err.Error(), "cut") {
		t.Errorf("error does not say the file is cut: %v", err)
	}
	j := bytes.Index(data, []byte("1048576    1024"))
	f, err = Parse("cut.out", data[:j+20], Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !f.Cut() || len(f.Results) != 13 {
		t.Errorf("cut %v, %d results (want the 13 of the first row)", f.Cut(), len(f.Results))
	}
}

// Stream hands CSV results on while it is still reading: the input is
// never held whole.
func TestStreamCSVEmitsBeforeTheEnd(t *testing.T) {
	const rows = 200000
	gen := &rowGen{n: rows}
	var atFirst, total int64
	n := 0
	f, err := Stream("big.csv", gen, Options{}, func(r result.Result) error {
		if n == 0 {
			atFirst = gen.read
		}
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	total = gen.read
	if n != rows/2 || f.ResultCount != n || f.Rows != rows {
		t.Fatalf("%d results, count %d, %d rows", n, f.ResultCount, f.Rows)
	}
	if atFirst >= total/2 {
		t.Errorf("first result after %d of %d bytes: not streamed", atFirst, total)
	}
	if f.SHA256 == "" || f.Size != total {
		t.Errorf("sha %q size %d, read %d", f.SHA256, f.Size, total)
	}
}

// rowGen produces a CSV of n rows, two metrics per result, without holding
// it in memory.
type rowGen struct {
	n, i int
	read int64
	buf  []byte
}

func (g *rowGen) Read(p []byte) (int, error) {
	for len(g.buf) < len(p) && g.i <= g.n {
		if g.i == 0 {
			g.buf = append(g.buf, csvHeader+"\n"...)
		} else {
			res := (g.i - 1) / 2
			metric, unit, v := "iops", "IOPS", 1000+res%977
			if g.i%2 == 0 {
				metric, unit = "bw", "MB/s"
			}
			g.buf = fmt.Appendf(g.buf, "node-%d,,,seq-read,%s,%d,%s\n", res%5000, metric, v, unit)
		}
		g.i++
	}
	if len(g.buf) == 0 {
		return 0, io.EOF
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	g.read += int64(n)
	return n, nil
}

func TestCSVLastLineWithoutBreakIsCut(t *testing.T) {
	in := csvHeader + "\npi,,,seq-read,bw,112.5,MB/s\npi,,,seq-write,bw,11"
	f, err := Parse("x.csv", []byte(in), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 1 || !f.Cut() || f.Problems[0].Line != 3 {
		t.Errorf("%d results, problems %+v", len(f.Results), f.Problems)
	}
	var got int
	sf, err := Stream("x.csv", strings.NewReader(in), Options{}, func(result.Result) error { got++; return nil })
	if err != nil || got != 1 || !sf.Cut() {
		t.Errorf("Stream: %v, %d results, cut %v", err, got, sf != nil && sf.Cut())
	}
}

func TestCSVImplausibleValueRefused(t *testing.T) {
	_, err := Parse("x.csv", []byte(csvHeader+"\npi,,,seq-read,iops,1e308,IOPS\n"), Options{})
	var pe *ParseError
	if !errors.As(err, &pe) || pe.Line != 2 || !strings.Contains(pe.Msg, "at most") {
		t.Errorf("err = %v", err)
	}
}

// Runs pasted one after another without their description lines are still
// runs of their own: "Run status group" ends a run's job blocks.
func TestFioTextRunsWithoutDescriptionLines(t *testing.T) {
	data, err := os.ReadFile("testdata/fio-text-pi4-usb-sata.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse("twice.txt", append(append([]byte{}, data...), data...), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 2 || f.Results[0].Read.IOPS != 9989 || f.Results[1].Read.IOPS != 9989 || f.Results[1].Repetition != 2 {
		t.Fatalf("%d results: %+v", len(f.Results), f.Results)
	}
}

// A notes page with one machine per Markdown heading: each section's
// results are results of their own (label section), not repeats.
func TestFioTextNotesSections(t *testing.T) {
	f, err := Parse("notes.md", corpusFile(t, "vpscomp-fiobranch-fio-iodepth-4_fio-libaio-4K.md"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	sections := map[string]int{}
	for _, r := range f.Results {
		sections[result.LabelSection.Of(r.Labels)]++
		if r.Repetition != 1 {
			t.Errorf("%s in %q is repetition %d", r.Workload, result.LabelSection.Of(r.Labels), r.Repetition)
		}
	}
	if len(f.Results) != 24 || len(sections) != 12 || sections["vultr - 488M"] != 2 {
		t.Errorf("%d results in sections %v", len(f.Results), sections)
	}
}

// osd bench JSON without elapsed_sec and iops (older OSDs and crimson) or
// inside an "osd_bench_results" section is read; IOPS is then derived.
func TestOSDBenchForms(t *testing.T) {
	for name, in := range map[string]string{
		"bare":    `{"bytes_written": 1073741824, "blocksize": 4194304, "bytes_per_sec": 157286400}`,
		"section": `{"osd_bench_results": {"bytes_written": 1073741824, "blocksize": 4194304, "elapsed_sec": 6.8, "bytes_per_sec": 157286400, "iops": 37.5}}`,
	} {
		t.Run(name, func(t *testing.T) {
			f, err := Parse("osd.json", []byte(in), Options{})
			if err != nil {
				t.Fatal(err)
			}
			r := f.Results[0]
			if f.Formats[0] != CephBench || r.Workload != "seq-write-4m" || r.Write.IOPS != 37.5 || r.Write.BytesPerSec != 157286400 {
				t.Errorf("%v %s %+v", f.Formats, r.Workload, r.Write)
			}
		})
	}
}

// Client/server output with two fio servers on one host: each client is a
// result of its own (host and port), with the options of its own entry of
// the per-client "global options" array.
func TestClientServerPerClientOptions(t *testing.T) {
	data := corpusFile(t, "fioanalyzer-clientserver-fio343-2servers-1host.json")
	f, err := Parse("clients.json", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		target string
		iops   float64
	}{{"127.0.0.1:18766", 108822.588706}, {"127.0.0.1:18765", 108815.592204}}
	if len(f.Results) != len(want) {
		t.Fatalf("%d results, want %d (one per client, the \"All clients\" sum left out)", len(f.Results), len(want))
	}
	for i, w := range want {
		r := f.Results[i]
		if r.Target != w.target || r.Read == nil || r.Read.IOPS != w.iops {
			t.Errorf("result %d: target %q, read %+v; want %q, %v IOPS", i, r.Target, r.Read, w.target, w.iops)
		}
		if !strings.HasPrefix(r.Workload, "rand-read-4k-") {
			t.Errorf("result %d: workload %q, want rand-read 4k from the client's global options", i, r.Workload)
		}
	}
	if len(f.Problems) != 0 {
		t.Errorf("problems: %v", f.Problems)
	}
}

// Parallel jobs of fio 3.0 to 3.19 (no N in the latency objects) are
// merged with means weighted by each job's I/O count.
func TestParallelJobsMeanWeightedByIOs(t *testing.T) {
	data := corpusFile(t, "pbench-clientserver-fio37-2hosts-fio-result.txt")
	var doc struct {
		Clients []struct {
			Name string `json:"jobname"`
			Host string `json:"hostname"`
			Read struct {
				IOs  float64 `json:"total_ios"`
				Clat struct {
					Mean float64 `json:"mean"`
				} `json:"clat_ns"`
			} `json:"read"`
		} `json:"client_stats"`
	}
	if err := json.Unmarshal(data[bytes.IndexByte(data, '{'):], &doc); err != nil {
		t.Fatal(err)
	}
	sum, ios := map[string]float64{}, map[string]float64{}
	for _, c := range doc.Clients {
		if c.Name == "All clients" {
			continue
		}
		sum[c.Host] += c.Read.Clat.Mean * c.Read.IOs
		ios[c.Host] += c.Read.IOs
	}
	f, err := Parse("pbench.txt", data, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Results) != 2 {
		t.Fatalf("%d results, want one per host", len(f.Results))
	}
	for _, r := range f.Results {
		want := sum[r.Target] / ios[r.Target]
		near(t, r.Target+" clat mean", float64(r.Read.Completion.Mean), want, 1e-6)
	}
}
