package fio

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func load(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func parseOne(t *testing.T, name string) (Output, [][]byte) {
	t.Helper()
	docs, raws, noise, err := ParseOutputs(bytes.NewReader(load(t, name)))
	if err != nil {
		t.Fatal(err)
	}
	if len(noise) > 0 && !strings.HasPrefix(name, "enospc") {
		t.Fatalf("unexpected noise: %q", noise)
	}
	if len(docs) == 0 {
		t.Fatal("no document")
	}
	return docs[len(docs)-1], raws
}

// The figures asserted below were read off the committed files with jq.
func TestParseRealOutputs(t *testing.T) {
	cases := []struct {
		file      string
		jobs      int
		readIOPS  float64
		readIOs   int64
		writeIOPS float64
		writeIOs  int64
		readP99   time.Duration
		writeP99  time.Duration
		syncN     int64
		syncP99   time.Duration
	}{
		{file: "libaio-randread.json", jobs: 1, readIOPS: 103420.579421, readIOs: 103524, readP99: 272384},
		{file: "psync-seqwrite.json", jobs: 1, writeIOPS: 2055.944056, writeIOs: 2058, writeP99: 464896},
		{file: "sync-fdatasync.json", jobs: 1, writeIOPS: 6370.629371, writeIOs: 911, writeP99: 27008, syncN: 911, syncP99: 301056},
		{file: "libaio-randrw70.json", jobs: 1, readIOPS: 42254.745255, readIOs: 42297, writeIOPS: 18022.977023, writeIOs: 18041, readP99: 220160, writeP99: 276480},
		{file: "multi-jobs-grouped.json", jobs: 1, readIOPS: 80695.304695, readIOs: 80776, readP99: 222208},
		{file: "multi-jobs.json", jobs: 3, readIOPS: 28591.408591, readIOs: 28620, readP99: 209920},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			out, _ := parseOne(t, c.file)
			if out.Version != "fio-3.33" {
				t.Errorf("version %q", out.Version)
			}
			jobs := out.AllJobs()
			if len(jobs) != c.jobs {
				t.Fatalf("jobs = %d, want %d", len(jobs), c.jobs)
			}
			r := ToResult(jobs[0])
			if r.Status != result.StatusComplete {
				t.Errorf("status %s: %s", r.Status, r.Error)
			}
			checkDir(t, "read", r.Read, c.readIOPS, c.readIOs, c.readP99)
			checkDir(t, "write", r.Write, c.writeIOPS, c.writeIOs, c.writeP99)
			if c.syncN == 0 {
				if r.Sync != nil {
					t.Errorf("sync latency present: %+v", r.Sync)
				}
				return
			}
			if r.Sync == nil || r.Sync.Samples != c.syncN {
				t.Fatalf("sync = %+v, want %d samples", r.Sync, c.syncN)
			}
			if p, _ := r.Sync.At(99); p != c.syncP99 {
				t.Errorf("sync p99 = %d, want %d", p, c.syncP99)
			}
		})
	}
}

func checkDir(t *testing.T, name string, d *result.Direction, iops float64, ios int64, p99 time.Duration) {
	t.Helper()
	if iops == 0 {
		if d != nil {
			t.Errorf("%s: unexpected direction %+v", name, d)
		}
		return
	}
	if d == nil {
		t.Fatalf("%s: missing", name)
	}
	if d.IOPS != iops || d.TotalIOs != ios {
		t.Errorf("%s: iops %v ios %d, want %v %d", name, d.IOPS, d.TotalIOs, iops, ios)
	}
	if d.BytesPerSec <= 0 || d.Runtime <= 0 {
		t.Errorf("%s: bw %v runtime %v", name, d.BytesPerSec, d.Runtime)
	}
	if got, ok := d.Completion.At(99); !ok || got != p99 {
		t.Errorf("%s: clat p99 = %v (%v), want %v", name, got, ok, p99)
	}
	for _, p := range []float64{50, 90, 99, 99.9, 99.99} {
		if _, ok := d.Completion.At(p); !ok {
			t.Errorf("%s: clat p%v missing", name, p)
		}
	}
	if !(d.Completion.Min <= d.Completion.Mean && d.Completion.Mean <= d.Completion.Max) {
		t.Errorf("%s: clat min/mean/max out of order: %+v", name, d.Completion)
	}
}

func TestParseStatusIntervalTakesLastDocument(t *testing.T) {
	docs, raws, _, err := ParseOutputs(bytes.NewReader(load(t, "status-interval.json")))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 4 || len(raws) != 4 {
		t.Fatalf("docs = %d, want 4", len(docs))
	}
	for i := 1; i < len(docs); i++ {
		if value(docs[i].Jobs[0].Read.TotalIOs) < value(docs[i-1].Jobs[0].Read.TotalIOs) {
			t.Errorf("status documents are not cumulative at %d", i)
		}
	}
}

func TestParseSkipsNoiseAroundJSON(t *testing.T) {
	in := "fio: cache invalidation of /dev/xvdb failed: Permission denied\n" + string(load(t, "libaio-randread.json")) + "trailing words\n"
	docs, _, noise, err := ParseOutputs(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) != 1 || len(noise) != 2 || !strings.Contains(noise[0], "cache invalidation") {
		t.Fatalf("docs=%d noise=%q", len(docs), noise)
	}
}

func TestParseTruncatedDocumentIsAnError(t *testing.T) {
	b := load(t, "libaio-randread.json")
	if _, _, _, err := ParseOutputs(bytes.NewReader(b[:len(b)/2])); err == nil {
		t.Fatal("truncated JSON parsed")
	}
}

func TestFailedJobCarriesErrno(t *testing.T) {
	out, _ := parseOne(t, "enospc.json")
	r := ToResult(out.AllJobs()[0])
	if r.Status != result.StatusFailed || !strings.Contains(r.Error, "no space left on device") {
		t.Fatalf("status %s error %q", r.Status, r.Error)
	}
	_, _, noise, err := ParseOutputs(bytes.NewReader(load(t, "enospc.json")))
	if err != nil {
		t.Fatal(err)
	}
	msg := failureMessage(&Outcome{Final: out, Noise: noise, Stderr: string(load(t, "enospc.stderr"))}, os.ErrInvalid)
	if !strings.Contains(msg, "No space left on device") || !strings.Contains(msg, "error 28") {
		t.Errorf("failure message lacks fio's words: %q", msg)
	}
}

func TestMetricMixedAddsDirections(t *testing.T) {
	out, _ := parseOne(t, "libaio-randrw70.json")
	r := ToResult(out.AllJobs()[0])
	iops, _ := r.Metric(result.MetricIOPS)
	if want := 42254.745255 + 18022.977023; iops != want {
		t.Errorf("iops = %v, want %v", iops, want)
	}
	p99, _ := r.Metric(result.MetricLatP99)
	if p99 != 276480 {
		t.Errorf("p99 = %v, want the worse direction's 276480", p99)
	}
}
