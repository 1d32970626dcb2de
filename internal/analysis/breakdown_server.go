package analysis

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// Parts and bounds of a breakdown of a volume served from outside the
// cluster (a NAS): the data crosses the node's link, then the server's.
const (
	PartNodeLink    = "the node's link"
	PartServerLink  = "the server's link"
	PartServerDisk  = "the server's own storage"
	BoundNodeLink   = "the node's link"
	BoundServerLink = "the server's link"
	BoundServerDisk = "the server's own storage"
	// BoundServer: under half of the lowest link, the server itself (its
	// disks, CPU, protocol) takes more than the links let through.
	BoundServer = "the server (its disks, CPU or protocol)"
	// BoundServerSide: the node's link does not bind and the server's is
	// not measured: the server's link or the server itself.
	BoundServerSide = "the server's side (its link or the server itself; its link is not measured)"
	// BoundServerProtocol: under half of the lowest part with the server's
	// own storage measured faster: its protocol or CPU.
	BoundServerProtocol = "the server's protocol or CPU (its own storage measured faster)"
)

// NodeLinkBindsPercent is the share of the node's measured link from
// which the node's link, not the server's side, is what binds.
const NodeLinkBindsPercent = 90

// ServerBreakdowns explains results on a network volume whose server is
// not a node of the cluster (result.LabelVolumeServer set, no replica
// nodes): the node's link, as the network round measured it from (writes)
// or to (reads) the node; the server's link, as the network round measured
// it between the node and the server when the server took part in the
// round (an ssh:// target of the run, found by its name or the address it
// was reached at), else as result.LabelServerLinkBPS gives it; and the
// server's own storage when the run measured it there (the same workload
// on the server's target). The lowest binds, or the server itself (its
// CPU, protocol, or its disks when they were not measured) when the result
// is under half of it.
func ServerBreakdowns(results []result.Result, links []LinkMatrix) []Breakdown {
	m := hostMatrix(links)
	var out []Breakdown
	for _, r := range results {
		server := result.LabelVolumeServer.Of(r.Labels)
		if r.Round == result.RoundNetwork || r.Status != result.StatusComplete || server == "" || result.LabelReplicaNodes.Of(r.Labels) != "" {
			continue
		}
		if b, ok := serverBreakdown(r, server, m, results); ok {
			out = append(out, b)
		}
	}
	return out
}

func serverBreakdown(r result.Result, server string, m *LinkMatrix, all []result.Result) (Breakdown, bool) {
	dir, name := largerDirection(r)
	b := Breakdown{Target: r.Target, Workload: r.Workload, Round: r.Round, Node: nodeOf(r), Direction: name,
		Remote: []string{server}, Replicas: 1, RemoteCopies: 1}
	if dir == nil || dir.BytesPerSec <= 0 {
		return Breakdown{}, false
	}
	b.MeasuredBPS = dir.BytesPerSec
	sn := serverNode(all, server)
	if l := nodeLink(m, b.Node, b.Direction, sn); l != nil {
		b.Parts = append(b.Parts, BreakdownPart{PartNodeLink, l.SendBytesPerSec, fmt.Sprintf("network round, %s -> %s (the fastest link measured %s the node)", l.From, l.To, map[string]string{"write": "from", "read": "to"}[b.Direction])})
	} else {
		b.Missing = append(b.Missing, fmt.Sprintf("the link of node %s: not measured (run with --rounds network,... and another node)", b.Node))
	}
	if l := pathTo(m, b.Node, sn, b.Direction); l != nil {
		b.Parts = append(b.Parts, BreakdownPart{PartServerLink, l.SendBytesPerSec, fmt.Sprintf("network round, %s -> %s (the path to the server)", l.From, l.To)})
	} else if v, err := strconv.ParseFloat(result.LabelServerLinkBPS.Of(r.Labels), 64); err == nil && v > 0 {
		b.Parts = append(b.Parts, BreakdownPart{PartServerLink, v, "label " + string(result.LabelServerLinkBPS)})
	} else {
		b.Missing = append(b.Missing, fmt.Sprintf("the link of server %s: not measured (add the server to the run as an ssh:// target with --rounds network,...; or iperf3 -s on %s, iperf3 -c %s from node %s and --label %s=BYTES_PER_SEC)",
			server, server, server, b.Node, result.LabelServerLinkBPS))
	}
	if d := serverDisk(all, r, sn, b.Direction); d != nil {
		b.Parts = append(b.Parts, BreakdownPart{PartServerDisk, d.bps, fmt.Sprintf("%s on %s, the server's own target", r.Workload, d.target)})
	}
	b.finishServer(server)
	return b, true
}

// serverNode is the network round's name for the volume's server: a node
// named server, or the node the round reached at that address; "" when
// the server took no part in the round.
func serverNode(all []result.Result, server string) string {
	for _, r := range all {
		if r.Round != result.RoundNetwork {
			continue
		}
		to, from := result.LabelNetTo.Of(r.Labels), result.LabelNetFrom.Of(r.Labels)
		if to == server || from == server {
			return server
		}
		if result.LabelNetAddress.Of(r.Labels) == server && to != "" {
			return to
		}
	}
	return ""
}

// pathTo is the measured link from node to the server (writes) or back
// (reads).
func pathTo(m *LinkMatrix, node, server, direction string) *Link {
	if m == nil || server == "" {
		return nil
	}
	l := m.Link(node, server)
	if direction == "read" {
		l = m.Link(server, node)
	}
	if l == nil || l.SendBytesPerSec <= 0 {
		return nil
	}
	return l
}

type diskFigure struct {
	target string
	bps    float64
}

// serverDisk is the same workload, in the same round, on the server's own
// storage (a target of the run on the server node that is not itself a
// network volume), in the breakdown's direction.
func serverDisk(all []result.Result, r result.Result, server, direction string) *diskFigure {
	if server == "" {
		return nil
	}
	for _, o := range all {
		if o.Round != r.Round || o.Workload != r.Workload || o.Status != result.StatusComplete || nodeOf(o) != server ||
			result.LabelVolumeServer.Of(o.Labels) != "" {
			continue
		}
		d := o.Write
		if direction == "read" {
			d = o.Read
		}
		if d != nil && d.BytesPerSec > 0 {
			return &diskFigure{target: o.Target, bps: d.BytesPerSec}
		}
	}
	return nil
}

// nodeLink is the fastest measured link from (write) or to (read) node,
// the server aside: what the node's own port allows.
func nodeLink(m *LinkMatrix, node, direction, server string) *Link {
	if m == nil {
		return nil
	}
	var best *Link
	for _, other := range m.Nodes {
		l := m.Link(node, other)
		if direction == "read" {
			l = m.Link(other, node)
		}
		if other != node && other != server && l != nil && l.SendBytesPerSec > 0 && (best == nil || l.SendBytesPerSec > best.SendBytesPerSec) {
			best = l
		}
	}
	return best
}

func (b *Breakdown) finishServer(server string) {
	words := []string{fmt.Sprintf("%s %.0f MB/s from server %s (outside the cluster)", b.Workload, b.MeasuredBPS/1e6, server)}
	left := 0.0
	for _, p := range b.Parts {
		if b.CeilingBPS == 0 || p.CeilingBPS < b.CeilingBPS {
			b.CeilingBPS, b.LimitedBy = p.CeilingBPS, map[string]string{PartNodeLink: BoundNodeLink, PartServerLink: BoundServerLink, PartServerDisk: BoundServerDisk}[p.Name]
		}
		next := p.CeilingBPS
		if left > 0 {
			next = min(left, p.CeilingBPS)
		}
		b.Steps = append(b.Steps, BreakdownStep{Name: p.Name, LeftBPS: next, LostBPS: max(left-next, 0)})
		left = next
		words = append(words, fmt.Sprintf("%s %.0f MB/s", p.Name, p.CeilingBPS/1e6))
	}
	if b.CeilingBPS == 0 {
		b.Summary = words[0] + ": no ceiling known (" + strings.Join(b.Missing, "; ") + ")"
		return
	}
	b.Percent = b.MeasuredBPS / b.CeilingBPS * 100
	b.nodePortBinds()
	b.Lowest = b.LimitedBy
	serverMeasured := slices.ContainsFunc(b.Parts, func(p BreakdownPart) bool { return p.Name == PartServerLink })
	switch {
	case !serverMeasured && b.Percent < NodeLinkBindsPercent:
		b.LimitedBy = BoundServerSide
	case b.Percent < EngineBoundPercent && slices.ContainsFunc(b.Parts, func(p BreakdownPart) bool { return p.Name == PartServerDisk }):
		b.LimitedBy = BoundServerProtocol
	case b.Percent < EngineBoundPercent:
		b.LimitedBy = BoundServer
	}
	b.Steps = append(b.Steps, BreakdownStep{Name: PartRest, LeftBPS: b.MeasuredBPS, LostBPS: left - b.MeasuredBPS})
	words = append(words, fmt.Sprintf("limited by %s, %.0f%% of the ceiling", b.LimitedBy, b.Percent))
	if len(b.Missing) > 0 {
		words = append(words, "unmeasured: "+strings.Join(b.Missing, "; "))
	}
	b.Summary = words[0] + ": " + strings.Join(words[1:], "; ")
}

// nodePortBinds: the path to the server crosses the node's port too, so
// measured at NodeLinkBindsPercent or more of the node's own link it is
// the node's port that holds it (a server's port as fast or faster
// measures the same), not the server's: the node's link binds.
func (b *Breakdown) nodePortBinds() {
	if b.LimitedBy != BoundServerLink {
		return
	}
	for _, p := range b.Parts {
		if p.Name == PartNodeLink && b.CeilingBPS >= p.CeilingBPS*NodeLinkBindsPercent/100 {
			b.LimitedBy = BoundNodeLink
		}
	}
}

// hostMatrix is the host network's matrix where it was measured, else the
// first; nil without any.
func hostMatrix(links []LinkMatrix) *LinkMatrix {
	var m *LinkMatrix
	for i := range links {
		if m == nil || links[i].Network == "host" {
			m = &links[i]
		}
	}
	return m
}

// largerDirection is the result's read or write, whichever moved more
// bytes per second ("write" on a tie), and its name.
func largerDirection(r result.Result) (*result.Direction, string) {
	if r.Read != nil && (r.Write == nil || r.Read.BytesPerSec > r.Write.BytesPerSec) {
		return r.Read, "read"
	}
	return r.Write, "write"
}
