package spec

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseDurationBounds(t *testing.T) {
	tests := []struct {
		in   string
		want time.Duration
		err  string
	}{
		{"10s", 10 * time.Second, ""},
		{"1.5", 1500 * time.Millisecond, ""},
		{"2562047h", 2562047 * time.Hour, ""},
		{"2562048h", 0, "too large"},
		{"9999999999h", 0, "too large"},
		{"300000000000s", 0, "too large"},
		{"9999999999999", 0, "too large"},
		{"-5s", 0, "negative"},
		{"h", 0, "not a duration"},
		{"soon", 0, "not a duration"},
	}
	for _, tt := range tests {
		got, err := ParseDuration(tt.in)
		if tt.err == "" && (err != nil || time.Duration(got) != tt.want) {
			t.Errorf("ParseDuration(%q) = %s, %v; want %s", tt.in, got, err, tt.want)
		}
		if tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("ParseDuration(%q) = %s, %v; want an error saying %q", tt.in, got, err, tt.err)
		}
	}
}

// A suite file's overflowing size, runtime or ramp is refused as too large,
// with the file and line.
func TestSuiteOverflowSaysTooLargeWhere(t *testing.T) {
	for field, value := range map[string]string{"size": "99999999TiB", "runtime": "9999999999h", "ramp": "99999999999999"} {
		t.Run(field, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "big.yaml")
			suite := "name: big\nworkloads:\n  - name: a\n    rw: read\n    bs: 4KiB\n    " + field + ": " + value + "\n"
			if err := os.WriteFile(path, []byte(suite), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(path)
			if err == nil || !strings.Contains(err.Error(), "big.yaml:6") || !strings.Contains(err.Error(), "too large") {
				t.Fatalf("Load: %v; want big.yaml:6 ... too large", err)
			}
			if strings.Contains(err.Error(), "-") {
				t.Errorf("a negative number in the error: %v", err)
			}
		})
	}
}
