package analysis

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"
)

// OSDFacts are one Ceph OSD's figures, measured while (or just before) a
// workload ran on its pool: its own object store's throughput (`ceph tell
// osd.N bench`), its commit latency sampled during the workload (`ceph osd
// perf`), and its host's link: what it can carry and what it carried.
type OSDFacts struct {
	ID     int
	Host   string // the crush host: the node
	Device string // the disk holding its data (ceph osd metadata devices)
	// BenchBytesPerSec is 0 when the bench was not run.
	BenchBytesPerSec float64
	// Commit are the commit latencies sampled during the workload
	// (`ceph osd perf`).
	Commit []time.Duration
	// CommitMean is BlueStore's mean commit latency over the workload from
	// the OSD's own counters (0: not read). Where every OSD compared has
	// one, it is the commit latency compared: the sampled figures lag
	// (Ceph refreshes each OSD's every 5 s or so, each at its own moment),
	// and a run was seen setting one OSD's stale 11 ms against another's
	// fresh 80 ms while their counters said 115 and 133 ms.
	CommitMean time.Duration
	// LinkBytesPerSec is the host link's capacity in one direction (a NIC
	// speed, a shaped rate); 0 unknown. LinkUsedBytesPerSec is the busier
	// direction's average during the workload; 0 not measured.
	LinkBytesPerSec, LinkUsedBytesPerSec float64
	// RTT is the median round trip of a TCP connection to the OSD during
	// the workload (0: not measured): a full link delays it, a slow disk
	// does not (the kernel answers).
	RTT time.Duration
	// Greeting is the upper quartile of the waits for the OSD's banner
	// once such a connection opened (0: not measured): the OSD process
	// sends it, so a process short of CPU delays it, while a slow disk does
	// not (netfs.RTTWatch.Greetings says why the upper quartile).
	Greeting time.Duration
}

// Causes an OSDVerdict names.
const (
	OSDCauseDisk = "disk"
	OSDCauseLink = "link"
	OSDCauseCPU  = "cpu"
)

// OSD verdict thresholds: a disk is slow when its commit latency during
// the workload is over five times the highest other's and at least 50 ms,
// or its bench is under a tenth of the slowest other OSD's, or under a
// third with its commit latency over twice the others' (a short bench on
// a busy host varies four-fold: 257 against 1,034-1,064 MB/s was seen with
// nothing wrong, the commit latencies in line); a link binds when it runs
// at 70% of its capacity or more while the OSD's disk figures are in line.
const (
	osdSlowBenchRatio   = 3.0
	osdBenchAloneRatio  = 10.0
	osdCommitHigher     = 2.0
	osdSlowCommitRatio  = 5.0
	osdSlowCommitFloor  = 50 * time.Millisecond
	osdLinkBusyFraction = 0.70
)

// An OSD process is short of CPU when it greets new connections over
// osdCPUGreetingRatio times later than every other OSD and at least
// osdCPUGreetingFloor late, with its round trip in line. Measured here
// (upper quartiles of probes at random phases, 4 MiB writes at depth 8):
// an OSD capped at 10% of a core greeted after 63-139 ms against 0.2-0.7
// ms in seven runs; one whose disk was throttled to 20 MB/s after 0.2-0.3
// ms; every OSD, with nothing wrong, after 0.8-9.0 ms, the one restarted
// a minute before among them. The floor keeps a host's general business
// (three OSDs on a host saturated by the workload greeted alike, 6.6-8.3
// ms by the median) and an OSD's start-up work from a verdict.
//
// Late greetings alone can be a busy host: in CI, with other packages'
// tests on the same two cores and osd.2 down, osd.1 greeted after 29.6
// ms against osd.0's 4.5 ms while their commit latencies were in line
// (125 against 133 ms). So the verdict also needs the OSD's own work to
// be slow, its commit latency over osdCommitHigher times every other's
// (a starved OSD's was 9-11 times), or its greetings over
// osdCPUGreetingAloneRatio times every other's and at least
// osdCPUGreetingAloneFloor (a frozen OSD never greets; a read workload
// commits nothing).
const (
	osdCPUGreetingRatio      = 5.0
	osdCPUGreetingFloor      = 20 * time.Millisecond
	osdCPUGreetingAloneRatio = 20.0
	osdCPUGreetingAloneFloor = 50 * time.Millisecond
)

// OSDVerdict names an OSD that holds its pool back, and why.
type OSDVerdict struct {
	OSD          int
	Host, Device string
	Cause        string // OSDCauseDisk, OSDCauseLink or OSDCauseCPU
	Summary      string
}

// CompareOSDs compares each OSD with the others, as storbench compares
// nodes, and returns a verdict for each one holding the pool back during
// workload: its process short of CPU (late to greet a connection whose
// round trip is in line: a starved OSD's commit latency and bench are
// slow too, so this comes first), its disk (bench or commit latency far
// off the others') or its host's link (busy while its disk is in line).
// A replicated write waits for every copy, so one slow OSD slows every
// write of the PGs it holds.
func CompareOSDs(workload string, osds []OSDFacts) []OSDVerdict {
	osds = countedCommits(osds)
	var out []OSDVerdict
	for i, o := range osds {
		others := append(append([]OSDFacts{}, osds[:i]...), osds[i+1:]...)
		if len(others) == 0 {
			continue
		}
		disk := diskEvidence(workload, o, others)
		if cpu := cpuEvidence(workload, o, others); cpu != "" && linkEvidence(workload, o, others) == "" {
			if len(disk) > 0 {
				cpu += "; its disk's figures follow from that (" + strings.Join(disk, "; ") + ")"
			} else if c, ok := medianLatency(o.Commit); ok && commitsHigher(o, others) {
				lo, hi, _ := commitRange(others)
				cpu += fmt.Sprintf("; its commit latency follows from that (%s against %s)", msWords(c), msRange(lo, hi))
			}
			out = append(out, OSDVerdict{OSD: o.ID, Host: o.Host, Device: o.Device, Cause: OSDCauseCPU,
				Summary: osdName(o) + ": " + cpu + "; the pool's writes wait for it"})
			continue
		}
		if len(disk) > 0 {
			out = append(out, OSDVerdict{OSD: o.ID, Host: o.Host, Device: o.Device, Cause: OSDCauseDisk,
				Summary: osdName(o) + ": " + strings.Join(disk, "; ") + "; the pool's writes wait for it"})
			continue
		}
		if link := linkEvidence(workload, o, others); link != "" {
			out = append(out, OSDVerdict{OSD: o.ID, Host: o.Host, Device: o.Device, Cause: OSDCauseLink,
				Summary: osdName(o) + ": " + link + "; the pool's writes wait for its link, not its disk"})
		}
	}
	return out
}

func osdName(o OSDFacts) string {
	s := fmt.Sprintf("osd.%d on %s", o.ID, o.Host)
	if o.Device != "" {
		s += " (" + o.Device + ")"
	}
	return s
}

// commitsHigher says o's commit latency is over osdCommitHigher times
// every other's (false when o's or every other's is unknown).
func commitsHigher(o OSDFacts, others []OSDFacts) bool {
	c, ok := medianLatency(o.Commit)
	if !ok {
		return false
	}
	_, hi, ok := commitRange(others)
	return ok && float64(c) > osdCommitHigher*float64(hi)
}

// countedCommits is osds with each one's commit latency its counters' mean
// where every OSD with a commit figure has that mean (see
// OSDFacts.CommitMean); osds as they are otherwise.
func countedCommits(osds []OSDFacts) []OSDFacts {
	n := 0
	for _, o := range osds {
		switch {
		case o.CommitMean > 0:
			n++
		case len(o.Commit) > 0:
			return osds
		}
	}
	if n == 0 {
		return osds
	}
	out := slices.Clone(osds)
	for i := range out {
		if out[i].CommitMean > 0 {
			out[i].Commit = []time.Duration{out[i].CommitMean}
		}
	}
	return out
}

// diskEvidence is what says o's disk is slow, empty when nothing does.
func diskEvidence(workload string, o OSDFacts, others []OSDFacts) []string {
	var ev []string
	commitSlow, commitHigher := false, false
	var commitWords string
	if c, ok := medianLatency(o.Commit); ok {
		if lo, hi, ok := commitRange(others); ok {
			commitSlow = c >= osdSlowCommitFloor && float64(c) > osdSlowCommitRatio*float64(hi)
			commitHigher = float64(c) > osdCommitHigher*float64(hi)
			commitWords = fmt.Sprintf("commit latency %s against %s during %s", msWords(c), msRange(lo, hi), workload)
		}
	}
	if lo, hi, ok := benchRange(others); ok && o.BenchBytesPerSec > 0 && o.BenchBytesPerSec*osdSlowBenchRatio < lo &&
		(o.BenchBytesPerSec*osdBenchAloneRatio < lo || commitHigher) {
		ev = append(ev, fmt.Sprintf("%.0f MB/s against %s MB/s for the others (ceph tell osd.N bench)", o.BenchBytesPerSec/1e6, mbRange(lo, hi)))
	}
	if commitSlow {
		ev = append(ev, commitWords)
	}
	return ev
}

// linkEvidence says o's host link binds, "" when it does not (busy under
// the threshold, or not known, or another OSD's link as busy).
func linkEvidence(workload string, o OSDFacts, others []OSDFacts) string {
	if o.LinkBytesPerSec <= 0 || o.LinkUsedBytesPerSec <= 0 {
		return rttEvidence(workload, o, others)
	}
	busy := o.LinkUsedBytesPerSec / o.LinkBytesPerSec
	if busy < osdLinkBusyFraction {
		return ""
	}
	for _, x := range others {
		if x.LinkBytesPerSec > 0 && x.LinkUsedBytesPerSec/x.LinkBytesPerSec >= busy {
			return "" // every link as busy: the network as a whole, not this OSD's
		}
	}
	s := fmt.Sprintf("its link carried %.1f MB/s of %.1f MB/s (%.0f%%) during %s", o.LinkUsedBytesPerSec/1e6, o.LinkBytesPerSec/1e6, busy*100, workload)
	return s + diskInLine(o, others)
}

// diskInLine says o's disk figures beside the others' once its link is
// named: "; its disk is in line with the others (bench ..., commit ...)".
func diskInLine(o OSDFacts, others []OSDFacts) string {
	var fine []string
	if lo, hi, ok := benchRange(others); ok && o.BenchBytesPerSec > 0 {
		fine = append(fine, fmt.Sprintf("bench %.0f MB/s against %s MB/s", o.BenchBytesPerSec/1e6, mbRange(lo, hi)))
	}
	if c, ok := medianLatency(o.Commit); ok {
		if lo, hi, ok := commitRange(others); ok {
			fine = append(fine, fmt.Sprintf("commit latency %s against %s", msWords(c), msRange(lo, hi)))
		}
	}
	if len(fine) == 0 {
		return ""
	}
	return "; its disk is in line with the others (" + strings.Join(fine, ", ") + ")"
}

func benchRange(osds []OSDFacts) (lo, hi float64, ok bool) {
	for _, o := range osds {
		if o.BenchBytesPerSec <= 0 {
			continue
		}
		if !ok || o.BenchBytesPerSec < lo {
			lo = o.BenchBytesPerSec
		}
		if !ok || o.BenchBytesPerSec > hi {
			hi = o.BenchBytesPerSec
		}
		ok = true
	}
	return lo, hi, ok
}

func commitRange(osds []OSDFacts) (lo, hi time.Duration, ok bool) {
	for _, o := range osds {
		c, has := medianLatency(o.Commit)
		if !has {
			continue
		}
		if !ok || c < lo {
			lo = c
		}
		if !ok || c > hi {
			hi = c
		}
		ok = true
	}
	return lo, hi, ok
}

// medianLatency of samples; Ceph's perf figures repeat between its refreshes, so
// the median is the typical value of the workload's span.
func medianLatency(samples []time.Duration) (time.Duration, bool) {
	if len(samples) == 0 {
		return 0, false
	}
	s := append([]time.Duration{}, samples...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], true
}

func mbRange(lo, hi float64) string {
	if fmt.Sprintf("%.0f", lo/1e6) == fmt.Sprintf("%.0f", hi/1e6) {
		return fmt.Sprintf("%.0f", lo/1e6)
	}
	return fmt.Sprintf("%.0f-%.0f", lo/1e6, hi/1e6)
}

func msWords(d time.Duration) string { return fmt.Sprintf("%d ms", d.Milliseconds()) }

func msRange(lo, hi time.Duration) string {
	if lo.Milliseconds() == hi.Milliseconds() {
		return msWords(lo)
	}
	return fmt.Sprintf("%d-%d ms", lo.Milliseconds(), hi.Milliseconds())
}

// rttEvidence says o's link is full from the round trips to the OSDs
// during the workload: o's over BrickLinkRTTRatio times every other's and
// at least BrickLinkRTTFloor (its connection waited behind the data in
// its link's queue); "" when they do not say so or were not measured.
func rttEvidence(workload string, o OSDFacts, others []OSDFacts) string {
	var lo, hi time.Duration
	n := 0
	for _, x := range others {
		if x.RTT <= 0 {
			continue
		}
		if n == 0 || x.RTT < lo {
			lo = x.RTT
		}
		hi, n = max(hi, x.RTT), n+1
	}
	if n == 0 || o.RTT < BrickLinkRTTFloor || float64(o.RTT) <= BrickLinkRTTRatio*float64(hi) {
		return ""
	}
	return fmt.Sprintf("a connection to it took %s against %s for the others during %s: its link is full (the connection waits behind the data)",
		msFine(o.RTT), msFineRange(lo, hi), workload) + diskInLine(o, others)
}

// cpuEvidence says o's process is short of CPU from the waits for the
// OSDs' banners during the workload: o's over osdCPUGreetingRatio times
// every other's and at least osdCPUGreetingFloor, its round trip not
// (the kernel answered at once; the process did not); "" otherwise.
func cpuEvidence(workload string, o OSDFacts, others []OSDFacts) string {
	var lo, hi, rlo, rhi time.Duration
	n, rn := 0, 0
	for _, x := range others {
		if x.Greeting > 0 || x.RTT > 0 {
			if n == 0 || x.Greeting < lo {
				lo = x.Greeting
			}
			hi, n = max(hi, x.Greeting), n+1
		}
		if x.RTT > 0 {
			if rn == 0 || x.RTT < rlo {
				rlo = x.RTT
			}
			rhi, rn = max(rhi, x.RTT), rn+1
		}
	}
	if n == 0 || o.Greeting < osdCPUGreetingFloor || float64(o.Greeting) <= osdCPUGreetingRatio*float64(hi) {
		return ""
	}
	alone := o.Greeting >= osdCPUGreetingAloneFloor && float64(o.Greeting) > osdCPUGreetingAloneRatio*float64(hi)
	if !alone && !commitsHigher(o, others) {
		return "" // late to greet, its work in line: a busy host, not a pool held back
	}
	if rn > 0 && o.RTT >= BrickLinkRTTFloor && float64(o.RTT) > BrickLinkRTTRatio*float64(rhi) {
		return "" // its connections waited too: its link
	}
	s := fmt.Sprintf("it greeted a new connection after %s against %s for the others during %s", msFine(o.Greeting), msFineRange(lo, hi), workload)
	if rn > 0 && o.RTT > 0 {
		s += fmt.Sprintf(", while the connection's round trip was in line (%s against %s)", msFine(o.RTT), msFineRange(rlo, rhi))
	}
	return s + ": the OSD process waits for CPU (a CPU limit on it, or a busy host), not for its disk or its link"
}
