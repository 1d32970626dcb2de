package metrics_test

import (
	"context"
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

var t0 = time.Date(2026, 11, 20, 3, 0, 0, 0, time.UTC)

// figure is one stored result's numbers, in the units fio reports.
type figure struct {
	iops, bw                float64
	p50, p90, p99, p999     time.Duration
	mean                    time.Duration
	syncP99                 time.Duration
	write                   bool
	target, round, workload string
}

// addRun stores a run of figures on node-1 (the target "fast/node-1",
// storage class fast) started at start, one result per figure.
func addRun(t *testing.T, st store.Store, id, suite string, start time.Time, figs ...figure) {
	t.Helper()
	ctx := context.Background()
	run := &result.Run{ID: id, Suite: suite, Source: "storbench", Status: result.StatusComplete, Started: start, Finished: start.Add(time.Minute)}
	if err := st.CreateRun(ctx, run); err != nil {
		t.Fatal(err)
	}
	for i, f := range figs {
		labels := map[string]string{}
		result.LabelHostname.Set(labels, "node-1")
		result.LabelNode.Set(labels, "node-1")
		result.LabelStorageClass.Set(labels, "fast")
		d := &result.Direction{IOPS: f.iops, BytesPerSec: f.bw, TotalIOs: 1000, Runtime: 10 * time.Second,
			Completion: result.Latency{Samples: 1000, Mean: f.mean, Percentiles: []result.Percentile{
				{P: 50, Value: f.p50}, {P: 90, Value: f.p90}, {P: 99, Value: f.p99}, {P: 99.9, Value: f.p999}}}}
		r := &result.Result{RunID: id, Target: f.target, Round: f.round, Repetition: i + 1, Workload: f.workload, Labels: labels,
			Status: result.StatusComplete, Started: start, Finished: start.Add(10 * time.Second)}
		if f.write {
			r.Write = d
		} else {
			r.Read = d
		}
		if f.syncP99 > 0 {
			r.Sync = &result.Latency{Samples: 1000, Percentiles: []result.Percentile{{P: 99, Value: f.syncP99}}}
		}
		if err := st.AddResult(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
}

// populate stores an older run and a newer one; the newer holds two
// repetitions of rand-read-4k-qd1, one parallel-round result and an
// etcd-fdatasync result with a 15 ms p99 (an etcd warning).
func populate(t *testing.T) (store.Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "results.db")
	st, err := store.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	const tgt = "fast/node-1"
	ms := time.Millisecond
	addRun(t, st, "20261120-030000-aaaa", "standard", t0,
		figure{target: tgt, round: result.RoundIsolated, workload: "rand-read-4k-qd1", iops: 500, bw: 2048000, p50: ms, p90: 2 * ms, p99: 9 * ms, p999: 20 * ms, mean: 2 * ms})
	addRun(t, st, "20261120-040000-bbbb", "standard", t0.Add(time.Hour),
		figure{target: tgt, round: result.RoundIsolated, workload: "rand-read-4k-qd1", iops: 1000, bw: 4096000, p50: ms / 2, p90: ms, p99: 3 * ms, p999: 7 * ms, mean: 800 * time.Microsecond},
		figure{target: tgt, round: result.RoundIsolated, workload: "rand-read-4k-qd1", iops: 1200, bw: 4915200, p50: ms / 2, p90: 2 * ms, p99: 5 * ms, p999: 9 * ms, mean: 1200 * time.Microsecond},
		figure{target: tgt, round: result.RoundParallel, workload: "rand-read-4k-qd1", iops: 800, bw: 3276800, p50: ms, p90: 2 * ms, p99: 6 * ms, p999: 10 * ms, mean: ms})
	addRun(t, st, "20261120-050000-cccc", "etcd", t0.Add(2*time.Hour),
		figure{target: tgt, round: result.RoundIsolated, workload: "etcd-fdatasync", write: true, iops: 300, bw: 690000, p50: ms, p90: 2 * ms, p99: 4 * ms, p999: 8 * ms, mean: ms, syncP99: 15 * ms})
	return st, path
}

// wantSeries are the series populate's database must give, in base units,
// worked out by hand from the figures above.
var wantSeries = map[string]float64{
	`storbench_iops{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:                             1100,
	`storbench_bandwidth_bytes_per_second{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:       4505600,
	`storbench_latency_seconds{hostname="node-1",node="node-1",quantile="0.5",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:   0.0005,
	`storbench_latency_seconds{hostname="node-1",node="node-1",quantile="0.9",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:   0.0015,
	`storbench_latency_seconds{hostname="node-1",node="node-1",quantile="0.99",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:  0.004,
	`storbench_latency_seconds{hostname="node-1",node="node-1",quantile="0.999",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`: 0.008,
	`storbench_latency_seconds_count{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:            2,
	`storbench_latency_seconds_sum{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:              0.002,
	`storbench_last_run_timestamp_seconds{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:       float64(t0.Add(time.Hour).Unix()),
	`storbench_iops{hostname="node-1",node="node-1",round="parallel",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:                             800,
	`storbench_latency_seconds{hostname="node-1",node="node-1",quantile="0.99",round="parallel",storage_class="fast",suite="standard",target="fast/node-1",workload="rand-read-4k-qd1"}`:  0.006,
	`storbench_iops{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="etcd",target="fast/node-1",workload="etcd-fdatasync"}`:                                   300,
	`storbench_sync_latency_p99_seconds{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="etcd",target="fast/node-1",workload="etcd-fdatasync"}`:               0.015,
	`storbench_last_run_timestamp_seconds{hostname="node-1",node="node-1",round="isolated",storage_class="fast",suite="etcd",target="fast/node-1",workload="etcd-fdatasync"}`:             float64(t0.Add(2 * time.Hour).Unix()),
	// 15 ms p99 fdatasync: warn (pass <= 10 ms, warn <= 20 ms).
	`storbench_verdict_status{for="etcd",hostname="node-1",node="node-1",round="isolated",storage_class="fast",target="fast/node-1"}`: 2,
}

// series parses the text format into "name{labels}" -> value, labels
// sorted by name as Prometheus prints them.
func series(t *testing.T, r io.Reader) map[string]float64 {
	t.Helper()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		t.Fatalf("parsing the exposition: %v", err)
	}
	out := map[string]float64{}
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			add := func(name string, extra map[string]string, v float64) {
				l := maps.Clone(labels)
				maps.Copy(l, extra)
				out[seriesKey(name, l)] = v
			}
			switch mf.GetType() {
			case dto.MetricType_GAUGE:
				add(name, nil, m.GetGauge().GetValue())
			case dto.MetricType_SUMMARY:
				for _, q := range m.GetSummary().GetQuantile() {
					add(name, map[string]string{"quantile": fmt.Sprint(q.GetQuantile())}, q.GetValue())
				}
				add(name+"_sum", nil, m.GetSummary().GetSampleSum())
				add(name+"_count", nil, float64(m.GetSummary().GetSampleCount()))
			default:
				add(name, nil, m.GetUntyped().GetValue())
			}
		}
	}
	return out
}

// seriesKey names a series as Prometheus does: an empty label is no label.
func seriesKey(name string, labels map[string]string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		if labels[k] == "" {
			continue
		}
		parts = append(parts, fmt.Sprintf("%s=%q", k, labels[k]))
	}
	return name + "{" + strings.Join(parts, ",") + "}"
}

// checkSeries compares got with every wanted series, to 1e-9 relative.
func checkSeries(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		v, ok := got[k]
		switch {
		case !ok:
			t.Errorf("missing %s", k)
		case !close(v, want[k]):
			t.Errorf("%s = %v, want %v", k, v, want[k])
		}
	}
}

func close(a, b float64) bool {
	d := a - b
	if d < 0 {
		d = -d
	}
	return d <= 1e-9*max(1, b, -b)
}
