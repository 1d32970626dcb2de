package telemetry

import (
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// The last sliver of a recording (under a tenth of the interval) is no
// sample of the series, but the I/O done in it counts in the totals: a
// device target's test saw 140 of fio's 256 writes when fio ended just
// after a tick.
func TestLastSliverCountsInTotals(t *testing.T) {
	start := time.Unix(1000, 0)
	disk := func(at time.Duration, writes uint64) snapshot {
		return snapshot{at: start.Add(at), hasDisk: true, disk: diskCounters{writes: writes, writeSectors: writes * 128}}
	}
	a := newAccumulator(&Sampler{})
	a.add(disk(0, 0))
	a.add(disk(time.Second, 140))
	a.addToTotals(disk(time.Second+50*time.Millisecond, 256))
	tel := a.telemetry()
	if tel.Totals.DiskWriteIOs != 256 || tel.Totals.DiskWriteBytes != 256*64<<10 {
		t.Errorf("totals %d writes, %d bytes; want 256, %d", tel.Totals.DiskWriteIOs, tel.Totals.DiskWriteBytes, 256*64<<10)
	}
	if tel.Totals.Elapsed != time.Second+50*time.Millisecond {
		t.Errorf("elapsed %s", tel.Totals.Elapsed)
	}
	if n := len(tel.Series.OffsetsMS); n != 1 {
		t.Errorf("%d samples, want the one full interval", n)
	}
}

// A failed read of a counter widens the next interval: the counter moved
// over both seconds since it was last read, and its rate says so.
func TestFailedReadWidensTheNextInterval(t *testing.T) {
	start := time.Unix(1000, 0)
	a := newAccumulator(&Sampler{})
	a.add(snapshot{at: start, hasDisk: true, hasNet: true})
	a.add(snapshot{at: start.Add(time.Second)}) // neither read
	a.add(snapshot{at: start.Add(2 * time.Second), hasDisk: true, disk: diskCounters{writes: 200, writeSectors: 200 * 2048},
		hasNet: true, rx: 200e6})
	tel := a.telemetry()
	if got := tel.Summary[result.SeriesDiskWriteBPS].Max; got != round(100<<20) {
		t.Errorf("disk write %g B/s, want %g (200 MiB over 2 s)", got, round(100<<20))
	}
	if got := tel.Summary[result.SeriesNetRxBPS].Max; got != 100e6 {
		t.Errorf("network in %g B/s, want 1e8 (200 MB over 2 s)", got)
	}
}
