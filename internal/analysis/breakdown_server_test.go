package analysis

import (
	"strings"
	"testing"

	"github.com/storbench/storbench/internal/result"
)

func TestServerBreakdowns(t *testing.T) {
	net := []result.Result{netSend("n1", "n2", 119.4e6), netSend("n2", "n1", 119.0e6), netSend("n1", "n3", 118.0e6)}
	nas := func(bps float64, labels map[string]string) result.Result {
		l := map[string]string{"node": "n1", "volume_server": "192.168.1.20"}
		for k, v := range labels {
			l[k] = v
		}
		return result.Result{Target: "k8s:nfs", Workload: "seq-write", Status: result.StatusComplete, Labels: l, Write: &result.Direction{BytesPerSec: bps}}
	}
	tests := []struct {
		name      string
		r         result.Result
		limitedBy string
		phrase    string
	}{
		{"at the node's link", nas(117e6, nil), BoundNodeLink, "the node's link 119 MB/s"},
		{"the NAS's link, measured, binds", nas(24e6, map[string]string{"server_link_bps": "25000000"}), BoundServerLink, "the server's link 25 MB/s"},
		{"the NAS's link not measured", nas(24e6, nil), BoundServerSide, "iperf3 -s on 192.168.1.20"},
		{"the NAS itself", nas(8e6, map[string]string{"server_link_bps": "117000000"}), BoundServer, "limited by the server (its disks"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append(append([]result.Result{}, net...), tt.r)
			bs := ServerBreakdowns(in, LinkMatrices(in))
			if len(bs) != 1 {
				t.Fatalf("%d breakdowns", len(bs))
			}
			b := bs[0]
			if b.LimitedBy != tt.limitedBy || !strings.Contains(b.Summary, tt.phrase) || b.Remote[0] != "192.168.1.20" {
				t.Errorf("limited by %q (want %q); summary %q (want %q)", b.LimitedBy, tt.limitedBy, b.Summary, tt.phrase)
			}
		})
	}
	// The server in the network round (reached at its address), its own
	// storage measured: the path to it and its disk join the breakdown,
	// and its link is no longer the node's.
	withServer := append(append([]result.Result{}, net...),
		netSendTo("n1", "nas", "192.168.1.20", 11.8e6), netSendTo("nas", "n1", "192.168.1.20", 11.9e6),
		result.Result{Target: "ssh://nas:/volume1/sb", Workload: "seq-write", Status: result.StatusComplete,
			Labels: map[string]string{"node": "nas"}, Write: &result.Direction{BytesPerSec: 180e6}})
	for _, tt := range []struct {
		name      string
		r         result.Result
		limitedBy string
		phrases   []string
	}{
		{"at the server's measured link", nas(11.5e6, nil), BoundServerLink, []string{"the node's link 119 MB/s", "the server's link 12 MB/s", "the server's own storage 180 MB/s"}},
		{"the server's disk binds", nas(50e6, nil), BoundServerDisk, nil},
		{"the server's protocol", nas(4e6, nil), BoundServerProtocol, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := append(append([]result.Result{}, withServer...), tt.r)
			if tt.name == "the server's disk binds" { // a fast path to the server, a slow disk on it
				in = append(append([]result.Result{}, net...), netSendTo("n1", "nas", "192.168.1.20", 118e6), tt.r,
					result.Result{Target: "ssh://nas:/volume1/sb", Workload: "seq-write", Status: result.StatusComplete,
						Labels: map[string]string{"node": "nas"}, Write: &result.Direction{BytesPerSec: 60e6}})
			}
			bs := ServerBreakdowns(in, LinkMatrices(in))
			if len(bs) != 1 {
				t.Fatalf("%d breakdowns", len(bs))
			}
			b := bs[0]
			if b.LimitedBy != tt.limitedBy {
				t.Errorf("limited by %q, want %q: %s", b.LimitedBy, tt.limitedBy, b.Summary)
			}
			for _, p := range tt.phrases {
				if !strings.Contains(b.Summary, p) {
					t.Errorf("summary %q lacks %q", b.Summary, p)
				}
			}
			if strings.Contains(b.Summary, "unmeasured: the link of server") {
				t.Errorf("the server's link is measured: %s", b.Summary)
			}
		})
	}

	// The path to a server as fast as the node measured at the node's own
	// link (a hair under it): the node's port holds both, so the node's
	// link binds, not the server's.
	in := append(append([]result.Result{}, net...), netSendTo("n1", "nas", "192.168.1.20", 117.5e6), nas(115e6, nil))
	if bs := ServerBreakdowns(in, LinkMatrices(in)); len(bs) != 1 || bs[0].LimitedBy != BoundNodeLink ||
		!strings.Contains(bs[0].Summary, "limited by the node's link") {
		t.Errorf("a path to the server at the node's link: %+v", bs)
	}

	// A server that is a node is the ordinary breakdown's, not this one's.
	r := nas(100e6, map[string]string{"replica_nodes": "n2"})
	if bs := ServerBreakdowns([]result.Result{r}, nil); len(bs) != 0 {
		t.Errorf("a node's server explained here: %+v", bs)
	}
}

// netSendTo is netSend with the address the sender connected to.
func netSendTo(from, to, addr string, bps float64) result.Result {
	r := netSend(from, to, bps)
	r.Labels["net_address"] = addr
	return r
}
