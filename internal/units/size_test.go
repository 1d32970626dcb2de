package units

import (
	"math"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int64
		err  string
	}{
		// Suite files and flags as they are written today.
		{"4KiB", 4 << 10, ""}, {"1MiB", 1 << 20, ""}, {"1GiB", 1 << 30, ""}, {"520MB", 520e6, ""},
		{"2300", 2300, ""}, {"4k", 4096, ""}, {"1M", 1 << 20, ""}, {"1G", 1 << 30, ""},
		{"1.5GiB", 3 << 29, ""}, {"10 kB", 10000, ""}, {"10KB", 10000, ""}, {" 1.5 KiB ", 1536, ""},
		{"1tb", 1e12, ""}, {"64kib", 64 << 10, ""}, {"0", 0, ""}, {"512B", 512, ""},
		{"0.5GiB", 1 << 29, ""},
		{"9223372036854775807", math.MaxInt64, ""},
		{"8388607TiB", 8388607 << 40, ""},
		{"9223372036854775808", 0, "too large"},
		{"8388608TiB", 0, "too large"},
		{"8388608.5TiB", 0, "too large"},
		{"100000000000000000000000", 0, "too large"},
		{"9999999999TB", 0, "too large"},
		{"-1MiB", 0, "not a size"},
		{"NaN", 0, "not a size"},
		{"InfGiB", 0, "not a size"},
		{"0x10", 0, "not a size"},
		{"1e3", 0, "not a size"},
		{"", 0, "not a size"}, {"MiB", 0, "not a size"}, {"4XB", 0, "unknown unit"}, {"12 parsecs", 0, "unknown unit"},
	} {
		got, err := ParseSize(tt.in)
		if tt.err == "" && (err != nil || got != tt.want) {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseSize(%q) = %d, %v; want an error saying %q", tt.in, got, err, tt.err)
		}
	}
}

// TestParseFioSize pins fio's own reading, checked against fio 3.33: with
// the default kb_base "1MiB" is 1000000 bytes and "1MB" 1048576.
func TestParseFioSize(t *testing.T) {
	for _, tt := range []struct {
		in     string
		kbBase int64
		want   int64
	}{
		{"1M", 0, 1 << 20}, {"1MB", 0, 1 << 20}, {"1m", 0, 1 << 20}, {"1Mi", 0, 1 << 20},
		{"1MiB", 0, 1e6}, {"1mib", 0, 1e6}, {"4k", 0, 4096}, {"4096", 0, 4096}, {"4096b", 0, 4096},
		{"1G", 0, 1 << 30}, {"1GiB", 0, 1e9}, {"2t", 0, 2 << 40}, {"1p", 0, 1 << 50},
		{"1M", 1000, 1e6}, {"1MiB", 1000, 1 << 20}, {"4KB", 1000, 4000},
	} {
		if got, err := ParseFioSize(tt.in, tt.kbBase); err != nil || got != tt.want {
			t.Errorf("ParseFioSize(%q, %d) = %d, %v; want %d", tt.in, tt.kbBase, got, err, tt.want)
		}
	}
	for _, bad := range []string{"50%", "", "lots", "4x"} {
		if got, err := ParseFioSize(bad, 0); err == nil {
			t.Errorf("ParseFioSize(%q) = %d, want an error", bad, got)
		}
	}
}

func TestBytesExact(t *testing.T) {
	for in, want := range map[int64]string{1 << 20: "1MiB", 2300: "2300", 3 << 29: "1536MiB", 1 << 40: "1TiB", 0: "0"} {
		if got := BytesExact(in); got != want {
			t.Errorf("BytesExact(%d) = %q, want %q", in, got, want)
		}
		if back, err := ParseSize(BytesExact(in)); err != nil || back != in {
			t.Errorf("ParseSize(BytesExact(%d)) = %d, %v", in, back, err)
		}
	}
}
