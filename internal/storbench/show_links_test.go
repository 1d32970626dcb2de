package storbench_test

import (
	"context"
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/storbench"
)

// A run as the issue found it: the network round measured 119 MB/s on
// every pair, and the netfs write ran at 119 MB/s on each node with
// "limited by unclear" from the host's counters. Show and the run's report
// name the measured link instead; a volume served from outside the
// cluster gets its own breakdown.
func TestShowNamesTheMeasuredLink(t *testing.T) {
	st := sqliteStore(t)
	unclear := &result.Attribution{LimitedBy: "unclear", Evidence: "nothing saturated: CPU 50% busy, eth0 at 8% of its 10 Gbit/s link"}
	var rs []result.Result
	for _, p := range [][2]string{{"n1", "n3"}, {"n2", "n3"}, {"n1", "n2"}, {"n2", "n1"}} {
		rs = append(rs, result.Result{Target: "network", Round: result.RoundNetwork, Workload: result.WorkloadTCPSend, Status: result.StatusComplete,
			Started: started, Finished: started, Write: &result.Direction{BytesPerSec: 119.4e6},
			Labels: map[string]string{"net_from": p[0], "net_to": p[1], "network": "host"}})
	}
	for _, n := range []string{"n1", "n2"} {
		rs = append(rs, result.Result{Target: "k8s:netfs@" + n, Round: "isolated", Workload: "seq-write", Status: result.StatusComplete,
			Started: started, Finished: started, Write: &result.Direction{BytesPerSec: 119.0e6}, Bottleneck: unclear,
			Labels: map[string]string{"node": n, "storage_class": "netfs", "replica_nodes": "n3"}})
	}
	rs = append(rs, result.Result{Target: "k8s:nas@n1", Round: "isolated", Workload: "seq-write", Status: result.StatusComplete,
		Started: started, Finished: started, Write: &result.Direction{BytesPerSec: 24e6},
		Labels: map[string]string{"node": "n1", "storage_class": "nas", "volume_server": "192.168.1.20", "replication_model": "server"}})
	id := storeRun(t, st, result.Run{ID: "20261122-120000-cccc", Started: started}, rs)
	ctx := context.Background()

	detail, err := storbench.Show(ctx, st, storbench.ShowRequest{RunID: id})
	if err != nil {
		t.Fatal(err)
	}
	outcome, err := storbench.LoadRunOutcome(ctx, st, detail.Run)
	if err != nil {
		t.Fatal(err)
	}
	for _, results := range [][]result.Result{detail.Results, outcome.Results} {
		named := 0
		for _, r := range results {
			if r.Round == result.RoundNetwork || r.Target == "k8s:nas@n1" {
				continue
			}
			if r.Bottleneck == nil || r.Bottleneck.LimitedBy != "network" || !strings.Contains(r.Bottleneck.Evidence, result.LabelNode.Of(r.Labels)+" -> n3") {
				t.Errorf("%s: %+v, want the link to n3 named", r.Target, r.Bottleneck)
			}
			named++
		}
		if named != 2 {
			t.Errorf("%d netfs results", named)
		}
	}
	var nas *analysis.Breakdown
	for i, b := range detail.Breakdowns {
		if b.Target == "k8s:nas@n1" {
			nas = &detail.Breakdowns[i]
		}
	}
	if nas == nil || nas.LimitedBy != analysis.BoundServerSide || !strings.Contains(nas.Summary, "192.168.1.20") {
		t.Errorf("the NAS's breakdown: %+v", nas)
	}
}
