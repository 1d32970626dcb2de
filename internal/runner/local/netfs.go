package local

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// rttSamples and rttTimeout bound the round trips measured to each server
// of a network filesystem when a target on it is prepared.
const (
	rttSamples = 5
	rttTimeout = time.Second
)

// explainNetworkFS adds what internal/netfs finds behind a network
// filesystem target (servers, their round trips, replication model and
// count) to p's labels, and says what it could not find.
func (t *Target) explainNetworkFS(ctx context.Context, p *runner.Prepared) {
	point := result.LabelMountPoint.Of(p.Labels)
	read := func(path string) ([]byte, error) { return os.ReadFile(filepath.Join(t.root(), path)) }
	m, ok := netfs.Describe(result.LabelFSType.Of(p.Labels), result.LabelMountSource.Of(p.Labels), point, read)
	if !ok {
		return
	}
	if m.Protocol == "sshfs" {
		if port := netfs.SSHFSPort(point, t.cmdlines()); port > 0 {
			m.Servers[0].Port = port
		}
	}
	var rtts []netfs.RoundTrip
	if t.root() == "/" { // a test's fake root has no servers to reach
		rtts = netfs.ProbeAll(ctx, m, rttSamples, rttTimeout)
	}
	maps.Copy(p.Labels, m.Labels(rtts))
	for _, miss := range m.Missing {
		p.Notices = append(p.Notices, m.Protocol+" mount "+point+": "+miss)
	}
}

// cmdlines are every process's command line, for the sshfs serving a mount.
func (t *Target) cmdlines() [][]byte {
	dirs, _ := filepath.Glob(filepath.Join(t.root(), "proc/[0-9]*"))
	var out [][]byte
	for _, d := range dirs {
		if _, err := strconv.Atoi(filepath.Base(d)); err != nil {
			continue
		}
		if b, err := os.ReadFile(filepath.Join(d, "cmdline")); err == nil && len(b) > 0 {
			out = append(out, b)
		}
	}
	return out
}
