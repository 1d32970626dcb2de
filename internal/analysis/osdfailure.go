package analysis

import (
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// RatePoint is one period of a writer's throughput log (fio's bandwidth
// log): At is the end of the period, from the start of the job.
type RatePoint struct {
	At          time.Duration
	BytesPerSec float64
}

// OSDFailure is one OSD fault injected under a running writer, timed.
type OSDFailure struct {
	Fault string // "killed" (SIGKILL), "frozen" (SIGSTOP), "cut off" (its link down)
	OSD   int
	Host  string
	// FaultAt and RestoredAt are from the writer's start; RestoredAt 0:
	// not restored during the write.
	FaultAt, RestoredAt time.Duration
	// MarkedDown is how long after the fault the monitors marked the OSD
	// down; CleanAfter how long after the restore every PG was
	// active+clean again.
	MarkedDown, CleanAfter time.Duration
	// Log is the writer's throughput log.
	Log []RatePoint
	// Verified says the writer read back every block it wrote with a
	// matching checksum; VerifyError is its complaint otherwise.
	Verified    bool
	VerifyError string
}

// Stall is the longest time after the fault without a completed write:
// the gap between two periods with throughput, less one period.
func (f OSDFailure) Stall() time.Duration {
	period := periodOf(f.Log)
	var stall, last time.Duration
	seen := false
	for _, p := range f.Log {
		if p.BytesPerSec <= 0 {
			continue
		}
		if gap := p.At - last - period; seen && p.At > f.FaultAt && gap > stall {
			stall = gap
		}
		last, seen = p.At, true
	}
	return stall
}

// periodOf is the log's averaging period: its first entry's end.
func periodOf(log []RatePoint) time.Duration {
	if len(log) == 0 {
		return 0
	}
	return log[0].At
}

// Throughput before the fault, and while the OSD was down (from its
// mark-down to its restore, or to the end of the write).
func (f OSDFailure) Throughput() (beforeBPS, degradedBPS float64) {
	end := f.RestoredAt
	if end == 0 && len(f.Log) > 0 {
		end = f.Log[len(f.Log)-1].At
	}
	return meanRate(f.Log, 0, f.FaultAt), meanRate(f.Log, f.FaultAt+f.MarkedDown, end)
}

func meanRate(log []RatePoint, from, to time.Duration) float64 {
	sum, n := 0.0, 0
	for _, p := range log {
		if p.At > from && p.At <= to {
			sum += p.BytesPerSec
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// Check states the failure as a check of the class or cluster: failed
// when the data did not verify or the OSD was never marked down.
func (f OSDFailure) Check() result.Check {
	before, degraded := f.Throughput()
	c := result.Check{Area: "ceph", Name: fmt.Sprintf("osd.%d %s during a write", f.OSD, f.Fault), Status: result.CheckOK}
	c.Detail = fmt.Sprintf("osd.%d on %s %s %s into the write: marked down %s later; the writer stalled %s; %.0f MB/s before, %.0f MB/s while it was down",
		f.OSD, f.Host, f.Fault, f.FaultAt.Round(100*time.Millisecond), f.MarkedDown.Round(100*time.Millisecond),
		f.Stall().Round(100*time.Millisecond), before/1e6, degraded/1e6)
	if f.RestoredAt > 0 {
		c.Detail += fmt.Sprintf("; back at %s, every PG active+clean %s later", f.RestoredAt.Round(100*time.Millisecond), f.CleanAfter.Round(100*time.Millisecond))
	}
	switch {
	case !f.Verified:
		c.Status, c.Fix = result.CheckFail, "data written around the failure did not read back: "+f.VerifyError
		c.Detail += "; data NOT verified"
	case f.MarkedDown <= 0:
		c.Status, c.Fix = result.CheckFail, "the monitors never marked the OSD down: check mon_osd_down_out_interval and the OSDs' heartbeats"
	default:
		c.Detail += "; every block verified by checksum"
	}
	return c
}
