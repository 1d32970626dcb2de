package telemetry

import (
	"maps"
	"math"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// accumulator turns successive snapshots into per-interval figures and
// running totals.
type accumulator struct {
	s       *Sampler
	first   snapshot
	last    snapshot
	n       int // snapshots seen
	offsets []int64
	values  map[string][]float64
	totals  result.TelemetryTotals
	throt   uint32
	cpus    int
	// busy holds, in BusiestDevice mode, every interval's counters of
	// every disk: which disk is reported is known only at the end.
	busy []diskInterval
}

// diskInterval is one interval's disk counters at its two ends, and the
// series row it makes (-1: the totals only).
type diskInterval struct {
	prev, cur map[string]diskCounters
	dt        time.Duration
	row       int
}

func newAccumulator(s *Sampler) *accumulator {
	return &accumulator{s: s, values: map[string][]float64{}}
}

// add records a snapshot. Counters are differenced against the previous
// snapshot that had the same source, so a failed read widens one interval
// instead of inventing a zero.
func (a *accumulator) add(sn snapshot) { a.record(sn, true) }

// addToTotals records a snapshot in the totals only, not as a row of the
// series: the last sliver of a recording, too short to be a sample, still
// holds I/O and CPU time the totals must count.
func (a *accumulator) addToTotals(sn snapshot) { a.record(sn, false) }

func (a *accumulator) record(sn snapshot, row bool) {
	a.n++
	if a.n == 1 {
		a.first, a.last = sn, sn
		if sn.hasCPU {
			a.cpus = len(sn.cores)
		}
		return
	}
	prev := a.last
	dt := sn.at.Sub(prev.at)
	if dt <= 0 {
		return
	}
	vals := map[string]float64{}
	if sn.hasCPU && prev.hasCPU {
		a.addCPU(vals, prev, sn)
	}
	if sn.hasDisk && prev.hasDisk {
		dt := sn.at.Sub(prev.sourceAt(prev.diskAt))
		if sn.disks != nil {
			r := -1
			if row {
				r = len(a.offsets)
			}
			a.busy = append(a.busy, diskInterval{prev: prev.disks, cur: sn.disks, dt: dt, row: r})
		} else {
			a.addDisk(vals, prev.disk, sn.disk, dt)
		}
	}
	if sn.hasPSI && prev.hasPSI {
		us := float64(sn.at.Sub(prev.sourceAt(prev.psiAt)).Microseconds())
		vals[result.SeriesIOPressureSome] = min(100, 100*float64(sub(sn.psiSome, prev.psiSome))/us)
		vals[result.SeriesIOPressureFull] = min(100, 100*float64(sub(sn.psiFull, prev.psiFull))/us)
	}
	a.addGauges(vals, sn)
	if sn.hasNet && prev.hasNet {
		a.addNet(vals, prev, sn, sn.at.Sub(prev.sourceAt(prev.netAt)).Seconds())
	}
	if row {
		a.appendRow(sn.at.Sub(a.first.at), vals)
	}
	a.totals.Elapsed = sn.at.Sub(a.first.at)
	a.last = keepNewest(prev, sn)
}

// addCPU adds the interval's CPU shares (whole host and busiest core) and
// the busy, user and system time to the totals.
func (a *accumulator) addCPU(vals map[string]float64, prev, sn snapshot) {
	d := diff(prev.cpu, sn.cpu)
	if tot := float64(d.total()); tot > 0 {
		vals[result.SeriesCPUBusy] = 100 * float64(d.busy()) / tot
		vals[result.SeriesCPUUser] = 100 * float64(d.user+d.nice) / tot
		vals[result.SeriesCPUSystem] = 100 * float64(d.system+d.irq+d.softirq) / tot
		vals[result.SeriesCPUIOWait] = 100 * float64(d.iowait) / tot
		vals[result.SeriesCPUSteal] = 100 * float64(d.steal) / tot
	}
	var peak float64
	for i := 0; i < len(sn.cores) && i < len(prev.cores); i++ {
		c := diff(prev.cores[i], sn.cores[i])
		if tot := float64(c.total()); tot > 0 {
			peak = max(peak, 100*float64(c.busy())/tot)
		}
	}
	if len(sn.cores) > 0 {
		vals[result.SeriesCPUCoreMaxBusy] = peak
	}
	a.totals.CPUBusy += ticks(d.busy())
	a.totals.CPUUser += ticks(d.user + d.nice)
	a.totals.CPUSystem += ticks(d.system + d.irq + d.softirq)
}

// addDisk adds the device's utilisation, queue, bytes and I/Os per second
// over dt, and its bytes and I/Os to the totals.
func (a *accumulator) addDisk(vals map[string]float64, p, d diskCounters, dt time.Duration) {
	secs := dt.Seconds()
	if ms := float64(dt.Milliseconds()); ms > 0 {
		vals[result.SeriesDiskUtil] = min(100, 100*float64(sub(d.ioTicksMS, p.ioTicksMS))/ms)
		vals[result.SeriesDiskQueue] = float64(sub(d.weightedMS, p.weightedMS)) / ms
	}
	rb, wb := 512*sub(d.readSectors, p.readSectors), 512*sub(d.writeSectors, p.writeSectors)
	ri, wi := sub(d.reads, p.reads), sub(d.writes, p.writes)
	vals[result.SeriesDiskReadBPS] = float64(rb) / secs
	vals[result.SeriesDiskWriteBPS] = float64(wb) / secs
	vals[result.SeriesDiskReadIOPS] = float64(ri) / secs
	vals[result.SeriesDiskWriteIOPS] = float64(wi) / secs
	a.totals.DiskReadBytes += int64(rb)
	a.totals.DiskWriteBytes += int64(wb)
	a.totals.DiskReadIOs += int64(ri)
	a.totals.DiskWriteIOs += int64(wi)
}

// addGauges adds what is read as it stands, not differenced: temperature,
// frequency and throttling.
func (a *accumulator) addGauges(vals map[string]float64, sn snapshot) {
	if sn.hasTemp {
		vals[result.SeriesCPUTemp] = sn.tempC
	}
	if sn.hasFreq {
		vals[result.SeriesCPUFreq] = sn.freqMHz
	}
	if sn.hasThrot {
		// The low bits are the current state; the high ones are sticky
		// "since boot" flags that say nothing about this workload.
		now := sn.throttled & 0xF
		vals[result.SeriesThrottled] = float64(now)
		a.throt |= now
	}
}

// addNet adds the interface's bytes per second each way and the link's
// use, and the bytes to the totals.
func (a *accumulator) addNet(vals map[string]float64, prev, sn snapshot, secs float64) {
	rx, tx := sub(sn.rx, prev.rx), sub(sn.tx, prev.tx)
	vals[result.SeriesNetRxBPS] = float64(rx) / secs
	vals[result.SeriesNetTxBPS] = float64(tx) / secs
	if a.s.linkBPS > 0 {
		vals[result.SeriesNetLinkUtil] = 100 * float64(max(rx, tx)) / secs / a.s.linkBPS
	}
	a.totals.NetRxBytes += int64(rx)
	a.totals.NetTxBytes += int64(tx)
}

// appendRow adds one interval's values at offset, keeping every column as
// long as the offsets.
func (a *accumulator) appendRow(offset time.Duration, vals map[string]float64) {
	i := len(a.offsets)
	a.offsets = append(a.offsets, offset.Milliseconds())
	for name, v := range vals {
		col := a.values[name]
		// A series that starts late (its source failed at first) is padded
		// with its first value so every column lines up with the offsets.
		for len(col) < i {
			col = append(col, round(v))
		}
		a.values[name] = append(col, round(v))
	}
	for name, col := range a.values {
		if len(col) < i+1 {
			a.values[name] = append(col, col[len(col)-1]) // a failed read repeats the previous value
		}
	}
}

// keepNewest is sn with, per source it failed to read, prev's reading
// and when it was taken: the newest snapshot that had each source, to
// difference the next against over the whole time since.
func keepNewest(prev, sn snapshot) snapshot {
	keep := sn
	if !sn.hasCPU {
		keep.cpu, keep.cores, keep.hasCPU = prev.cpu, prev.cores, prev.hasCPU
	}
	if !sn.hasDisk {
		keep.disk, keep.disks, keep.hasDisk, keep.diskAt = prev.disk, prev.disks, prev.hasDisk, prev.sourceAt(prev.diskAt)
	}
	if !sn.hasPSI {
		keep.psiSome, keep.psiFull, keep.hasPSI, keep.psiAt = prev.psiSome, prev.psiFull, prev.hasPSI, prev.sourceAt(prev.psiAt)
	}
	if !sn.hasNet {
		keep.rx, keep.tx, keep.hasNet, keep.netAt = prev.rx, prev.tx, prev.hasNet, prev.sourceAt(prev.netAt)
	}
	return keep
}

// sourceAt is when a source's reading kept in sn was taken: at, or sn's
// own time when it was read in sn.
func (sn snapshot) sourceAt(at time.Time) time.Time {
	if at.IsZero() {
		return sn.at
	}
	return at
}

// busiestDisk picks, in BusiestDevice mode, the disk that moved the most
// bytes over the recording (on a tie the shorter name: a whole disk before
// its partition), and adds its series and totals as addDisk would have;
// "" when no disk moved any.
func (a *accumulator) busiestDisk() string {
	if len(a.busy) == 0 {
		return ""
	}
	moved := map[string]uint64{}
	for _, iv := range a.busy {
		for name, d := range iv.cur {
			if p, ok := iv.prev[name]; ok {
				moved[name] += sub(d.readSectors, p.readSectors) + sub(d.writeSectors, p.writeSectors)
			}
		}
	}
	dev := ""
	for name, n := range moved {
		if n == 0 {
			continue
		}
		if dev == "" || n > moved[dev] || n == moved[dev] && (len(name) < len(dev) || len(name) == len(dev) && name < dev) {
			dev = name
		}
	}
	if dev == "" {
		return ""
	}
	cols := map[string][]float64{}
	for _, iv := range a.busy {
		p, ok1 := iv.prev[dev]
		d, ok2 := iv.cur[dev]
		if !ok1 || !ok2 {
			continue
		}
		vals := map[string]float64{}
		a.addDisk(vals, p, d, iv.dt)
		if iv.row < 0 {
			continue
		}
		for name, v := range vals {
			col := cols[name]
			if col == nil {
				col = make([]float64, len(a.offsets))
				for i := range col {
					col[i] = math.NaN()
				}
				cols[name] = col
			}
			col[iv.row] = round(v)
		}
	}
	// As appendRow does: rows before the disk's first reading take that
	// reading, a row whose read failed repeats the one before.
	for name, col := range cols {
		first := math.NaN()
		for _, v := range col {
			if !math.IsNaN(v) {
				first = v
				break
			}
		}
		prev := first
		for i, v := range col {
			if math.IsNaN(v) {
				col[i] = prev
			} else {
				prev = v
			}
		}
		a.values[name] = col
	}
	return dev
}

// telemetry condenses what was recorded.
func (a *accumulator) telemetry() *result.Telemetry {
	s := a.s
	t := &result.Telemetry{
		Host: s.cfg.Host, Interval: s.cfg.Interval, CPUs: a.cpus, Device: s.cfg.Device,
		Interface: s.cfg.Interface, LinkBytesPerSec: s.linkBPS, MaxFreqMHz: s.maxMHz,
		Throttled: a.throt, Missing: s.Missing(), Totals: a.totals,
	}
	if len(s.cfg.Sources) > 0 {
		t.Sources = maps.Clone(s.cfg.Sources)
	}
	if dev := a.busiestDisk(); dev != "" {
		t.Device = dev
		t.Totals = a.totals
		if t.Sources == nil {
			t.Sources = map[string]string{}
		}
		why := "disk " + dev + ": the busiest while the workload ran (the disk under the data is not known)"
		if src := t.Sources["disk"]; src != "" {
			why = src + "; " + why
		}
		t.Sources["disk"] = why
	}
	if len(a.offsets) == 0 {
		return t
	}
	t.Summary = map[string]result.Summary{}
	for name, col := range a.values {
		sum := result.Summary{Min: col[0], Max: col[0], Samples: len(col)}
		var total float64
		for _, v := range col {
			sum.Min, sum.Max = min(sum.Min, v), max(sum.Max, v)
			total += v
		}
		sum.Mean = round(total / float64(len(col)))
		t.Summary[name] = sum
	}
	t.Series = &result.TelemetrySeries{OffsetsMS: a.offsets, Values: a.values}
	return t
}

func diff(a, b cpuTimes) cpuTimes {
	return cpuTimes{
		user: sub(b.user, a.user), nice: sub(b.nice, a.nice), system: sub(b.system, a.system),
		idle: sub(b.idle, a.idle), iowait: sub(b.iowait, a.iowait), irq: sub(b.irq, a.irq),
		softirq: sub(b.softirq, a.softirq), steal: sub(b.steal, a.steal),
	}
}

// sub differences two counters; a counter that went backwards (iowait can,
// and a device can be re-created) counts as no progress.
func sub(b, a uint64) uint64 {
	if b < a {
		return 0
	}
	return b - a
}

func ticks(n uint64) time.Duration { return time.Duration(n) * (time.Second / userHZ) }
