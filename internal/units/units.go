// Package units formats and converts measurements. storbench stores bytes
// per second and nanoseconds; people read MB/s, MiB/s, µs and ms, always
// labelled.
package units

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Throughput units users may choose. Decimal units (MB/s) are powers of
// 1000, binary ones (MiB/s) powers of 1024.
var throughput = map[string]float64{
	"B/s": 1, "kB/s": 1e3, "KB/s": 1e3, "MB/s": 1e6, "GB/s": 1e9,
	"KiB/s": 1 << 10, "MiB/s": 1 << 20, "GiB/s": 1 << 30,
	"TB/s": 1e12, "TiB/s": 1 << 40,
}

// Latency units users may choose.
var latency = map[string]float64{"ns": 1, "us": 1e3, "µs": 1e3, "ms": 1e6, "s": 1e9}

// ThroughputFactor returns bytes per second in one unit, and whether the
// unit is known.
func ThroughputFactor(unit string) (float64, bool) { f, ok := throughput[unit]; return f, ok }

// LatencyFactor returns nanoseconds in one unit, and whether it is known.
func LatencyFactor(unit string) (float64, bool) { f, ok := latency[unit]; return f, ok }

// MBps formats bytes/s as decimal megabytes per second: "123.4 MB/s".
func MBps(bytesPerSec float64) string {
	return fmt.Sprintf("%s MB/s", sig(bytesPerSec/1e6))
}

// In formats a base-unit value (bytes/s or ns) in the named unit.
func In(value float64, unit string) string {
	if f, ok := throughput[unit]; ok {
		return sig(value/f) + " " + unit
	}
	if f, ok := latency[unit]; ok {
		return sig(value/f) + " " + unit
	}
	if unit == "IOPS" {
		return IOPS(value) + " IOPS"
	}
	return sig(value) + " " + unit
}

// IOPS formats an I/O rate: "81.2k IOPS" style without the word.
func IOPS(v float64) string {
	switch {
	case v >= 1e6:
		return sig(v/1e6) + "M"
	case v >= 1e4:
		return sig(v/1e3) + "k"
	}
	return sig(v)
}

// Latency formats a duration in the unit that keeps 3-4 significant digits:
// "812 µs", "4.21 ms", "1.20 s".
func Latency(d time.Duration) string {
	ns := float64(d)
	switch {
	case d <= 0:
		return "-"
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return sig(ns/1e3) + " µs"
	case ns < 1e9:
		return sig(ns/1e6) + " ms"
	}
	return sig(ns/1e9) + " s"
}

// Bytes formats a byte count in binary units: "1.0 GiB".
func Bytes(b int64) string {
	f := float64(b)
	for _, u := range []string{"B", "KiB", "MiB", "GiB", "TiB"} {
		if math.Abs(f) < 1024 || u == "TiB" {
			if u == "B" {
				return fmt.Sprintf("%d B", b)
			}
			return fmt.Sprintf("%.1f %s", f, u)
		}
		f /= 1024
	}
	return ""
}

// sig prints about 3-4 significant digits without trailing noise.
func sig(v float64) string {
	a := math.Abs(v)
	var s string
	switch {
	case a == 0:
		return "0"
	case a >= 1000:
		s = fmt.Sprintf("%.0f", v)
	case a >= 100:
		s = fmt.Sprintf("%.1f", v)
	case a >= 10:
		s = fmt.Sprintf("%.2f", v)
	default:
		s = fmt.Sprintf("%.3f", v)
	}
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
