package analysis

import (
	"fmt"
	"slices"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// LimitedByMeasuredLink is the attribution of a result whose throughput
// equals a link the same run's network round measured.
const LimitedByMeasuredLink = "network"

// A result within this band of a measured link (as a share of it, in
// percent) is that link's: under it something else may bind; above it the
// link figure was noisy or the result cached.
const (
	MeasuredLinkLowPercent  = 90
	MeasuredLinkHighPercent = 105
)

// WithMeasuredLinks returns results with the attribution of each result
// whose throughput equals a link the network round measured from (a
// write) or to (a read) its node replaced by that link: the host's
// counters see a 10 Gbit/s NIC at 8% when the path to the server is a
// 1 Gbit/s switch port. The links are those to the result's replica or
// server nodes when it names them (divided among the remote copies a
// client-side replicated write sends), else every link of its node. The
// input is not changed.
func WithMeasuredLinks(results []result.Result, links []LinkMatrix) []result.Result {
	m := hostMatrix(links)
	if m == nil {
		return results
	}
	out := make([]result.Result, len(results))
	copy(out, results)
	for i := range out {
		if a := measuredLinkBound(out[i], m); a != nil {
			out[i].Bottleneck = a
		}
	}
	return out
}

func measuredLinkBound(r result.Result, m *LinkMatrix) *result.Attribution {
	if r.Round == result.RoundNetwork || r.Status != result.StatusComplete {
		return nil
	}
	if r.Bottleneck != nil && r.Bottleneck.LimitedBy != "unclear" && r.Bottleneck.LimitedBy != "network" {
		return nil // a CPU, device or bus at its limit already explains it
	}
	node := nodeOf(r)
	dir, name := largerDirection(r)
	if node == "" || dir == nil || dir.BytesPerSec <= 0 {
		return nil
	}
	remote, copies := remoteNodes(r, node)
	if name == "read" || len(remote) == 0 || !sendsEveryCopy(r) {
		copies = 1
	}
	var best *Link
	for _, other := range m.Nodes {
		if other == node || (len(remote) > 0 && !slices.Contains(remote, other)) {
			continue
		}
		l := m.Link(node, other)
		if name == "read" {
			l = m.Link(other, node)
		}
		if l == nil || l.SendBytesPerSec <= 0 {
			continue
		}
		share := dir.BytesPerSec * float64(copies) / l.SendBytesPerSec * 100
		if share >= MeasuredLinkLowPercent && share <= MeasuredLinkHighPercent && (best == nil || l.SendBytesPerSec < best.SendBytesPerSec) {
			best = l
		}
	}
	if best == nil {
		return nil
	}
	ev := fmt.Sprintf("%s %.0f MB/s is %.0f%% of the link %s -> %s the network round measured (%.0f MB/s)",
		name, dir.BytesPerSec/1e6, dir.BytesPerSec*float64(copies)/best.SendBytesPerSec*100, best.From, best.To, best.SendBytesPerSec/1e6)
	if copies > 1 {
		ev = fmt.Sprintf("%s %.0f MB/s x %d copies sent by the client is %.0f%% of the link %s -> %s the network round measured (%.0f MB/s)",
			name, dir.BytesPerSec/1e6, copies, dir.BytesPerSec*float64(copies)/best.SendBytesPerSec*100, best.From, best.To, best.SendBytesPerSec/1e6)
	}
	if r.Bottleneck != nil {
		ev += "; the host's counters said " + r.Bottleneck.LimitedBy + ": " + r.Bottleneck.Evidence
	}
	return &result.Attribution{LimitedBy: LimitedByMeasuredLink, Evidence: ev}
}

// remoteNodes are the nodes r's data crosses the network to, and how many
// copies go there.
func remoteNodes(r result.Result, node string) ([]string, int) {
	var remote []string
	named := 0
	for _, n := range strings.Split(result.LabelReplicaNodes.Of(r.Labels), ",") {
		if n = strings.TrimSpace(n); n != "" {
			named++
			if n != node {
				remote = append(remote, n)
			}
		}
	}
	copies := len(remote)
	if replicas, _ := replicasOf(r); replicas > named && named > 0 {
		copies += replicas - named
	}
	return remote, max(copies, 1)
}

// sendsEveryCopy: the client writes each copy itself (the model is
// client-side, or not given: the breakdown's default).
func sendsEveryCopy(r result.Result) bool {
	m := result.LabelReplicationModel.Of(r.Labels)
	return m == "" || m == result.ReplicationClient
}
