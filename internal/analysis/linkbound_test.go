package analysis

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func netSend(from, to string, bps float64) result.Result {
	return result.Result{Round: result.RoundNetwork, Status: result.StatusComplete, Workload: result.WorkloadTCPSend,
		Labels: map[string]string{"net_from": from, "net_to": to, "network": "host"}, Write: &result.Direction{BytesPerSec: bps}}
}

func TestWithMeasuredLinks(t *testing.T) {
	unclear := &result.Attribution{LimitedBy: "unclear", Evidence: "nothing saturated: CPU 50% busy, eth0 at 8% of its 10 Gbit/s link"}
	net := []result.Result{netSend("n1", "n3", 119.4e6), netSend("n2", "n3", 119.6e6), netSend("n1", "n2", 119.5e6),
		netSend("n3", "n1", 119.2e6)}
	tests := []struct {
		name   string
		r      result.Result
		want   string // "" = attribution unchanged
		phrase string
	}{
		{"netfs write at the link to its server", result.Result{Workload: "seq-write", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1", "replica_nodes": "n3"}, Write: &result.Direction{BytesPerSec: 119.0e6}},
			"network", "100% of the link n1 -> n3"},
		{"no server named: the node's slowest matching link", result.Result{Workload: "seq-write", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1"}, Write: &result.Direction{BytesPerSec: 118e6}}, "network", "n1 -> n3"},
		{"client-side, two remote copies: half the link", result.Result{Workload: "seq-write", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1", "replica_nodes": "n2,n3", "replicas": "2", "replication_model": "client"},
			Write:  &result.Direction{BytesPerSec: 58e6}}, "network", "x 2 copies"},
		{"primary-copy: one copy leaves the client", result.Result{Workload: "seq-write", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1", "replica_nodes": "n2,n3", "replicas": "3", "replication_model": "primary"},
			Write:  &result.Direction{BytesPerSec: 58e6}}, "", ""},
		{"read from the server", result.Result{Workload: "seq-read", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1", "replica_nodes": "n3"}, Read: &result.Direction{BytesPerSec: 117e6}}, "network", "read 117 MB/s is 98% of the link n3 -> n1"},
		{"well under the link", result.Result{Workload: "seq-write", Status: result.StatusComplete, Bottleneck: unclear,
			Labels: map[string]string{"node": "n1", "replica_nodes": "n3"}, Write: &result.Direction{BytesPerSec: 80e6}}, "", ""},
		{"a saturated CPU stays the answer", result.Result{Workload: "seq-write", Status: result.StatusComplete,
			Bottleneck: &result.Attribution{LimitedBy: "cpu", Evidence: "CPU 97% busy"},
			Labels:     map[string]string{"node": "n1", "replica_nodes": "n3"}, Write: &result.Direction{BytesPerSec: 119e6}}, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append(append([]result.Result{}, net...), tt.r)
			out := WithMeasuredLinks(in, LinkMatrices(in))
			got := out[len(out)-1].Bottleneck
			if in[len(in)-1].Bottleneck != tt.r.Bottleneck {
				t.Fatal("the input was changed")
			}
			if tt.want == "" {
				if got != tt.r.Bottleneck {
					t.Errorf("attribution replaced: %+v", got)
				}
				return
			}
			if got == nil || got.LimitedBy != tt.want || !strings.Contains(got.Evidence, tt.phrase) {
				t.Errorf("got %+v, want %s with %q", got, tt.want, tt.phrase)
			}
		})
	}
}
