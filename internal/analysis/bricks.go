package analysis

import (
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// Causes a brick verdict names.
const (
	// BrickCauseSlow: the client waited far longer for this brick than for
	// the others. The client sees only the wait: the brick's disk, its
	// CPU or its link (the verdict adds the link where its node was
	// sampled and ran full).
	BrickCauseSlow = "slow"
	// BrickCauseLink: slow, and its node's link ran full meanwhile.
	BrickCauseLink = "link"
	// BrickCauseDown: the client lost the brick.
	BrickCauseDown = "down"
	// BrickCauseServer: slow, while its server's round trip stayed in
	// line with the others': not its link, so its disk or its CPU.
	BrickCauseServer = "disk or CPU"
)

// A slow brick's link is full when its server's round trip during the
// workload is over BrickLinkRTTRatio times the highest other's and at
// least BrickLinkRTTFloor (a SYN waiting behind the data in the link's
// queue); in line when under twice the highest other's.
const (
	BrickLinkRTTRatio = 5.0
	BrickLinkRTTFloor = 1500 * time.Microsecond
)

// Brick verdict thresholds: a brick is slow when its mean latency for the
// workload's operation is over BrickSlowRatio times the highest other
// brick's and at least BrickSlowFloor, each over at least BrickMinOps
// operations. Measured on this machine's replica-3 volume: a brick whose
// disk was throttled to 10 MiB/s waited 15.6 ms against 1.8-1.9 ms, one
// capped at 5% of a core 17.8 ms against 1.4-2.1 ms.
const (
	BrickSlowRatio = 3.0
	BrickSlowFloor = 5 * time.Millisecond
	BrickMinOps    = 10
)

// BrickVerdict names a GlusterFS brick that held a result back.
type BrickVerdict struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Round    string `json:"round"`
	Host     string `json:"host"`
	Brick    string `json:"brick"`
	Cause    string `json:"cause"`
	Summary  string `json:"summary"`
}

// BrickVerdicts compares the bricks each result's telemetry saw
// (result.Telemetry.Bricks: a target on a GlusterFS FUSE mount) and names
// the ones that held it back: lost by the client, or far slower than the
// others for the workload's main operation (writes when it wrote more
// than it read). A replicated write waits for every copy, so one slow
// brick slows every write; a read is served by one brick, so reads are
// compared only among bricks that served some.
func BrickVerdicts(results []result.Result) []BrickVerdict {
	var out []BrickVerdict
	for _, r := range results {
		tm := r.Telemetry
		if tm == nil || len(tm.Bricks) == 0 || r.Status != result.StatusComplete {
			continue
		}
		op, ops, lat := "writes", func(b result.BrickFigures) int64 { return b.Writes }, func(b result.BrickFigures) time.Duration { return b.WriteLatency }
		if r.Read != nil && (r.Write == nil || r.Read.Bytes > r.Write.Bytes) {
			op, ops, lat = "reads", func(b result.BrickFigures) int64 { return b.Reads }, func(b result.BrickFigures) time.Duration { return b.ReadLatency }
		}
		add := func(b result.BrickFigures, cause, words string) {
			out = append(out, BrickVerdict{Target: r.Target, Workload: r.Workload, Round: r.Round, Host: b.Host, Brick: b.Brick, Cause: cause,
				Summary: fmt.Sprintf("brick %s:%s %s", b.Host, b.Brick, words)})
		}
		for i, b := range tm.Bricks {
			if !b.Connected {
				add(b, BrickCauseDown, fmt.Sprintf("was lost by the client during %s: the volume went on with the other copies", r.Workload))
				continue
			}
			if ops(b) < BrickMinOps {
				continue
			}
			var lo, hi time.Duration
			n := 0
			for j, o := range tm.Bricks {
				if j == i || !o.Connected || ops(o) < BrickMinOps {
					continue
				}
				if n == 0 || lat(o) < lo {
					lo = lat(o)
				}
				hi, n = max(hi, lat(o)), n+1
			}
			if n == 0 || lat(b) < BrickSlowFloor || float64(lat(b)) <= BrickSlowRatio*float64(hi) {
				continue
			}
			words := fmt.Sprintf("answered %s in %s on average against %s for the others during %s", op, msFine(lat(b)), msFineRange(lo, hi), r.Workload)
			if op == "writes" {
				words += "; every replicated write waits for it"
			} else {
				words += "; the reads it serves wait for it"
			}
			cause, why := brickCause(tm, i)
			add(b, cause, words+": "+why)
		}
	}
	return out
}

// msFine and msFineRange say a latency in milliseconds with a decimal:
// a brick answers in a millisecond or two.
func msFine(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/1e6) }

func msFineRange(lo, hi time.Duration) string {
	if lo == hi {
		return msFine(lo)
	}
	return fmt.Sprintf("%.1f-%.1f ms", float64(lo)/1e6, float64(hi)/1e6)
}

// brickCause says why brick i is slow: its link when its node was sampled
// and its link ran full, or when its server's round trip rose far above
// the others'; its disk or CPU when the round trip stayed in line; else
// unknown among the three.
func brickCause(tm *result.Telemetry, i int) (cause, why string) {
	b := tm.Bricks[i]
	if capBPS, used := nodeLinkUse(tm, b.Host); capBPS > 0 && used >= osdLinkBusyFraction*capBPS {
		return BrickCauseLink, fmt.Sprintf("its node's link carried %.1f MB/s of %.1f MB/s: the client waits for its link", used/1e6, capBPS/1e6)
	}
	var lo, hi time.Duration
	n := 0
	for j, o := range tm.Bricks {
		if j == i || o.RTT <= 0 {
			continue
		}
		if n == 0 || o.RTT < lo {
			lo = o.RTT
		}
		hi, n = max(hi, o.RTT), n+1
	}
	if b.RTT <= 0 || n == 0 {
		return BrickCauseSlow, "its disk, CPU or link (the client sees only how long it waits)"
	}
	rtt := fmt.Sprintf("a connection to its server took %s against %s for the others' meanwhile", msFine(b.RTT), msFineRange(lo, hi))
	switch {
	case b.RTT >= BrickLinkRTTFloor && float64(b.RTT) > BrickLinkRTTRatio*float64(hi):
		return BrickCauseLink, rtt + ": its link is full (the connection waits behind the data)"
	case float64(b.RTT) < 2*float64(hi):
		return BrickCauseServer, rtt + ": not its link, so its disk or its CPU"
	}
	return BrickCauseSlow, rtt + ": its disk, CPU or link"
}
