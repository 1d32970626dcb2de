package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/storbench/storbench/internal/result"
)

// A replica node's disk is not known: every disk is sampled and the one
// that moved the most bytes is reported, its whole disk before the
// partition that carries the same traffic. Its series line up with the
// recording's rows (a failed read repeats the row before), and the
// totals count the last sliver.
func TestBusiestDiskIsReported(t *testing.T) {
	start := time.Unix(1000, 0)
	// sda1 is sda's only busy partition; nvme0n1 reads a little.
	disks := func(sdaMiB, nvmeMiB uint64) map[string]diskCounters {
		sda := diskCounters{writes: sdaMiB, writeSectors: sdaMiB * 2048, ioTicksMS: sdaMiB * 10}
		return map[string]diskCounters{"sda": sda, "sda1": sda, "nvme0n1": {reads: nvmeMiB, readSectors: nvmeMiB * 2048}}
	}
	snap := func(at time.Duration, d map[string]diskCounters) snapshot {
		return snapshot{at: start.Add(at), hasDisk: d != nil, disks: d}
	}
	a := newAccumulator(&Sampler{cfg: Config{BusiestDevice: true, Sources: map[string]string{"disk": "sampler pod ns/p"}}})
	a.add(snap(0, disks(0, 0)))
	a.add(snap(time.Second, disks(100, 5)))
	a.add(snap(2*time.Second, nil)) // a failed read
	a.add(snap(3*time.Second, disks(300, 7)))
	a.addToTotals(snap(3*time.Second+50*time.Millisecond, disks(310, 7)))
	tel := a.telemetry()
	if tel.Device != "sda" {
		t.Fatalf("device %q, want sda (the busiest, whole disk before partition)", tel.Device)
	}
	if want := "sampler pod ns/p; disk sda: the busiest while the workload ran (the disk under the data is not known)"; tel.Sources["disk"] != want {
		t.Errorf("disk source %q, want %q", tel.Sources["disk"], want)
	}
	if tel.Totals.DiskWriteBytes != 310<<20 || tel.Totals.DiskWriteIOs != 310 || tel.Totals.DiskReadBytes != 0 {
		t.Errorf("totals %+v, want sda's 310 MiB written in 310 writes", tel.Totals)
	}
	got := tel.Series.Values[result.SeriesDiskWriteBPS]
	// The failed row repeats the one before; the next is differenced
	// over the two seconds since the last reading, not one.
	want := []float64{round(100 << 20), round(100 << 20), round(100 << 20)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("write series %v, want %v", got, want)
	}
	if u := tel.Summary[result.SeriesDiskUtil]; u.Max != 100 || u.Samples != 3 {
		t.Errorf("util %+v, want 100%% over 3 samples", u)
	}
}

// No disk moved a byte: no device is named and no disk series invented.
func TestBusiestDiskNoneMoved(t *testing.T) {
	start := time.Unix(1000, 0)
	idle := map[string]diskCounters{"sda": {writes: 5, writeSectors: 40}}
	a := newAccumulator(&Sampler{cfg: Config{BusiestDevice: true}})
	a.add(snapshot{at: start, hasDisk: true, disks: idle})
	a.add(snapshot{at: start.Add(time.Second), hasDisk: true, disks: idle})
	tel := a.telemetry()
	if tel.Device != "" || tel.Sources["disk"] != "" {
		t.Errorf("device %q source %q for idle disks", tel.Device, tel.Sources["disk"])
	}
	if _, ok := tel.Series.Values[result.SeriesDiskWriteBPS]; ok {
		t.Error("a disk series for idle disks")
	}
}

// Through a root's /proc/diskstats in the kernel's format
// (Documentation/admin-guide/iostats.rst): RAM disks and zram are never
// candidates, however busy.
func TestBusiestDiskFromDiskstats(t *testing.T) {
	root := t.TempDir()
	write := func(mmcWrites, zramWrites int) {
		var b strings.Builder
		for _, d := range []struct {
			name   string
			writes int
		}{{"ram0", 0}, {"zram0", zramWrites}, {"loop0", 0}, {"mmcblk0", mmcWrites}, {"mmcblk0p2", mmcWrites}} {
			fmt.Fprintf(&b, "   1       0 %s 0 0 0 0 %d 0 %d %d 0 %d %d 0 0 0 0 0 0\n", d.name, d.writes, d.writes*8, d.writes, d.writes, d.writes)
		}
		if err := os.MkdirAll(filepath.Join(root, "proc"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "proc/diskstats"), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(0, 0)
	s := New(Config{Root: root, BusiestDevice: true, Interval: 20 * time.Millisecond})
	for _, m := range s.Missing() {
		if strings.HasPrefix(m, "diskstats") {
			t.Errorf("missing %q", m)
		}
	}
	r := s.Start()
	write(1000, 50000)
	time.Sleep(60 * time.Millisecond)
	tel := r.Stop()
	if tel.Device != "mmcblk0" || tel.Totals.DiskWriteBytes != 1000*8*512 {
		t.Errorf("device %q, %d bytes written; want mmcblk0, %d", tel.Device, tel.Totals.DiskWriteBytes, 1000*8*512)
	}
}
