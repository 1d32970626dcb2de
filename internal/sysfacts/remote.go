package sysfacts

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/execx"
)

// ReadThrough runs Script through c (an SSH host, a pod) for the disk
// holding path, or the named disk when path is on none, and reads the
// facts from its output.
func ReadThrough(ctx context.Context, c execx.Cmder, path, disk string) (Facts, error) {
	out, err := execx.Output(c.Command(ctx, "sh", "-c", Script, "sh", path, disk))
	if err != nil {
		return Facts{}, fmt.Errorf("reading the links under %s from /sys: %w", path, err)
	}
	s := ParseSnapshot(out)
	return Read(s, s.Disk, s.Interface), nil
}
