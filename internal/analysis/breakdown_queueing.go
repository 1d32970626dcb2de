package analysis

import "github.com/storbench/storbench/internal/result"

// MaxInFlight bounds the writes in flight the queueing model iterates over:
// past a few thousand, the links' throughput is their ceiling to within a
// fraction of a percent, and a label claiming more costs no time.
const MaxInFlight = 4096

// linksAtDepth is the write throughput, in payload bytes per second, that
// the links allow with n writes in flight, for a write whose copies go
// over the links in more than one hop (primary-copy: the client to the
// primary, the primary to the others). It is mean value analysis (Reiser
// and Lavenberg, 1980) of a closed network whose customers are the writes
// and whose stations are the link directions, each serving its share of
// every write at its capacity (D_i = 1/CeilingBPS_i seconds per payload
// byte; the block size cancels out), with one change: a write's own time
// is not the sum of its links, because its bytes stream through a hop's
// sending and receiving links at once; it is own (ownTransfer: the hops in
// turn, each at the pace of its slowest link). What the other writes add is
// the wait behind them at every link (the arrival theorem's queue):
//
//	W_i(k) = D_i * Q_i(k-1),  X(k) = k / (own + sum W_i(k)),  Q_i(k) = X(k) * (W_i(k) + D_i)
//
// One write gets 1/own; as n grows the throughput rises towards the lowest
// ceiling, the slower the more links tie at it. A write counted at both
// links of a hop is waited for twice, so the figure errs low; measured on
// a real Ceph (docs/breakdown.md, writes of 8 rounds per depth) it was
// within 10% at 1, 2, 16 and 32 writes in flight and 5-15% low at 4 and 8.
// Links without a known capacity are left out; 0 when own is
// unknown or n < 1.
func linksAtDepth(links []LinkTraffic, own float64, n int) float64 {
	var demand []float64
	for _, l := range links {
		if l.CeilingBPS > 0 {
			demand = append(demand, 1/l.CeilingBPS)
		}
	}
	if len(demand) == 0 || own <= 0 || n < 1 {
		return 0
	}
	queue := make([]float64, len(demand))
	var x float64
	for k := 1; k <= min(n, MaxInFlight); k++ {
		wait := own
		for i, d := range demand {
			wait += d * queue[i]
		}
		x = float64(k) / wait
		for i, d := range demand {
			queue[i] = x * d * (queue[i] + 1)
		}
	}
	return x
}

// ownTransfer is the seconds per payload byte one primary-copy write
// takes on the links with nothing else in flight: the client to the
// primary (unless the client is the primary), then the primary's copies to
// the other holders, sent at once over the primary's link; each hop's bytes
// stream through the sender's and the receivers' links together, at the
// pace of the slowest; each host is the primary of its share of the
// writes. 0 for another model (one hop: the write streams through one pipe
// and its ceiling holds from one write in flight) or when a capacity it
// needs is unknown.
func ownTransfer(in TrafficInput) float64 {
	if in.Model != result.ReplicationPrimary {
		return 0
	}
	hop := func(bytes float64, from string, to ...string) float64 {
		c, _ := in.capacity(from, "tx")
		if c <= 0 {
			return -1
		}
		t := bytes / c
		for _, h := range to {
			r, _ := in.capacity(h, "rx")
			if r <= 0 {
				return -1
			}
			t = max(t, 1/r) // each receiver gets one copy
		}
		return t
	}
	share := primaryShares(in)
	var total float64
	for _, p := range in.Hosts {
		var others []string
		for _, h := range in.Hosts {
			if h != p {
				others = append(others, h)
			}
		}
		t := 0.0
		if p != in.Client {
			t = hop(1, in.Client, p)
		}
		if copies := min(in.Replicas-1, len(others)); copies > 0 && t >= 0 {
			if h := hop(float64(copies), p, others...); h >= 0 {
				t += h
			} else {
				t = -1
			}
		}
		if t < 0 {
			return 0
		}
		total += share[p] * t
	}
	return total
}
