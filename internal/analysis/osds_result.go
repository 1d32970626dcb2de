package analysis

import (
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// OSDCauseDown names an OSD of the pool that was not up during the
// workload: the pool ran degraded, with fewer copies than its size.
const OSDCauseDown = "down"

// ResultOSDVerdict is an OSD verdict on one stored result.
type ResultOSDVerdict struct {
	Target   string `json:"target"`
	Workload string `json:"workload"`
	Round    string `json:"round"`
	OSDVerdict
}

// OSDVerdicts compares the OSDs each result's telemetry measured
// (result.Telemetry.OSDs: an RBD target's pool, with telemetry) and
// returns the verdicts, in result order: an OSD that was down, and the
// ones CompareOSDs finds holding the pool back. An OSD host's link usage
// comes from the result's sampled nodes where one is that host.
func OSDVerdicts(results []result.Result) []ResultOSDVerdict {
	var out []ResultOSDVerdict
	for _, r := range results {
		tm := r.Telemetry
		if tm == nil || len(tm.OSDs) == 0 || r.Status != result.StatusComplete {
			continue
		}
		add := func(v OSDVerdict) {
			out = append(out, ResultOSDVerdict{Target: r.Target, Workload: r.Workload, Round: r.Round, OSDVerdict: v})
		}
		var facts []OSDFacts
		for _, o := range tm.OSDs {
			if !o.Up {
				f := OSDFacts{ID: o.ID, Host: o.Host, Device: o.Device}
				add(OSDVerdict{OSD: o.ID, Host: o.Host, Device: o.Device, Cause: OSDCauseDown,
					Summary: fmt.Sprintf("%s was down during %s: the pool ran with fewer copies than its size", osdName(f), r.Workload)})
				continue
			}
			f := OSDFacts{ID: o.ID, Host: o.Host, Device: o.Device, BenchBytesPerSec: o.BenchBytesPerSec, Commit: o.Commit, CommitMean: o.CommitMean, RTT: o.RTT, Greeting: o.Greeting}
			f.LinkBytesPerSec, f.LinkUsedBytesPerSec = nodeLinkUse(tm, o.Host)
			facts = append(facts, f)
		}
		for _, v := range CompareOSDs(r.Workload, facts) {
			add(v)
		}
	}
	return out
}

// nodeLinkUse is a sampled node's link capacity and its busier
// direction's average over the workload; zeros when host was not sampled.
func nodeLinkUse(tm *result.Telemetry, host string) (capacity, used float64) {
	for _, n := range tm.Nodes {
		if n == nil || n.Host != host || n.LinkBytesPerSec <= 0 || n.Totals.Elapsed <= 0 {
			continue
		}
		bytes := max(n.Totals.NetRxBytes, n.Totals.NetTxBytes)
		return n.LinkBytesPerSec, float64(bytes) / (float64(n.Totals.Elapsed) / float64(time.Second))
	}
	return 0, 0
}
