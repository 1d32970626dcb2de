package local

import (
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// brickSampler records, beside the host's telemetry, the bricks of a
// GlusterFS FUSE mount as its client sees them (internal/netfs
// ReadBricks): each workload's latency per brick and whether it stayed
// connected. Reading a brick's profile resets it, so the reading at Start
// opens the workload's window.
type brickSampler struct {
	host  runner.Sampler
	read  netfs.ReadFunc
	point string
}

// glusterSampler wraps host for a target on a GlusterFS FUSE mount; other
// targets keep host as it is.
func (t *Target) glusterSampler(labels map[string]string, host func() (runner.Sampler, error)) func() (runner.Sampler, error) {
	if result.LabelFSType.Of(labels) != "fuse.glusterfs" {
		return host
	}
	return func() (runner.Sampler, error) {
		h, err := host()
		if err != nil {
			return nil, err
		}
		read := func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(t.root(), p)) }
		return &brickSampler{host: h, read: read, point: result.LabelMountPoint.Of(labels)}, nil
	}
}

// RTTInterval and RTTTimeout pace the round trips to the bricks' servers
// measured while a workload runs.
const (
	RTTInterval = 250 * time.Millisecond
	RTTTimeout  = 2 * time.Second
)

// Start implements runner.Sampler.
func (s *brickSampler) Start() runner.Recording {
	before, err := netfs.ReadBricks(s.read, s.point)
	var addrs []string
	for _, b := range before {
		addrs = append(addrs, brickAddr(b.Host))
	}
	return &brickRecording{s: s, host: s.host.Start(), before: before, err: err, rtt: netfs.WatchRTT(addrs, RTTInterval, RTTTimeout)}
}

// brickAddr is where a brick's server is probed: its glusterd, on the
// same host and link as the brick.
func brickAddr(host string) string { return net.JoinHostPort(host, strconv.Itoa(netfs.PortGlusterd)) }

type brickRecording struct {
	s      *brickSampler
	host   runner.Recording
	before []netfs.BrickStat
	err    error
	rtt    *netfs.RTTWatch
	once   sync.Once
	out    *result.Telemetry
}

// Stop implements runner.Recording.
func (r *brickRecording) Stop() *result.Telemetry {
	r.once.Do(func() {
		after, err := netfs.ReadBricks(r.s.read, r.s.point)
		rtts := r.rtt.Stop()
		r.out = r.host.Stop()
		if r.out == nil {
			r.out = &result.Telemetry{}
		}
		if err = firstErr(r.err, err); err != nil {
			r.out.Missing = append(r.out.Missing, "gluster bricks: "+err.Error())
			return
		}
		r.out.Bricks = brickFigures(r.before, after)
		for i := range r.out.Bricks {
			r.out.Bricks[i].RTT = rtts[brickAddr(r.out.Bricks[i].Host)]
		}
	})
	return r.out
}

func firstErr(errs ...error) error {
	for _, e := range errs {
		if e != nil {
			return e
		}
	}
	return nil
}

// brickFigures are each brick's workload: its operations since the
// reading before (the profile reset then) and its bytes in between.
func brickFigures(before, after []netfs.BrickStat) []result.BrickFigures {
	prev := map[string]netfs.BrickStat{}
	for _, b := range before {
		prev[b.Xlator] = b
	}
	out := make([]result.BrickFigures, 0, len(after))
	for _, b := range after {
		w, rd := b.Ops["WRITE"], b.Ops["READ"]
		f := result.BrickFigures{Host: b.Host, Brick: b.Brick, Connected: b.Connected,
			Writes: w.Count, WriteLatency: w.Mean(), Reads: rd.Count, ReadLatency: rd.Mean()}
		if p, ok := prev[b.Xlator]; ok {
			f.BytesSent, f.BytesReceived = max(b.BytesWritten-p.BytesWritten, 0), max(b.BytesRead-p.BytesRead, 0)
		}
		out = append(out, f)
	}
	return out
}
