package render

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

func TestResultChecks(t *testing.T) {
	results := []result.Result{
		{Workload: "rr", Repetition: 1, SteadyState: &result.SteadyState{Criterion: "iops_slope:0.5%", Reached: true, After: 41 * time.Second},
			CacheRisk: &result.CacheRisk{SpanBytes: 1 << 30}, Labels: map[string]string{string(result.LabelCacheRisk): "may measure cache: span 1.0 GiB fits in 23.5 GiB host RAM"}},
		{Workload: "rr", Repetition: 2, SteadyState: &result.SteadyState{Criterion: "iops_slope:0.5%", After: 5 * time.Minute},
			Labels: map[string]string{string(result.LabelRepeatPrecision): "3.2"}},
		{Workload: "sw", Repetition: 1, WriteCliff: &result.WriteCliff{AtBytes: 11.6e9, BeforeBytesPerSec: 480e6, AfterBytesPerSec: 92e6},
			Precondition: &result.Precondition{Passes: 2, Bytes: 1 << 30}},
		{Workload: "fuse", Repetition: 1, Labels: map[string]string{string(result.LabelSubmissionBound): "I/O done inside submission: write: each I/O took 3.016 ms inside io_submit"}},
	}
	var b bytes.Buffer
	if err := ResultChecks(&b, results); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"rr: steady state (iops_slope:0.5%) after 41s",
		"rr: may measure cache: span 1.0 GiB fits in 23.5 GiB host RAM",
		"rr (rep 2): NEVER reached steady state (iops_slope:0.5%) in 5m0s",
		"rr (rep 2): IOPS known to ±3.2% (95% confidence) after 2 runs",
		"sw: write cliff: 480 MB/s for the first 11.6 GB, then 92 MB/s",
		"sw: on a device preconditioned by 2 sequential passes of 1.0 GiB",
		"fuse: I/O done inside submission: write: each I/O took 3.016 ms inside io_submit",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	if err := ResultChecks(&b, []result.Result{{Workload: "plain"}}); err != nil || b.Len() != 0 {
		t.Errorf("plain result printed %q, %v", b.String(), err)
	}
}
