package analysis

import "github.com/storbench/storbench/internal/result"

// MaxInFlight bounds the writes in flight the queueing model iterates over:
// past a few thousand, the links' throughput is their ceiling to within a
// fraction of a percent, and a label claiming more costs no time.
const MaxInFlight = 4096

// PayloadOfNominal is the share of a link's nominal rate TCP carries as
// payload: a 1,448-byte segment (a 1,500-byte MTU, TCP timestamps) goes
// with 66 bytes of TCP, IP and Ethernet headers, which a shaper (tbf) and
// an interface's byte counters count (on the wire, with preamble, frame
// check and gap, 94.1%). One TCP stream through a link shaped to 200
// Mbit/s carried 23.7 MB/s, 95% of 25 MB/s. The queueing model takes it
// off a capacity that is an interface's nominal speed; a capacity the
// network round measured is payload already.
const PayloadOfNominal = 1448.0 / (1448 + 66)

// hopLink is a link direction one hop of a write crosses and the seconds
// per payload byte it takes there (its bytes over the link's capacity).
type hopLink struct {
	link   string // node + " " + direction
	demand float64
}

// writeHops are the hops of a primary-copy write led by each host (the
// client to the primary, unless the client is the primary; the primary to
// the other holders), with each host's share of the writes; ok false when
// a capacity a hop needs is unknown or the model is another.
func writeHops(in TrafficInput) (hops [][][]hopLink, shares []float64, ok bool) {
	if in.Model != result.ReplicationPrimary || len(in.Hosts) == 0 {
		return nil, nil, false
	}
	payload := func(node, dir string) float64 {
		c, src := in.capacity(node, dir)
		if src == "the interface's nominal speed" {
			c *= PayloadOfNominal
		}
		return c
	}
	link := func(node, dir string, bytes float64) (hopLink, bool) {
		c := payload(node, dir)
		return hopLink{node + " " + dir, bytes / c}, c > 0
	}
	share := primaryShares(in)
	for _, p := range in.Hosts {
		var w [][]hopLink
		if p != in.Client {
			tx, ok1 := link(in.Client, "tx", 1)
			rx, ok2 := link(p, "rx", 1)
			if !ok1 || !ok2 {
				return nil, nil, false
			}
			w = append(w, []hopLink{tx, rx})
		}
		var others []string
		for _, h := range in.Hosts {
			if h != p {
				others = append(others, h)
			}
		}
		if copies := min(in.Replicas-1, len(others)); copies > 0 {
			tx, ok := link(p, "tx", float64(copies))
			if !ok {
				return nil, nil, false
			}
			hop := []hopLink{tx}
			for _, o := range others { // the copies spread over the others, as PredictTraffic has them
				rx, ok := link(o, "rx", float64(copies)/float64(len(others)))
				if !ok {
					return nil, nil, false
				}
				hop = append(hop, rx)
			}
			w = append(w, hop)
		}
		hops, shares = append(hops, w), append(shares, share[p])
	}
	return hops, shares, true
}

// linksAtDepth is the write throughput, in payload bytes per second, that
// the links allow with n primary-copy writes in flight. It is mean value
// analysis (Reiser and Lavenberg, 1980) of a closed network whose
// customers are the writes and whose stations are the link directions,
// each shared by the writes on it (processor sharing, as TCP streams share
// a link), with one change: a write streams through all the links of a hop
// at once, so a hop takes as long as its slowest link given the writes
// already there, and the write is on every link of the hop for that time:
//
//	T_h(k) = max over the hop's links l of D_l * (1 + Q_l(k-1))
//	X(k) = k / sum over writes w of share_w * sum of T_h over w's hops
//	Q_l(k) = X(k) * sum over writes of share_w * T_h for the hops on l
//
// D_l is the seconds per payload byte at l (PayloadOfNominal off a nominal
// capacity; the block size cancels out). One write gets its hops in turn,
// each at the pace of its slowest link; as n grows the throughput rises
// towards the lowest ceiling, the slower the more links tie at it.
// Measured on a real Ceph (docs/breakdown.md) the write was at 89-105% of
// it from 1 to 32 writes in flight. 0 when a capacity is unknown, the model is not
// primary-copy (one hop: its ceiling holds from one write) or n < 1.
func linksAtDepth(in TrafficInput, n int) float64 {
	hops, shares, ok := writeHops(in)
	if !ok || n < 1 {
		return 0
	}
	queue := map[string]float64{}
	var x float64
	for k := 1; k <= min(n, MaxInFlight); k++ {
		var cycle float64
		onLink := map[string]float64{}
		for w, write := range hops {
			for _, hop := range write {
				var t float64
				for _, l := range hop {
					t = max(t, l.demand*(1+queue[l.link]))
				}
				cycle += shares[w] * t
				for _, l := range hop {
					onLink[l.link] += shares[w] * t
				}
			}
		}
		if cycle <= 0 {
			return 0
		}
		x = float64(k) / cycle
		for l, t := range onLink {
			queue[l] = x * t
		}
	}
	return x
}
