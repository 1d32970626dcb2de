package analysis

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Parts of a breakdown, in the order data crosses them.
const (
	PartLocalDisk   = "local disk"
	PartLink        = "link"
	PartReplication = "replication"
	// PartLinks is the busiest link of the per-link plan (Breakdown.Traffic):
	// its speed over the bytes it carries per byte written.
	PartLinks = "links (per-link plan)"
	PartRest  = "the rest (storage engine)"
)

// What a breakdown says limited the result.
const (
	BoundLocalDisk   = "local disk"
	BoundNetwork     = "network"
	BoundReplication = "network (replication traffic)"
	// BoundEngine: the figure is under half of the lowest ceiling, so
	// what is left (the storage engine: its protocol, CPU, copies) takes
	// away more than the ceiling lets through, and a faster disk or link
	// would not help.
	BoundEngine = "the storage engine"
)

// EngineBoundPercent is the share of the ceiling under which the rest, not
// the lowest part, is what limits a result.
const EngineBoundPercent = 50

// Breakdown explains one network-backed or replicated result: the ceiling
// the local disk under the storage, the measured link to the server or
// replica nodes, and the replication factor each allow, which one binds,
// and what is left to the storage engine. The model and its sources are
// in docs/breakdown.md.
type Breakdown struct {
	Target, Workload, Round string
	// Direction is "write" or "read": the result's larger one.
	Direction string
	// Node is where fio ran; Remote are the nodes its data crossed the
	// network to (replicas, or a network filesystem's server).
	Node   string
	Remote []string
	// Replicas is the copies kept (1 for a plain network filesystem);
	// RemoteCopies those that cross the network from Node.
	Replicas, RemoteCopies int
	// ReplicationModel is how the copies travel (result.Replication*);
	// ModelReason says why storbench took it (ReplicationModelOf).
	ReplicationModel, ModelReason string
	MeasuredBPS                   float64
	// Parts are the ceilings, in path order; a part whose input is
	// missing is left out and named in Missing.
	Parts []BreakdownPart
	// CeilingBPS is the lowest part's; 0 when no part is known.
	CeilingBPS float64
	// LimitedBy is one of the Bound constants, "" without a ceiling.
	LimitedBy string
	// Lowest is the Bound constant of the lowest part (LimitedBy too,
	// unless the engine binds).
	Lowest string
	// Percent is MeasuredBPS against CeilingBPS.
	Percent float64
	// Steps walk from the first known ceiling down to the measured figure:
	// what the link, the replication and the rest each take away. The
	// charts draw them.
	Steps []BreakdownStep
	// Latency is the synchronous write's floor, for writes with a local
	// baseline and a measured round trip.
	Latency *LatencyFloor
	// Traffic is the per-link prediction for a write by the replication
	// model, beside each node's measured counters, where the result's
	// telemetry sampled the nodes (nil otherwise).
	Traffic *TrafficPlan
	// Missing names each input that was not available and how to give it.
	Missing []string
	// Summary says it in one line.
	Summary string
}

// BreakdownPart is one part's ceiling and where its figure came from.
type BreakdownPart struct {
	Name       string
	CeilingBPS float64
	Source     string
}

// BreakdownStep is one step of the walk: the throughput left after it and
// what it took away.
type BreakdownStep struct {
	Name    string
	LeftBPS float64
	LostBPS float64
}

// LatencyFloor is what a synchronous replicated write costs at least: the
// local write plus the round trip to the farthest remote copy.
type LatencyFloor struct {
	LocalP50, RoundTripP50, FloorP50, MeasuredP50 time.Duration
	// Percent is FloorP50 against MeasuredP50: how much of the measured
	// latency the floor explains.
	Percent float64
}

// Breakdowns explains every result of results that crossed the network:
// one naming its remote nodes (result.LabelReplicaNodes) or keeping more
// than one copy (result.LabelReplicas, or a Longhorn class's
// numberOfReplicas). The local baseline is the result of the same
// workload and round on the same node from the target named by
// result.LabelBaseline, else from a local-path class; links are the host
// network's matrix where it was measured, else the first.
func Breakdowns(results []result.Result, links []LinkMatrix) []Breakdown {
	var m *LinkMatrix
	for i := range links {
		if m == nil || links[i].Network == "host" {
			m = &links[i]
		}
	}
	var out []Breakdown
	baselines := map[string]bool{}
	for _, r := range results {
		if b := result.LabelBaseline.Of(r.Labels); b != "" {
			baselines[b] = true
		}
	}
	for _, r := range results {
		// A baseline is the local disk itself, even where labels given to
		// a whole run say it is replicated.
		if r.Round == result.RoundNetwork || r.Status != result.StatusComplete || baselines[r.Target] ||
			(result.LabelBaseline.Of(r.Labels) == "" && result.LabelStorageClass.Of(r.Labels) == "local-path") {
			continue
		}
		if b, ok := breakdown(r, results, m); ok {
			out = append(out, b)
		}
	}
	return out
}

func nodeOf(r result.Result) string {
	if n := result.LabelNode.Of(r.Labels); n != "" {
		return n
	}
	return result.LabelHostname.Of(r.Labels)
}

func replicasOf(r result.Result) (int, string) {
	if n, err := strconv.Atoi(result.LabelReplicas.Of(r.Labels)); err == nil && n > 0 {
		if src := result.LabelReplicasSource.Of(r.Labels); src != "" {
			return n, src
		}
		return n, "label " + string(result.LabelReplicas)
	}
	if n, err := strconv.Atoi(result.ClassParameter("numberOfReplicas").Of(r.Labels)); err == nil && n > 0 {
		return n, "StorageClass parameter numberOfReplicas"
	}
	return 0, ""
}

func breakdown(r result.Result, all []result.Result, m *LinkMatrix) (Breakdown, bool) {
	var remoteList []string
	for _, n := range strings.Split(result.LabelReplicaNodes.Of(r.Labels), ",") {
		if n = strings.TrimSpace(n); n != "" {
			remoteList = append(remoteList, n)
		}
	}
	replicas, replicaSource := replicasOf(r)
	if len(remoteList) == 0 && replicas < 2 {
		return Breakdown{}, false
	}
	b := Breakdown{Target: r.Target, Workload: r.Workload, Round: r.Round, Node: nodeOf(r), Direction: "read"}
	b.ReplicationModel, b.ModelReason = ReplicationModelOf(r)
	dir := r.Read
	if r.Write != nil && (dir == nil || r.Write.BytesPerSec > dir.BytesPerSec) {
		dir, b.Direction = r.Write, "write"
	}
	if dir == nil || dir.BytesPerSec <= 0 {
		return Breakdown{}, false
	}
	b.MeasuredBPS = dir.BytesPerSec
	for _, n := range remoteList {
		if n != b.Node {
			b.Remote = append(b.Remote, n)
		}
	}
	if replicas == 0 {
		replicas, replicaSource = max(len(remoteList), 1), "the nodes in label "+string(result.LabelReplicaNodes)
	}
	b.Replicas = replicas
	remoteCopies := len(b.Remote)
	if replicas > len(remoteList) && len(remoteList) > 0 {
		// More copies than nodes named: the unnamed ones are remote too.
		remoteCopies += replicas - len(remoteList)
	}
	if len(remoteList) == 0 {
		b.Missing = append(b.Missing, fmt.Sprintf("replica nodes: unknown, so no link can be read (give --label %s=NODE,NODE)", result.LabelReplicaNodes))
	}

	// The local disk under the storage, measured on the same node.
	if base := baselineOf(r, all, b.Node); base != nil {
		bd := base.Write
		if b.Direction == "read" {
			bd = base.Read
		}
		if bd != nil && bd.BytesPerSec > 0 {
			b.Parts = append(b.Parts, BreakdownPart{PartLocalDisk, bd.BytesPerSec, fmt.Sprintf("%s %s on %s", base.Target, base.Workload, b.Node)})
			if b.Direction == "write" && len(b.Remote) > 0 && m != nil {
				b.Latency = latencyFloor(dir, bd, b, m)
			}
		}
	} else {
		b.Missing = append(b.Missing, fmt.Sprintf("local disk: no %s result on node %s from a local-path class or the target named by --label %s", r.Workload, b.Node, result.LabelBaseline))
	}

	// The link: writes leave the node for every remote copy, and wait for
	// the slowest; a read is served by one copy, the best-linked one.
	if len(b.Remote) > 0 {
		var linkBPS float64
		var named []string
		for _, n := range b.Remote {
			var l *Link
			if m != nil {
				if b.Direction == "write" {
					l = m.Link(b.Node, n)
				} else {
					l = m.Link(n, b.Node)
				}
			}
			if l == nil || l.SendBytesPerSec <= 0 {
				b.Missing = append(b.Missing, fmt.Sprintf("link %s: not measured (run with --rounds network,...)", pairWords(b, n)))
				continue
			}
			named = append(named, n)
			if linkBPS == 0 || (b.Direction == "write" && l.SendBytesPerSec < linkBPS) || (b.Direction == "read" && l.SendBytesPerSec > linkBPS) {
				linkBPS = l.SendBytesPerSec
			}
		}
		if linkBPS > 0 {
			b.Parts = append(b.Parts, BreakdownPart{PartLink, linkBPS, "network round, " + pairWords(b, strings.Join(named, " and "))})
			if p, ok := replicationPart(b, linkBPS, remoteCopies, replicaSource); ok {
				b.Parts = append(b.Parts, p)
			}
		}
	}
	b.RemoteCopies = remoteCopies
	if b.Direction == "write" {
		b.Traffic = trafficOf(r, b, remoteList, dir.Bytes, m)
		b.addLinksPart()
	}
	b.finish()
	return b, true
}

// addLinksPart adds the per-link plan's busiest link as a part: its
// ceiling, or what the links allow at the write's depth where known.
func (b *Breakdown) addLinksPart() {
	t := b.Traffic
	if t == nil || t.Binding == nil {
		return
	}
	why := fmt.Sprintf("%s %s carries %.2fx the payload by the %s model, at %.0f MB/s",
		t.Binding.Node, t.Binding.Direction, t.Binding.PerPayload, t.Model, t.Binding.CeilingBPS*t.Binding.PerPayload/1e6)
	if len(t.Tied) > 0 {
		why += fmt.Sprintf("; %d other links reach the same ceiling, and links saturating together leave a write further under it", len(t.Tied))
	}
	if t.Binding.UtilPercent > 0 {
		why += fmt.Sprintf("; it ran %.0f%% full, measured", t.Binding.UtilPercent)
	}
	ceiling := t.CeilingBPS
	if t.AtDepthBPS > 0 {
		// The links' figure for this write is what they allow at its
		// depth, not with unbounded writes in flight.
		ceiling = t.AtDepthBPS
		why += fmt.Sprintf("; with %d writes in flight the links allow %.0f MB/s of its %.0f MB/s (queueing: a queue at every link direction; each write's hops in turn)",
			t.InFlight, t.AtDepthBPS/1e6, t.CeilingBPS/1e6)
	}
	b.Parts = append(b.Parts, BreakdownPart{PartLinks, ceiling, why})
}

func pairWords(b Breakdown, remote string) string {
	if b.Direction == "write" {
		return b.Node + " -> " + remote
	}
	return remote + " -> " + b.Node
}

// baselineOf finds the local disk's result for r: same workload and round
// on the same node.
func baselineOf(r result.Result, all []result.Result, node string) *result.Result {
	want := result.LabelBaseline.Of(r.Labels)
	for i := range all {
		o := &all[i]
		if o.Workload != r.Workload || o.Round != r.Round || o.Status != result.StatusComplete || o.Target == r.Target || nodeOf(*o) != node {
			continue
		}
		if want != "" && o.Target == want {
			return o
		}
		if want == "" && result.LabelStorageClass.Of(o.Labels) == "local-path" {
			return o
		}
	}
	return nil
}

func latencyFloor(dir, base *result.Direction, b Breakdown, m *LinkMatrix) *LatencyFloor {
	local, ok1 := base.Completion.At(50)
	measured, ok2 := dir.Completion.At(50)
	if !ok1 || !ok2 || measured <= 0 {
		return nil
	}
	var rtt time.Duration
	for _, n := range b.Remote {
		if l := m.Link(b.Node, n); l != nil && l.IdleP50 > rtt {
			rtt = l.IdleP50
		}
	}
	if rtt == 0 {
		return nil
	}
	f := &LatencyFloor{LocalP50: local, RoundTripP50: rtt, FloorP50: local + rtt, MeasuredP50: measured}
	f.Percent = float64(f.FloorP50) / float64(measured) * 100
	return f
}

// finish picks the binding part, walks the steps and writes the summary.
func (b *Breakdown) finish() {
	for _, p := range b.Parts {
		if b.CeilingBPS == 0 || p.CeilingBPS < b.CeilingBPS {
			b.CeilingBPS = p.CeilingBPS
			b.LimitedBy = map[string]string{PartLocalDisk: BoundLocalDisk, PartLink: BoundNetwork, PartReplication: BoundReplication, PartLinks: BoundNetwork}[p.Name]
		}
	}
	words := []string{fmt.Sprintf("%s %.0f MB/s", b.Workload, b.MeasuredBPS/1e6)}
	if b.CeilingBPS == 0 {
		b.Summary = words[0] + ": no ceiling known (" + strings.Join(b.Missing, "; ") + ")"
		if b.ReplicationModel != "" && b.ReplicationModel != result.ReplicationClient {
			b.Summary += fmt.Sprintf("; replication model %s (%s)", b.ReplicationModel, b.ModelReason)
		}
		return
	}
	b.Percent = b.MeasuredBPS / b.CeilingBPS * 100
	b.Lowest = b.LimitedBy
	if b.Percent < EngineBoundPercent {
		b.LimitedBy = BoundEngine
	}
	left := 0.0
	for _, p := range b.Parts {
		switch {
		case left == 0:
			left = p.CeilingBPS
			b.Steps = append(b.Steps, BreakdownStep{Name: p.Name, LeftBPS: left})
		default:
			next := min(left, p.CeilingBPS)
			b.Steps = append(b.Steps, BreakdownStep{Name: p.Name, LeftBPS: next, LostBPS: left - next})
			left = next
		}
		switch p.Name {
		case PartLocalDisk:
			words = append(words, fmt.Sprintf("local disk %.0f MB/s", p.CeilingBPS/1e6))
		case PartLink:
			words = append(words, fmt.Sprintf("link %s %.0f MB/s", strings.TrimPrefix(p.Source, "network round, "), p.CeilingBPS/1e6))
		case PartReplication:
			words = append(words, fmt.Sprintf("%d remote copies share it: %.0f MB/s", b.RemoteCopies, p.CeilingBPS/1e6))
		case PartLinks:
			words = append(words, fmt.Sprintf("busiest link %s: %.0f MB/s", p.Source, p.CeilingBPS/1e6))
		}
	}
	b.Steps = append(b.Steps, BreakdownStep{Name: PartRest, LeftBPS: b.MeasuredBPS, LostBPS: left - b.MeasuredBPS})
	if b.LimitedBy == BoundEngine {
		words = append(words, fmt.Sprintf("ceiling %.0f MB/s (%s); limited by %s, %.0f%% of the ceiling", b.CeilingBPS/1e6, b.Lowest, b.LimitedBy, b.Percent))
	} else {
		words = append(words, fmt.Sprintf("ceiling %.0f MB/s; limited by %s, %.0f%% of the ceiling", b.CeilingBPS/1e6, b.LimitedBy, b.Percent))
	}
	if b.Percent > 105 {
		words = append(words, "above the ceiling: the model does not hold here (a cache, compression, or a copy not written synchronously)")
	}
	if b.ReplicationModel != "" && b.ReplicationModel != result.ReplicationClient {
		words = append(words, fmt.Sprintf("replication model %s (%s)", b.ReplicationModel, b.ModelReason))
	}
	if b.Latency != nil {
		words = append(words, fmt.Sprintf("latency p50 %s, at least %s (local %s + round trip %s)", fmtDur(b.Latency.MeasuredP50), fmtDur(b.Latency.FloorP50), fmtDur(b.Latency.LocalP50), fmtDur(b.Latency.RoundTripP50)))
	}
	b.Summary = words[0] + ": " + strings.Join(words[1:], "; ")
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= time.Millisecond:
		return fmt.Sprintf("%.2f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	}
}
