package render_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/golden"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
)

func TestAppFitGolden(t *testing.T) {
	clients := "one client on node-a, one on node-b"
	sem := func(name, outcome, seen string) result.Result {
		l := map[string]string{}
		result.LabelCheckOutcome.Set(l, outcome)
		result.LabelCheckReason.Set(l, seen)
		result.LabelAppClients.Set(l, clients)
		return result.Result{RunID: "r1", Target: "k8s:netfs", Round: result.RoundApp, Workload: "appfit:" + name, Labels: l}
	}
	sqlite := func(journal, sync, clients, flushes, integrity string, rate float64, p50, p99 time.Duration) result.Result {
		l := map[string]string{}
		result.LabelSQLiteJournal.Set(l, journal)
		result.LabelSQLiteSynchronous.Set(l, sync)
		result.LabelSQLiteClients.Set(l, clients)
		if flushes != "" {
			result.LabelFlushesPerCommit.Set(l, flushes)
		}
		result.LabelSQLiteIntegrity.Set(l, integrity)
		return result.Result{RunID: "r1", Target: "k8s:netfs", Round: result.RoundApp, Workload: "sqlite:" + journal + "-" + sync, Labels: l,
			Write: &result.Direction{IOPS: rate, Completion: result.Latency{Percentiles: []result.Percentile{{P: 50, Value: p50}, {P: 99, Value: p99}}}}}
	}
	results := []result.Result{
		sem("fcntl-lock", "broken", "both clients held the same write lock"),
		sem("fsync-read-back", "works", "the second client read back the 4096 KiB written and fsynced by the first"),
		sqlite("wal", "full", "1", "", "ok", 212, 3*time.Millisecond, 9800*time.Microsecond),
		sqlite("delete", "full", "1", "4.20", "ok", 61, 12*time.Millisecond, 40*time.Millisecond),
		sqlite("wal", "full", "2", "", "ok; 12 committed rows missing", 150, 4*time.Millisecond, 30*time.Millisecond),
	}
	var b bytes.Buffer
	if err := render.AppFit(&b, analysis.AppReportOf(results)); err != nil {
		t.Fatal(err)
	}
	golden.Compare(t, filepath.Join("testdata", "appfit.txt"), b.Bytes())
	b.Reset()
	if err := render.AppFit(&b, analysis.AppReportOf(nil)); err != nil || b.Len() != 0 {
		t.Errorf("a run without app results wrote %q, %v", b.String(), err)
	}
}
