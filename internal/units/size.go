package units

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Sizes storbench reads (suite files, --max-size, --device-size, sizes in
// imported files) follow one grammar, ParseSize's: a number of bytes, with
// an optional fraction and an optional unit, the unit's case ignored:
//
//	B                  bytes
//	KiB MiB GiB TiB    IEC binary: powers of 1024
//	kB MB GB TB        SI decimal: powers of 1000
//	K M G T            binary, as fio writes them (4k is 4096)
//
// fio's own default (kb_base=1024) reads the IEC and SI suffixes the other
// way round: for fio "1GiB" is 10^9 bytes and "1GB" is 2^30. storbench
// never hands its sizes to fio as text (job files get plain byte counts),
// so a suite's 1GiB is 2^30 bytes on every path. Sizes written inside a
// user's fio job file are fio's and are read as fio reads them: ParseFioSize.
// Kubernetes quantities (a PVC's 10Gi, 500M) are read by the Kubernetes
// runner with k8s.io/apimachinery's resource.Quantity.

var sizeUnits = map[string]int64{
	"": 1, "b": 1,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30, "tib": 1 << 40,
	"kb": 1e3, "mb": 1e6, "gb": 1e9, "tb": 1e12,
	"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
}

// sizeShape is a number, then a unit of letters.
var sizeShape = regexp.MustCompile(`^([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]*)$`)

// ParseSize reads a size in storbench's grammar (above): "64MiB", "520MB",
// "4k", "2300". A size beyond what int64 bytes hold (8 EiB) is "too large",
// never wrapped; a negative one is not a size.
func ParseSize(s string) (int64, error) {
	m := sizeShape.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a size (examples: 4KiB, 1MiB, 520MB, 2300)", s)
	}
	mult, ok := sizeUnits[strings.ToLower(m[2])]
	if !ok {
		return 0, fmt.Errorf("%q is not a size: unknown unit %q (KiB, MiB, GiB, TiB are binary; kB, MB, GB, TB decimal; K, M, G, T binary)", s, m[2])
	}
	return scaled(s, m[1], mult)
}

// scaled multiplies the decimal number num by mult, refusing what int64
// cannot hold.
func scaled(s, num string, mult int64) (int64, error) {
	tooLarge := fmt.Errorf("%q is too large: sizes go up to %d bytes (8 EiB)", s, int64(math.MaxInt64))
	if n, err := strconv.ParseInt(num, 10, 64); err == nil {
		if n > math.MaxInt64/mult {
			return 0, tooLarge
		}
		return n * mult, nil
	} else if !strings.Contains(num, ".") {
		return 0, tooLarge // all digits, beyond int64
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a size", s)
	}
	// float64(MaxInt64) rounds up to 2^63, itself out of range.
	if v := f * float64(mult); v >= math.MaxInt64 {
		return 0, tooLarge
	}
	return int64(f * float64(mult)), nil
}

// ParseFioSize reads a size option of a fio job file as fio does
// (get_mult_bytes in fio's parse.c): the unit's case is ignored; k, m, g,
// t, p and kb, mb, ... are powers of kbBase; kib, mib, ... are the
// opposite base (1000 when kbBase is 1024, fio's default; 1024 when
// kbBase is 1000). So with fio's defaults "1G" and "1GB" are 2^30 bytes and
// "1GiB" is 10^9. kbBase is the job's kb_base option, 1024 when unset; a
// percentage (size=50%) is not a byte count and is refused.
func ParseFioSize(s string, kbBase int64) (int64, error) {
	if kbBase != 1000 {
		kbBase = 1024
	}
	opposite := int64(1000)
	if kbBase == 1000 {
		opposite = 1024
	}
	m := sizeShape.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return 0, fmt.Errorf("%q is not a fio size", s)
	}
	unit := strings.ToLower(m[2])
	base := kbBase
	if len(unit) >= 3 && unit[1:3] == "ib" {
		base = opposite
	}
	pow := 0
	if unit != "" && unit != "b" {
		pow = strings.IndexByte("kmgtp", unit[0]) + 1
		if pow == 0 {
			return 0, fmt.Errorf("%q is not a fio size: unknown unit %q", s, m[2])
		}
	}
	mult := int64(1)
	for range pow {
		mult *= base
	}
	return scaled(s, m[1], mult)
}

// BytesExact writes a byte count exactly, in the largest binary unit that
// divides it ("64MiB", "1GiB", "2300"): ParseSize reads it back unchanged.
func BytesExact(b int64) string {
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if b >= u.mult && b%u.mult == 0 {
			return fmt.Sprintf("%d%s", b/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(b, 10)
}
