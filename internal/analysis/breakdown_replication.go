package analysis

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/result"
)

// ReplicationModelOf says how r's copies travel, and why storbench thinks
// so: the label result.LabelReplicationModel when set, primary-copy for
// Ceph (its CSI driver, provisioner or an RBD target), else client-side
// (today's default: GlusterFS, Longhorn).
func ReplicationModelOf(r result.Result) (model, why string) {
	if m := result.LabelReplicationModel.Of(r.Labels); m != "" {
		return m, "label " + string(result.LabelReplicationModel)
	}
	for _, k := range []result.LabelKey{result.LabelCSIDriver, result.LabelProvisioner, result.LabelTargetKind} {
		if v := strings.ToLower(k.Of(r.Labels)); strings.Contains(v, "ceph") || v == "rbd" {
			return result.ReplicationPrimary, fmt.Sprintf("Ceph (%s %s): the client sends each write once, to the primary OSD, which forwards the copies", k, k.Of(r.Labels))
		}
	}
	return result.ReplicationClient, "the default: the client writes every copy (GlusterFS, Longhorn); set label " + string(result.LabelReplicationModel) + " otherwise"
}

// TrafficInput is what the per-link model needs for one write.
type TrafficInput struct {
	Model    string // a result.Replication* value
	Client   string // the node the writer ran on
	Replicas int
	// Hosts hold the copies (the OSD hosts, the bricks' nodes, the server).
	Hosts []string
	// PrimaryShare is each host's share of the writes it leads (primary
	// model): the PGs it is acting primary of, weighted by their bytes
	// where known. Absent: an even share.
	PrimaryShare map[string]float64
	// LinkBytesPerSec is each node's link capacity per direction; absent:
	// unknown, no ceiling for that link.
	LinkBytesPerSec map[string]float64
	// MeasuredCapacity is a node's capacity in one direction as measured
	// (node -> "tx"/"rx" -> bytes/s, the network round's fastest transfer
	// from or to the node), with CapacitySource naming the measurement;
	// it takes the place of LinkBytesPerSec, an interface's nominal speed,
	// where both are known (a shaped link, a veth's 10 Gbit/s).
	MeasuredCapacity map[string]map[string]float64
	CapacitySource   map[string]map[string]string
	// Seconds is how long the write ran, over which the measured bytes
	// were counted; 0: unknown, no link's utilisation is read.
	Seconds float64
	// InFlight is how many writes the client kept in flight (its iodepth
	// times its jobs, result.LabelInFlight); 0: unknown, no throughput at
	// that depth is predicted.
	InFlight int
}

// capacity is a node's capacity in direction dir and where it comes from.
func (in TrafficInput) capacity(node, dir string) (float64, string) {
	if c := in.MeasuredCapacity[node][dir]; c > 0 {
		return c, in.CapacitySource[node][dir]
	}
	if c := in.LinkBytesPerSec[node]; c > 0 {
		return c, "the interface's nominal speed"
	}
	return 0, ""
}

// LinkTraffic is one direction of one node's link: the bytes the model
// predicts on it per byte written, and what it measured.
type LinkTraffic struct {
	Node      string
	Direction string // "tx" (the node sends) or "rx"
	// PerPayload is the predicted bytes on the link per byte written.
	PerPayload float64
	// PredictedBytes and MeasuredBytes for the run's payload; MeasuredBytes
	// is 0 when the node's counters were not read.
	PredictedBytes, MeasuredBytes float64
	// CeilingBPS is the write throughput this link allows (capacity /
	// PerPayload); 0 when its capacity is unknown. CapacitySource says
	// where the capacity comes from: a measurement, or the interface's
	// nominal speed.
	CeilingBPS     float64
	CapacitySource string
	// UtilPercent is the measured bytes over the write's seconds against
	// the capacity: how full the link really ran; 0 when not known.
	UtilPercent float64
}

// SaturatedLinkPercent is the utilisation from which a link counts as
// full: the write waited for it (the node telemetry's network rule).
const SaturatedLinkPercent = 85

// PredictTraffic returns the bytes each link carries per byte written, in
// node order (client first), for in's replication model.
func PredictTraffic(in TrafficInput) []LinkTraffic {
	per := map[string]map[string]float64{} // node -> tx/rx -> per payload
	add := func(node, dir string, v float64) {
		if v <= 0 || node == "" {
			return
		}
		if per[node] == nil {
			per[node] = map[string]float64{}
		}
		per[node][dir] += v
	}
	share := primaryShares(in)
	hold := 1.0 // each host's fraction of the copies
	if len(in.Hosts) > 0 && in.Replicas > 0 {
		hold = min(1, float64(in.Replicas)/float64(len(in.Hosts)))
	}
	switch in.Model {
	case result.ReplicationPrimary:
		for _, h := range in.Hosts {
			if h != in.Client {
				add(in.Client, "tx", share[h]) // the client to each primary
				add(h, "rx", hold)             // a copy of its share as primary, the rest from other primaries
			} else {
				add(h, "rx", hold-share[h]) // its own primary writes never leave it
			}
			add(h, "tx", share[h]*float64(in.Replicas-1)) // the primary forwards the other copies
		}
	case result.ReplicationServer:
		for _, h := range in.Hosts {
			if h != in.Client {
				add(in.Client, "tx", 1/float64(len(in.Hosts)))
				add(h, "rx", 1/float64(len(in.Hosts)))
			}
		}
	default: // client-side: the client sends every copy that lives elsewhere
		for _, h := range in.Hosts {
			if h != in.Client {
				add(in.Client, "tx", hold)
				add(h, "rx", hold)
			}
		}
		// Copies on hosts not named (a brick whose server is no node
		// storbench knows) leave the client too.
		if unnamed := in.Replicas - len(in.Hosts); unnamed > 0 && len(in.Hosts) > 0 {
			add(in.Client, "tx", float64(unnamed))
		}
	}
	nodes := make([]string, 0, len(per))
	for n := range per {
		nodes = append(nodes, n)
	}
	sort.Slice(nodes, func(i, j int) bool {
		if (nodes[i] == in.Client) != (nodes[j] == in.Client) {
			return nodes[i] == in.Client
		}
		return nodes[i] < nodes[j]
	})
	var out []LinkTraffic
	for _, n := range nodes {
		for _, d := range []string{"tx", "rx"} {
			if v := per[n][d]; v > 0 {
				lt := LinkTraffic{Node: n, Direction: d, PerPayload: v}
				if c, src := in.capacity(n, d); c > 0 {
					lt.CeilingBPS, lt.CapacitySource = c/v, src
				}
				out = append(out, lt)
			}
		}
	}
	return out
}

func primaryShares(in TrafficInput) map[string]float64 {
	share := map[string]float64{}
	total := 0.0
	for _, h := range in.Hosts {
		total += in.PrimaryShare[h]
	}
	for _, h := range in.Hosts {
		if total > 0 {
			share[h] = in.PrimaryShare[h] / total
		} else {
			share[h] = 1 / float64(len(in.Hosts))
		}
	}
	return share
}

// TrafficPlan is the per-link breakdown of one write: the model used and
// why, every link's predicted and measured bytes, and the link that binds.
type TrafficPlan struct {
	Model, Why   string
	PayloadBytes float64
	Links        []LinkTraffic
	// Binding is the link with the lowest ceiling; nil when no capacity is
	// known. CeilingBPS is its ceiling.
	Binding    *LinkTraffic
	CeilingBPS float64
	// Tied are the other links whose ceiling is within TieFraction of
	// Binding's: several links saturating together hold a write further
	// under the ceiling than one would (docs/breakdown.md: four tied links
	// left a Ceph write at about three quarters of it).
	Tied []LinkTraffic
	// Saturated are the links that measured full (UtilPercent at or over
	// SaturatedLinkPercent), fullest first: the links the write waited
	// for, as measured rather than predicted (a slow replica node's link
	// shows here whatever the model expects).
	Saturated []LinkTraffic
	// InFlight is the writes in flight the plan was made for (0: unknown)
	// and AtDepthBPS the throughput the links allow with that many: every
	// link direction shared by the writes on it (linksAtDepth); under
	// CeilingBPS, the more so the fewer writes in flight and the more
	// links tie. 0 when InFlight or every capacity is unknown.
	InFlight   int
	AtDepthBPS float64
	Summary    string
}

// TieFraction is how close another link's ceiling must be to the binding
// one's to be named beside it.
const TieFraction = 0.02

// PlanTraffic predicts in's links for payloadBytes written, fills in the
// measured bytes (node -> direction -> bytes; nil when not measured), and
// names the binding link.
func PlanTraffic(in TrafficInput, why string, payloadBytes float64, measured map[string]map[string]float64) TrafficPlan {
	p := TrafficPlan{Model: in.Model, Why: why, PayloadBytes: payloadBytes, Links: PredictTraffic(in)}
	var words []string
	for i := range p.Links {
		l := &p.Links[i]
		l.PredictedBytes = l.PerPayload * payloadBytes
		l.MeasuredBytes = measured[l.Node][l.Direction]
		if l.CeilingBPS > 0 && (p.Binding == nil || l.CeilingBPS < p.Binding.CeilingBPS) {
			p.Binding = l
		}
		w := fmt.Sprintf("%s %s %.2fx", l.Node, l.Direction, l.PerPayload)
		if l.MeasuredBytes > 0 && payloadBytes > 0 {
			w += fmt.Sprintf(" (measured %.2fx)", l.MeasuredBytes/payloadBytes)
		}
		if c, _ := in.capacity(l.Node, l.Direction); c > 0 && in.Seconds > 0 && l.MeasuredBytes > 0 {
			l.UtilPercent = l.MeasuredBytes / in.Seconds / c * 100
			if l.UtilPercent >= SaturatedLinkPercent {
				p.Saturated = append(p.Saturated, *l)
			}
		}
		words = append(words, w)
	}
	sort.SliceStable(p.Saturated, func(i, j int) bool { return p.Saturated[i].UtilPercent > p.Saturated[j].UtilPercent })
	p.Summary = fmt.Sprintf("replication model %s (%s): %s", p.Model, p.Why, strings.Join(words, ", "))
	if p.Binding != nil {
		p.CeilingBPS = p.Binding.CeilingBPS
		p.Summary += fmt.Sprintf("; binding link %s %s: ceiling %.1f MB/s (capacity from %s)", p.Binding.Node, p.Binding.Direction, p.CeilingBPS/1e6, p.Binding.CapacitySource)
		var tied []string
		for i := range p.Links {
			l := &p.Links[i]
			if l != p.Binding && l.CeilingBPS > 0 && l.CeilingBPS <= p.CeilingBPS*(1+TieFraction) {
				p.Tied = append(p.Tied, *l)
				tied = append(tied, l.Node+" "+l.Direction)
			}
		}
		if len(tied) > 0 {
			p.Summary += fmt.Sprintf(", tied with %s (%d links saturate together: expect the write well under the ceiling)", strings.Join(tied, ", "), len(tied)+1)
		}
		if at := linksAtDepth(in, in.InFlight); at > 0 {
			p.InFlight, p.AtDepthBPS = in.InFlight, at
			p.Summary += fmt.Sprintf("; with %d writes in flight the links allow %.1f MB/s, %.0f%% of the ceiling (each write's hops in turn, a hop through its links at once, each link shared with the writes on it; TCP's headers off a nominal speed)",
				p.InFlight, p.AtDepthBPS/1e6, p.AtDepthBPS/p.CeilingBPS*100)
		}
	}
	if len(p.Saturated) > 0 {
		var full []string
		for _, l := range p.Saturated {
			c, src := in.capacity(l.Node, l.Direction)
			full = append(full, fmt.Sprintf("%s %s carried %.1f MB/s, %.0f%% of its %.1f MB/s (%s)", l.Node, l.Direction, l.MeasuredBytes/in.Seconds/1e6, l.UtilPercent, c/1e6, src))
		}
		p.Summary += "; measured full: " + strings.Join(full, "; ")
	}
	return p
}

// replicationPart is what replication takes from a write over linkBPS, by
// b's model: client-side, the remote copies share the client's link;
// primary-copy, the client sends once and each of the Remote hosts leads
// an even share of the writes and forwards Replicas-1 copies of it over
// its own link (PlanTraffic weighs the shares when they are known);
// server, nothing.
func replicationPart(b Breakdown, linkBPS float64, remoteCopies int, replicaSource string) (BreakdownPart, bool) {
	if b.Direction != "write" {
		return BreakdownPart{}, false
	}
	switch b.ReplicationModel {
	case result.ReplicationServer:
		return BreakdownPart{}, false
	case result.ReplicationPrimary:
		hosts := max(len(b.Remote), 1)
		if b.Replicas < 2 {
			return BreakdownPart{}, false
		}
		perPrimary := float64(b.Replicas-1) / float64(hosts)
		return BreakdownPart{PartReplication, linkBPS / max(perPrimary, 1),
			fmt.Sprintf("primary-copy: the client sends each write once; each of %d hosts leads about 1/%d of the writes and forwards %d copies (%d replicas, from %s)",
				hosts, hosts, b.Replicas-1, b.Replicas, replicaSource)}, true
	}
	if remoteCopies < 2 {
		return BreakdownPart{}, false
	}
	return BreakdownPart{PartReplication, linkBPS / float64(remoteCopies),
		fmt.Sprintf("%d remote copies share the node's link (%d replicas, from %s)", remoteCopies, b.Replicas, replicaSource)}, true
}

// trafficOf plans r's write per link when its telemetry sampled the nodes:
// the client (the node fio ran on) and the replica nodes, each with its
// link's capacity (measured by the network round where m has the node,
// else its interface's nominal speed) and its interface's byte counters
// over the workload.
func trafficOf(r result.Result, b Breakdown, hosts []string, payloadBytes int64, m *LinkMatrix) *TrafficPlan {
	tm := r.Telemetry
	if tm == nil || len(tm.Nodes) == 0 || payloadBytes <= 0 || len(hosts) == 0 {
		return nil
	}
	client := b.Node
	if client == "" {
		client = tm.Host
	}
	caps := map[string]float64{}
	measured := map[string]map[string]float64{}
	for _, n := range append([]*result.Telemetry{tm}, tm.Nodes...) {
		name := n.Host
		if n == tm {
			name = client
		}
		if n.LinkBytesPerSec > 0 {
			caps[name] = n.LinkBytesPerSec
		}
		if n.Totals.NetRxBytes > 0 || n.Totals.NetTxBytes > 0 {
			measured[name] = map[string]float64{"tx": float64(n.Totals.NetTxBytes), "rx": float64(n.Totals.NetRxBytes)}
		}
	}
	in := TrafficInput{Model: b.ReplicationModel, Client: client, Replicas: b.Replicas, Hosts: hosts, LinkBytesPerSec: caps}
	if n, err := strconv.Atoi(result.LabelInFlight.Of(r.Labels)); err == nil && n > 0 {
		in.InFlight = n
	}
	in.MeasuredCapacity, in.CapacitySource = measuredCapacities(m, append([]string{client}, hosts...))
	if w := r.Write; w != nil && w.BytesPerSec > 0 {
		in.Seconds = float64(w.Bytes) / w.BytesPerSec
	}
	p := PlanTraffic(in, b.ModelReason, float64(payloadBytes), measured)
	return &p
}

// measuredCapacities are nodes' link capacities as the network round
// measured them: a node's tx is its fastest transfer to another node, its
// rx the fastest from one (one TCP stream each, so a lower bound of the
// link, and the rate a shaped link really allows where the interface
// claims its nominal speed).
func measuredCapacities(m *LinkMatrix, nodes []string) (map[string]map[string]float64, map[string]map[string]string) {
	if m == nil {
		return nil, nil
	}
	caps, srcs := map[string]map[string]float64{}, map[string]map[string]string{}
	set := func(node, dir string, l *Link) {
		if l == nil || l.SendBytesPerSec <= caps[node][dir] {
			return
		}
		if caps[node] == nil {
			caps[node], srcs[node] = map[string]float64{}, map[string]string{}
		}
		caps[node][dir] = l.SendBytesPerSec
		srcs[node][dir] = fmt.Sprintf("the network round, %s -> %s at %.1f MB/s", l.From, l.To, l.SendBytesPerSec/1e6)
	}
	for _, n := range nodes {
		for _, o := range m.Nodes {
			if o != n {
				set(n, "tx", m.Link(n, o))
				set(n, "rx", m.Link(o, n))
			}
		}
	}
	return caps, srcs
}
