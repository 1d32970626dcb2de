package units

import (
	"testing"
	"time"
)

func TestFormatting(t *testing.T) {
	cases := []struct{ got, want string }{
		{Latency(812 * time.Microsecond), "812 µs"},
		{Latency(4210 * time.Microsecond), "4.21 ms"},
		{Latency(1200 * time.Millisecond), "1.2 s"},
		{Latency(950), "950 ns"},
		{Latency(0), "-"},
		{IOPS(81234), "81.23k"},
		{IOPS(2519), "2519"},
		{IOPS(1.5e6), "1.5M"},
		{MBps(432.3e6), "432.3 MB/s"},
		{In(1<<20, "MiB/s"), "1 MiB/s"},
		{In(5e6, "ms"), "5 ms"},
		{Bytes(64 << 20), "64.0 MiB"},
		{Bytes(512), "512 B"},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
	if f, ok := ThroughputFactor("MB/s"); !ok || f != 1e6 {
		t.Error("MB/s factor")
	}
	if f, ok := ThroughputFactor("MiB/s"); !ok || f != 1<<20 {
		t.Error("MiB/s factor")
	}
	if _, ok := LatencyFactor("fortnights"); ok {
		t.Error("unknown unit accepted")
	}
}
