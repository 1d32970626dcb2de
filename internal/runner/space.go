package runner

import (
	"fmt"

	"github.com/storbench/storbench/internal/units"
)

// MinFileSize is the smallest test file a runner reduces to when space is
// short.
const MinFileSize = 32 << 20

// MaxFill is how full storbench may make a filesystem.
const MaxFill = 0.90

// Space is a filesystem's size as statfs reports it, in bytes.
type Space struct {
	Total int64
	// Free counts the blocks reserved for root; Avail does not.
	Free  int64
	Avail int64
}

// FitFileSize checks free space and returns the test-file size that keeps
// the filesystem at most MaxFill full, with a notice when it had to be
// reduced; an error when not even MinFileSize fits. Every runner that
// writes into a filesystem it did not create applies it.
func FitFileSize(s Space, want int64) (int64, string, error) {
	used := s.Total - s.Free
	allowed := int64(float64(s.Total)*MaxFill) - used
	if s.Avail < allowed {
		allowed = s.Avail
	}
	// Leave room for fio's own metadata and rounding.
	allowed -= 1 << 20
	if want <= allowed {
		return want, "", nil
	}
	reduced := allowed &^ (1<<20 - 1)
	if reduced >= MinFileSize {
		return reduced, fmt.Sprintf("test file reduced from %s to %s so the filesystem stays at most %.0f%% full (%s free of %s)",
			units.Bytes(want), units.Bytes(reduced), MaxFill*100, units.Bytes(s.Avail), units.Bytes(s.Total)), nil
	}
	return 0, "", fmt.Errorf("not enough free space: the suite needs a %s test file, but only %s can be written before the filesystem is %.0f%% full (%s free of %s; the smallest useful test file is %s)",
		units.Bytes(want), units.Bytes(max(allowed, 0)), MaxFill*100, units.Bytes(s.Avail), units.Bytes(s.Total), units.Bytes(MinFileSize))
}
