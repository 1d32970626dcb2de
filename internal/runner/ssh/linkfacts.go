package ssh

import (
	"context"
	"maps"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/sysfacts"
)

// addLinkFacts labels the links and settings under the target, read from
// the host's /sys (internal/sysfacts). They describe; a host whose /sys
// cannot be read leaves them out rather than failing the run.
func (t *Target) addLinkFacts(ctx context.Context, labels map[string]string) {
	disk := result.LabelDisk.Of(labels)
	if disk == "" {
		disk = result.LabelDevice.Of(labels)
	}
	f, err := sysfacts.ReadThrough(ctx, t.client, t.path, disk)
	if err != nil {
		return
	}
	maps.Copy(labels, f.Labels())
}
