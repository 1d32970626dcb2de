package ssh

import (
	"context"
	"maps"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
)

// addNetworkFS adds what internal/netfs finds behind a network filesystem
// under the target, read on the host over SSH (its mount source, a
// GlusterFS FUSE mount's client graph): the servers, the replication model
// and count. It returns notices for what it could not read. Round trips
// to the servers are measured from where storbench runs only (local
// targets): over SSH they would be this machine's, not the host's.
func (t *Target) addNetworkFS(ctx context.Context, labels map[string]string) []string {
	point := result.LabelMountPoint.Of(labels)
	read := func(path string) ([]byte, error) { return execx.Output(t.client.Command(ctx, "cat", "--", path)) }
	m, ok := netfs.Describe(result.LabelFSType.Of(labels), result.LabelMountSource.Of(labels), point, read)
	if !ok {
		return nil
	}
	maps.Copy(labels, m.Labels(nil))
	var notices []string
	for _, miss := range m.Missing {
		notices = append(notices, m.Protocol+" mount "+point+" on "+t.name+": "+miss)
	}
	return notices
}
