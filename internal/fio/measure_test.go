package fio

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/testenv"
)

func steadyWorkload(t *testing.T, yamlSS string) spec.Workload {
	t.Helper()
	s, err := spec.Parse([]byte(`name: t
workloads:
  - name: rr
    rw: randread
    bs: 4KiB
    size: 16MiB
    ioengine: psync
    steady_state: `+yamlSS+"\n"), "test")
	if err != nil {
		t.Fatal(err)
	}
	return s.Workloads[0]
}

func TestSteadyStateOptions(t *testing.T) {
	cases := []struct {
		name, ss string
		want     []string
		absent   []string
	}{
		{"defaults", "{}", []string{"time_based=1", "runtime=300", "ss=iops_slope:1%", "ss_dur=10", "ss_ramp=2"}, []string{"ss_interval"}},
		{"bandwidth deviation", "{metric: bw, deviation: 5%, window: 30s, ramp: 0s, max_runtime: 2m}", []string{"ss=bw:5%", "ss_dur=30", "runtime=120"}, []string{"ss_interval"}},
		{"slow device", "{interval: 5s, window: 60s}", []string{"ss_interval=5", "ss_dur=60"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			job := FromWorkload(steadyWorkload(t, c.ss), File{Name: "f"}, "").String()
			for _, w := range c.want {
				if !strings.Contains(job, w+"\n") {
					t.Errorf("job lacks %s:\n%s", w, job)
				}
			}
			for _, a := range c.absent {
				if strings.Contains(job, a) {
					t.Errorf("job has %s:\n%s", a, job)
				}
			}
			if !strings.Contains(job, "ss_interval") {
				fioAccepts(t, job)
			}
		})
	}
}

func TestParseRecordedSteadyState(t *testing.T) {
	data, err := os.ReadFile("testdata/steadystate-attained.json")
	if err != nil {
		t.Fatal(err)
	}
	docs, _, _, err := ParseOutputs(strings.NewReader(string(data)))
	if err != nil || len(docs) != 1 {
		t.Fatalf("%d docs, %v", len(docs), err)
	}
	r := ToResult(docs[0].Jobs[0])
	ss := r.SteadyState
	if ss == nil || !ss.Reached || ss.Criterion != "iops_slope:2%" || ss.Window != 5*time.Second || ss.After != 7472*time.Millisecond || ss.Measured != "-1.243%" {
		t.Fatalf("steady state %+v", ss)
	}
	// A job without ss has no steady-state record.
	plain, _ := os.ReadFile("testdata/libaio-randread.json")
	docs, _, _, _ = ParseOutputs(strings.NewReader(string(plain)))
	if r := ToResult(docs[0].AllJobs()[0]); r.SteadyState != nil {
		t.Errorf("plain job has steady state %+v", r.SteadyState)
	}
}

// Real fio on a directory: a loose criterion is reached well before the
// maximum runtime, an impossible one runs to the maximum and says so.
func TestSteadyStateRealFio(t *testing.T) {
	testenv.Measures(t)
	testenv.Fio(t)
	cases := []struct {
		name    string
		ss      string
		reached bool
	}{
		{"reached", "{slope: 50%, window: 3s, ramp: 1s, max_runtime: 30s}", true},
		{"never", "{deviation: 0.0001%, window: 3s, ramp: 1s, max_runtime: 6s}", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			w := steadyWorkload(t, c.ss)
			*w.Direct = false
			fr := Runner{Cmder: execx.Local{}, Dir: dir}
			out, err := fr.Run(context.Background(), FromWorkload(w, File{Name: "f.dat"}, ""), nil)
			if err != nil {
				t.Fatal(err)
			}
			r := ToResult(out.Final.AllJobs()[0])
			ss := r.SteadyState
			if ss == nil || ss.Reached != c.reached {
				t.Fatalf("steady state %+v, want reached=%v", ss, c.reached)
			}
			if c.reached && (ss.After < 4*time.Second || ss.After > 20*time.Second) {
				t.Errorf("reached after %s: want between ramp+window (4s) and well before 30s", ss.After)
			}
			if !c.reached && (ss.After < 5500*time.Millisecond || ss.After > 7*time.Second) {
				t.Errorf("not reached, ran %s: want the 6s maximum", ss.After)
			}
		})
	}
}

func TestParseBandwidthLog(t *testing.T) {
	data, err := os.ReadFile("testdata/bw-randread.log")
	if err != nil {
		t.Fatal(err)
	}
	reads, err := ParseBandwidthLog(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(reads) < 10 || reads[0].At != 500*time.Millisecond || reads[0].BytesPerSec != 59016*1024 {
		t.Fatalf("%d samples, first %+v", len(reads), reads[0])
	}
	if writes, _ := ParseBandwidthLog(data, 1); len(writes) != 0 {
		t.Errorf("%d write samples in a read log", len(writes))
	}
	for _, bad := range []string{"500, 12\n", "x, 1, 0, 4096\n"} {
		if _, err := ParseBandwidthLog([]byte(bad), 0); err == nil || !strings.Contains(err.Error(), "line 1") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
	merged := MergeBandwidthLogs([][]BandwidthSample{reads[:3], reads[:2]})
	if len(merged) != 3 || merged[0].BytesPerSec != 2*reads[0].BytesPerSec || merged[2].BytesPerSec != reads[2].BytesPerSec {
		t.Errorf("merged %+v", merged)
	}
}

func TestBandwidthLogOptions(t *testing.T) {
	s, err := spec.Builtin("sustained")
	if err != nil {
		t.Fatal(err)
	}
	job := FromWorkload(s.Workloads[0], File{Name: "f"}, "").String()
	for _, w := range []string{"write_bw_log=storbench-sustained-write\n", "log_avg_msec=1000\n", "runtime=600\n"} {
		if !strings.Contains(job, w) {
			t.Errorf("job lacks %q:\n%s", w, job)
		}
	}
	if strings.Contains(job, "time_based") {
		t.Errorf("sustained write is time-based:\n%s", job)
	}
	if got := BandwidthLogFile("a b/c", 2); got != "storbench-a_b_c_bw.2.log" || filepath.Base(got) != got {
		t.Errorf("log file %q", got)
	}
}
