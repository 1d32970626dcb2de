package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// What a latency probe and a bulk copy contend for on distributed storage
// (ContentionShared.Kind), read from the storage's own figures measured
// during the probe alone and again under the copy.
const (
	// SharedDisks: the servers' disks (OSDs' commit latency, bricks'
	// latency) rose while the round trips to them stayed in line.
	SharedDisks = "disks"
	// SharedLink: a link both cross ran full (round trips to a server
	// rose: the probe's packets waited behind the copy's; or a sampled
	// link's counters ran near its capacity).
	SharedLink = "link"
	// SharedCPU: a sampled host's CPU (this host's, where the client
	// runs; a node's, where servers and clients share it) ran full under
	// the copy.
	SharedCPU = "cpu"
)

// Thresholds for ContentionSharedOf. A figure counts as risen when it is
// over sharedRiseRatio times its figure alone and at least the floor: a
// commit latency of 20 ms (a device wait of 10 ms), a brick's 5 ms, a round trip of
// BrickLinkRTTFloor (a SYN that waited behind the data in a link's
// queue); a link is full at sharedLinkFull of its capacity.
const (
	sharedRiseRatio   = 3.0
	sharedCommitFloor = 20 * time.Millisecond
	// A BlueStore transaction's wait for its device: 1.8 ms at 140 MB/s
	// of 1 MiB writes on an unthrottled disk, 188 ms on one throttled to
	// 20 MB/s.
	sharedDeviceWaitFloor = 10 * time.Millisecond
	sharedBrickLatFloor   = 5 * time.Millisecond
	sharedLinkFull        = 0.85
	sharedCPUFull         = 90.0 // % busy, the mean over the workload
	sharedCPURise         = 20.0 // percentage points over the probe alone
)

// ContentionShared says what the probe and the copy contend for, with
// the evidence.
type ContentionShared struct {
	// Kind is SharedDisks, SharedLink or SharedCPU, or several joined by
	// " and " in that order; "" when nothing rose.
	Kind     string   `json:"kind"`
	Evidence []string `json:"evidence"`
	// Summary is one sentence: "they contend for the OSDs' disks: ...".
	Summary string `json:"summary"`
}

// ContentionSharedOf compares the storage's figures of the probe alone and
// under the copy (the OSDs of an RBD pool, the bricks of a GlusterFS
// volume, the sampled links) and says what they contend for; false when
// the results carry no such figures. When they carry them but nothing
// rose, Kind is "" and Summary says so.
func ContentionSharedOf(alone, loaded *result.Telemetry) (ContentionShared, bool) {
	if alone == nil || loaded == nil || (len(loaded.OSDs) == 0 && len(loaded.Bricks) == 0) {
		return ContentionShared{}, false
	}
	var disks, links []string
	for _, o := range loaded.OSDs {
		a, ok := osdByID(alone.OSDs, o.ID)
		if !ok || !o.Up || !a.Up {
			continue
		}
		name := fmt.Sprintf("osd.%d on %s", o.ID, o.Host)
		switch ca, okA := medianLatency(a.Commit); {
		case a.DeviceWait > 0 && o.DeviceWait > 0:
			// BlueStore's own counters over each workload: exact, where
			// `ceph osd perf` lags by seconds.
			if risen(a.DeviceWait, o.DeviceWait, sharedDeviceWaitFloor) {
				disks = append(disks, fmt.Sprintf("%s waited %s for its device per transaction against %s alone", name, msFine(o.DeviceWait), msFine(a.DeviceWait)))
			}
		case okA:
			if cl, okL := medianLatency(o.Commit); okL && risen(ca, cl, sharedCommitFloor) {
				disks = append(disks, fmt.Sprintf("%s's commit latency rose from %s to %s", name, msWords(ca), msWords(cl)))
			}
		}
		if risen(a.RTT, o.RTT, BrickLinkRTTFloor) {
			links = append(links, fmt.Sprintf("a connection to %s took %s against %s alone", name, msFine(o.RTT), msFine(a.RTT)))
		}
	}
	for _, b := range loaded.Bricks {
		i := slices.IndexFunc(alone.Bricks, func(x result.BrickFigures) bool { return x.Host == b.Host && x.Brick == b.Brick })
		if i < 0 || !b.Connected {
			continue
		}
		a, name := alone.Bricks[i], b.Host+":"+b.Brick
		for _, op := range []struct {
			what        string
			alone, load time.Duration
		}{{"writes", a.WriteLatency, b.WriteLatency}, {"reads", a.ReadLatency, b.ReadLatency}} {
			if risen(op.alone, op.load, sharedBrickLatFloor) {
				disks = append(disks, fmt.Sprintf("brick %s answered %s in %s against %s alone", name, op.what, msFine(op.load), msFine(op.alone)))
			}
		}
		if risen(a.RTT, b.RTT, BrickLinkRTTFloor) {
			links = append(links, fmt.Sprintf("a connection to %s took %s against %s alone", b.Host, msFine(b.RTT), msFine(a.RTT)))
		}
	}
	links = append(links, fullLinks(loaded)...)
	return sharedVerdict(disks, links, busyCPUs(alone, loaded)), true
}

func sharedVerdict(disks, links, cpus []string) ContentionShared {
	var c ContentionShared
	var kinds, words []string
	for _, k := range []struct {
		kind, words string
		ev          []string
	}{{SharedDisks, "the servers' disks", disks}, {SharedLink, "a link", links}, {SharedCPU, "a CPU", cpus}} {
		if len(k.ev) > 0 {
			kinds, words = append(kinds, k.kind), append(words, k.words)
			c.Evidence = append(c.Evidence, k.ev...)
		}
	}
	c.Kind = strings.Join(kinds, " and ")
	switch c.Kind {
	case "":
		c.Summary = "neither the servers' disks, the round trips to them nor the sampled CPUs rose under the copy"
	case SharedDisks:
		c.Summary = "they contend for the servers' disks, not the network: " + strings.Join(disks, "; ") + ", while the round trips to them stayed in line"
	case SharedLink:
		c.Summary = "they contend for a link, not the disks: " + strings.Join(links, "; ") + ", while the servers' disk latencies stayed in line"
	default:
		c.Summary = "they contend for " + strings.Join(words, " and ") + ": " + strings.Join(c.Evidence, "; ")
	}
	return c
}

// busyCPUs are the sampled hosts (this one, the nodes) whose CPU ran full
// under the copy and not alone: the client's, or a node's where clients
// and servers share it.
func busyCPUs(alone, loaded *result.Telemetry) []string {
	var out []string
	for _, n := range append([]*result.Telemetry{loaded}, loaded.Nodes...) {
		if n == nil {
			continue
		}
		l, ok := n.Stat(result.SeriesCPUBusy)
		if !ok || l.Mean < sharedCPUFull {
			continue
		}
		a, ok := sameHost(alone, n.Host).Stat(result.SeriesCPUBusy)
		if !ok || l.Mean-a.Mean < sharedCPURise {
			continue
		}
		host := n.Host
		if n == loaded {
			host = "this host"
		}
		out = append(out, fmt.Sprintf("%s's CPU ran %.0f%% busy against %.0f%% alone", host, l.Mean, a.Mean))
	}
	return out
}

// sameHost is tm's figures of host: its own, or a sampled node's.
func sameHost(tm *result.Telemetry, host string) *result.Telemetry {
	if tm == nil || tm.Host == host {
		return tm
	}
	for _, n := range tm.Nodes {
		if n != nil && n.Host == host {
			return n
		}
	}
	return nil
}

// fullLinks are the sampled links (this host's, the nodes') that ran at
// sharedLinkFull of their capacity or more under the copy.
func fullLinks(tm *result.Telemetry) []string {
	var out []string
	for _, n := range append([]*result.Telemetry{tm}, tm.Nodes...) {
		if n == nil || n.LinkBytesPerSec <= 0 || n.Totals.Elapsed <= 0 {
			continue
		}
		used := float64(max(n.Totals.NetRxBytes, n.Totals.NetTxBytes)) / n.Totals.Elapsed.Seconds()
		if used >= sharedLinkFull*n.LinkBytesPerSec {
			host := n.Host
			if host == "" {
				host = "this host"
			}
			out = append(out, fmt.Sprintf("%s's link carried %.1f of %.1f MB/s", host, used/1e6, n.LinkBytesPerSec/1e6))
		}
	}
	return out
}

// risen: now is over sharedRiseRatio times before and at least floor;
// false when before was not measured.
func risen(before, now, floor time.Duration) bool {
	return before > 0 && now >= floor && float64(now) > sharedRiseRatio*float64(before)
}

func osdByID(osds []result.OSDFigures, id int) (result.OSDFigures, bool) {
	for _, o := range osds {
		if o.ID == id {
			return o, true
		}
	}
	return result.OSDFigures{}, false
}
