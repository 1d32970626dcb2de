package ceph

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"
)

// LatencySum is one of Ceph's latency counters: how many operations it
// timed and their total time, both growing from the daemon's start.
type LatencySum struct {
	Count int64
	Sum   time.Duration
}

// Since is the mean latency of the operations timed between before and
// c, and their number; 0, 0 when none was (or the daemon restarted).
func (c LatencySum) Since(before LatencySum) (time.Duration, int64) {
	n := c.Count - before.Count
	if n <= 0 || c.Sum < before.Sum {
		return 0, 0
	}
	return (c.Sum - before.Sum) / time.Duration(n), n
}

// OSDCounters are the latency counters of one OSD's `ceph tell osd.N perf
// dump` storbench reads around a workload.
type OSDCounters struct {
	OSD int
	// DeviceWait is BlueStore's state_aio_wait_lat: each transaction's
	// wait for its writes to reach the device.
	DeviceWait LatencySum
	// Commit is BlueStore's commit_lat: each transaction, submitted to
	// committed.
	Commit LatencySum
	// ClientWrite is the OSD's op_w_latency: each client write, received
	// to answered (the replicas' commits included, on a primary).
	ClientWrite LatencySum
}

// PerfDump reads osd's counters.
func (c Client) PerfDump(ctx context.Context, osd int) (OSDCounters, error) {
	b, err := c.JSON(ctx, "tell", "osd."+strconv.Itoa(osd), "perf", "dump")
	if err != nil {
		return OSDCounters{}, err
	}
	return ParsePerfDump(osd, b)
}

// ParsePerfDump reads the counters OSDCounters holds from a `perf dump`.
func ParsePerfDump(osd int, b []byte) (OSDCounters, error) {
	type sum struct {
		Count int64   `json:"avgcount"`
		Sum   float64 `json:"sum"` // seconds
	}
	var d struct {
		BlueStore *struct {
			AIOWait sum `json:"state_aio_wait_lat"`
			Commit  sum `json:"commit_lat"`
		} `json:"bluestore"`
		OSD *struct {
			Write sum `json:"op_w_latency"`
		} `json:"osd"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return OSDCounters{}, fmt.Errorf("osd.%d perf dump: %w", osd, err)
	}
	if d.BlueStore == nil || d.OSD == nil {
		return OSDCounters{}, fmt.Errorf("osd.%d perf dump: no bluestore or osd section (not a BlueStore OSD?)", osd)
	}
	conv := func(s sum) LatencySum {
		return LatencySum{Count: s.Count, Sum: time.Duration(s.Sum * float64(time.Second))}
	}
	return OSDCounters{OSD: osd, DeviceWait: conv(d.BlueStore.AIOWait), Commit: conv(d.BlueStore.Commit), ClientWrite: conv(d.OSD.Write)}, nil
}
