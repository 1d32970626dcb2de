package runner

import (
	"bytes"
	"strconv"
	"strings"
)

// MemTotal reads MemTotal from a /proc/meminfo, in bytes; 0 if absent.
func MemTotal(meminfo []byte) int64 {
	for _, line := range bytes.Split(meminfo, []byte("\n")) {
		f := strings.Fields(string(line))
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
