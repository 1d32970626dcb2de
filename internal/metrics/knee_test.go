package metrics_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/metrics"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// The newest sweep of a workload gives the knee series; each step's
// figures are ordinary series of its round.
func TestSweepKnee(t *testing.T) {
	ctx := context.Background()
	st, err := store.Open(ctx, filepath.Join(t.TempDir(), "results.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	const tgt, w = "fast/node-1", "rand-read-4k-qd1"
	step := func(n int, iops float64) figure {
		return figure{target: tgt, round: result.SweepRound(n), workload: w, iops: iops, bw: iops * 4096, p99: time.Millisecond}
	}
	addRun(t, st, "20261120-030000-aaaa", "sweep:"+w, t0, step(1, 1000), step(2, 1050))
	addRun(t, st, "20261120-040000-bbbb", "sweep:"+w, t0.Add(time.Hour), step(1, 1000), step(2, 1900), step(4, 3600), step(8, 3700))
	var buf bytes.Buffer
	if err := metrics.Export(ctx, st, &buf, metrics.Options{}); err != nil {
		t.Fatal(err)
	}
	labels := `{hostname="node-1",node="node-1",storage_class="fast",target="fast/node-1",workload="rand-read-4k-qd1"}`
	got := series(t, bytes.NewReader(buf.Bytes()))
	checkSeries(t, got, map[string]float64{
		"storbench_sweep_knee_clients" + labels: 4,
		"storbench_sweep_knee_iops" + labels:    3600,
		"storbench_sweep_max_clients" + labels:  8,
		`storbench_iops{hostname="node-1",node="node-1",round="sweep-4",storage_class="fast",suite="sweep:rand-read-4k-qd1",target="fast/node-1",workload="rand-read-4k-qd1"}`: 3600,
	})
	if n := strings.Count(buf.String(), "\nstorbench_sweep_knee_clients{"); n != 1 {
		t.Errorf("%d knee series, want the newest sweep's only:\n%s", n, buf.String())
	}
	promtoolCheck(t, buf.Bytes())
}
