package telemetry

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rootDevice names the block device holding the working directory.
func rootDevice(b *testing.B) string {
	var st unix.Stat_t
	if err := unix.Stat(".", &st); err != nil {
		b.Fatal(err)
	}
	target, err := filepath.EvalSymlinks(filepath.Join("/sys/dev/block", fmtDev(st.Dev)))
	if err != nil {
		return ""
	}
	if _, err := os.Stat(target); err != nil {
		return ""
	}
	return filepath.Base(target)
}

func fmtDev(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

// BenchmarkSample measures one sample of this host (every source it has)
// plus its accumulation: the work a Recording does once a second.
func BenchmarkSample(b *testing.B) {
	s := New(Config{Device: rootDevice(b)})
	b.Logf("device %q, missing %v", s.cfg.Device, s.missing)
	acc := newAccumulator(s)
	buf := make([]byte, 0, 16<<10)
	start := time.Now()
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		acc.add(s.read(start.Add(time.Duration(i+1)*time.Second), buf))
	}
}
