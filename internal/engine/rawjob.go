package engine

import (
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/spec"
)

// rawNeeds reads from a user's job file the largest size it uses, which
// sections write, and whether it uses direct I/O, for the safety and
// free-space checks.
func rawNeeds(j fio.Job) (size int64, writers []string, direct bool) {
	for _, s := range j.Sections {
		if v, ok := j.Lookup(s.Name, "size"); ok {
			if sz, err := spec.ParseSize(v); err == nil && int64(sz) > size {
				size = int64(sz)
			}
		}
		if j.Writes(s.Name) {
			writers = append(writers, s.Name)
		}
		if v, ok := j.Lookup(s.Name, "direct"); ok {
			if b, err := strconv.ParseBool(strings.TrimSpace(v)); err == nil && b {
				direct = true
			}
		}
	}
	if size == 0 {
		size = 1 << 30
	}
	return size, writers, direct
}
