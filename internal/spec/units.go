package spec

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/storbench/storbench/internal/units"
)

// Size is a byte count written in storbench's size grammar (units.ParseSize):
// 4KiB, 1MiB, 1GiB (binary), 520MB (decimal), 4k (binary, as in fio) or a
// plain number of bytes.
type Size int64

// sizeNumber is what a bare number of seconds looks like: digits, with a
// fraction.
var sizeNumber = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?$`)

// UnmarshalYAML accepts a number of bytes or a string with a unit.
func (s *Size) UnmarshalYAML(n *yaml.Node) error {
	v, err := units.ParseSize(n.Value)
	if err != nil {
		return fmt.Errorf("line %d: %w", n.Line, err)
	}
	*s = Size(v)
	return nil
}

// MarshalYAML writes the size in the largest exact binary unit.
func (s Size) MarshalYAML() (any, error) { return s.String(), nil }

// String formats the size exactly, in the largest binary unit that divides it.
func (s Size) String() string { return units.BytesExact(int64(s)) }

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
