package spec

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// Size is a byte count written as 4KiB, 1MiB, 1GiB (binary), 520MB (decimal)
// or a plain number of bytes. K, M, G and T alone are binary, as in fio.
type Size int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1000}, {"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"TB", 1000 * 1000 * 1000 * 1000},
	{"k", 1 << 10}, {"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// sizeNumber is what may precede a size's unit: digits, with a fraction.
var sizeNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// ParseSize reads a size such as "64MiB", "520MB", "4k" or "2300". A size
// beyond what int64 bytes hold (8 EiB) is "too large", never wrapped.
func ParseSize(s string) (Size, error) {
	t := strings.TrimSpace(s)
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	if !sizeNumber.MatchString(t) {
		return 0, fmt.Errorf("%q is not a size (examples: 4KiB, 1MiB, 520MB, 2300)", s)
	}
	tooLarge := fmt.Errorf("%q is too large: sizes go up to %d bytes (8 EiB)", s, int64(math.MaxInt64))
	if n, err := strconv.ParseInt(t, 10, 64); err == nil {
		if n > math.MaxInt64/mult {
			return 0, tooLarge
		}
		return Size(n * mult), nil
	} else if !strings.Contains(t, ".") {
		return 0, tooLarge // all digits, beyond int64
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size (examples: 4KiB, 1MiB, 520MB, 2300)", s)
	}
	// float64(MaxInt64) rounds up to 2^63, itself out of range.
	if v := f * float64(mult); v >= math.MaxInt64 {
		return 0, tooLarge
	}
	return Size(f * float64(mult)), nil
}

// UnmarshalYAML accepts a number of bytes or a string with a unit.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = v
	return nil
}

// MarshalYAML writes the size in the largest exact binary unit.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// String formats the size exactly, in the largest binary unit that divides it.
func (s Size) String() string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if int64(s) >= u.mult && int64(s)%u.mult == 0 {
			return fmt.Sprintf("%d%s", int64(s)/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(int64(s), 10)
}

// Duration is a time span written as Go durations are: 500ms, 10s, 2m.
type Duration time.Duration

// ParseDuration reads a Go duration ("10s", "500ms", "2m") or a bare
// number of seconds. A duration beyond what int64 nanoseconds hold (about
// 292 years) is "too large", never wrapped; a negative one is refused.
func ParseDuration(s string) (Duration, error) {
	t := strings.TrimSpace(s)
	tooLarge := fmt.Errorf("%q is too large: durations go up to %s", s, time.Duration(math.MaxInt64))
	if sizeNumber.MatchString(t) {
		secs, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return 0, fmt.Errorf("%q is not a duration (examples: 10s, 500ms, 2m)", s)
		}
		if secs*float64(time.Second) >= math.MaxInt64 {
			return 0, tooLarge
		}
		return Duration(secs * float64(time.Second)), nil
	}
	v, err := time.ParseDuration(t)
	if err != nil {
		if strings.Contains(err.Error(), "invalid duration") && durationShape.MatchString(t) {
			return 0, tooLarge // time.ParseDuration says no more on overflow
		}
		return 0, fmt.Errorf("%q is not a duration (examples: 10s, 500ms, 2m)", s)
	}
	if v < 0 {
		return 0, fmt.Errorf("%q is negative", s)
	}
	return Duration(v), nil
}

// durationShape is a well-formed Go duration, whatever its size.
var durationShape = regexp.MustCompile(`^[-+]?(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

// UnmarshalYAML accepts Go duration strings, or a bare number of seconds.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	v, err := ParseDuration(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*d = v
	return nil
}

// MarshalYAML writes the duration as Go formats it.
func (d Duration) MarshalYAML() (any, error) { return time.Duration(d).String(), nil }

func (d Duration) String() string { return time.Duration(d).String() }
