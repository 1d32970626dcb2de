package ceph

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/execx"
)

// Client runs the ceph CLI where its Cmder runs (a host with /etc/ceph, a
// Rook toolbox pod, a node over SSH).
type Client struct {
	Cmder execx.Cmder
	// Conf is the ceph.conf path where the command runs; empty: the CLI's own
	// default (CEPH_CONF, /etc/ceph/ceph.conf).
	Conf string
	// ID is the client's name without "client." (its key must be in the
	// configuration's keyring); empty: the CLI's own default, admin.
	ID string
}

// args is ARGS after the client's --conf and --id.
func (c Client) args(args ...string) []string {
	var full []string
	if c.Conf != "" {
		full = append(full, "--conf", c.Conf)
	}
	if c.ID != "" {
		full = append(full, "--id", c.ID)
	}
	return append(full, args...)
}

// JSON runs `ceph ARGS... -f json` and returns its standard output.
func (c Client) JSON(ctx context.Context, args ...string) ([]byte, error) {
	full := append(c.args(args...), "-f", "json")
	var out, stderr bytes.Buffer
	if err := c.Cmder.Command(ctx, "ceph", full...).SetStdout(&out).SetStderr(&stderr).Run(); err != nil {
		return nil, fmt.Errorf("ceph %s: %w", strings.Join(args, " "), err)
	}
	return out.Bytes(), nil
}

// FSID returns the cluster's fsid (`ceph fsid`): which Ceph the client
// reaches.
func (c Client) FSID(ctx context.Context) (string, error) {
	b, err := c.JSON(ctx, "fsid")
	if err != nil {
		return "", err
	}
	return ParseFSID(b)
}

// ParseFSID reads `ceph fsid -f json` ({"fsid":"..."}).
func ParseFSID(b []byte) (string, error) {
	var v struct {
		FSID string `json:"fsid"`
	}
	if err := json.Unmarshal(b, &v); err != nil || v.FSID == "" {
		return "", fmt.Errorf("ceph fsid: not {\"fsid\": ...}: %.100q", b)
	}
	return v.FSID, nil
}

// OSDs returns every OSD with its crush host and device.
func (c Client) OSDs(ctx context.Context) ([]OSD, error) {
	tree, err := c.JSON(ctx, "osd", "tree")
	if err != nil {
		return nil, err
	}
	osds, err := ParseOSDTree(tree)
	if err != nil {
		return nil, err
	}
	md, err := c.JSON(ctx, "osd", "metadata")
	if err != nil {
		return nil, err
	}
	return osds, AddMetadata(osds, md)
}

// Pools returns every pool.
func (c Client) Pools(ctx context.Context) ([]Pool, error) {
	b, err := c.JSON(ctx, "osd", "pool", "ls", "detail")
	if err != nil {
		return nil, err
	}
	return ParsePools(b)
}

// PGs returns the placement groups of pool.
func (c Client) PGs(ctx context.Context, pool string) ([]PG, error) {
	b, err := c.JSON(ctx, "pg", "ls-by-pool", pool)
	if err != nil {
		return nil, err
	}
	return ParsePGs(b)
}

// Perf returns every OSD's commit and apply latency now.
func (c Client) Perf(ctx context.Context) ([]Latency, error) {
	b, err := c.JSON(ctx, "osd", "perf")
	if err != nil {
		return nil, err
	}
	return ParsePerf(b)
}

// PerfSample is `ceph osd perf` at one moment.
type PerfSample struct {
	At        time.Time
	Latencies []Latency
}

// SamplePerf reads `ceph osd perf` every interval until ctx is done (a
// workload's run) and returns the samples taken. Ceph refreshes these
// figures about every 5 s, so intervals shorter than that repeat values.
func (c Client) SamplePerf(ctx context.Context, interval time.Duration) ([]PerfSample, error) {
	var samples []PerfSample
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return samples, nil
		case <-t.C:
		}
		l, err := c.Perf(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return samples, nil
			}
			return samples, err
		}
		samples = append(samples, PerfSample{At: time.Now(), Latencies: l})
	}
}

// BenchRequest is one `ceph tell osd.N bench`.
type BenchRequest struct {
	OSD        int
	TotalBytes int64 // default 100 MiB
	BlockBytes int64 // default 4 MiB
}

// Ceph's own guard rails on `osd bench` (their defaults in 16.2):
// osd_bench_max_block_size, osd_bench_duration, and the totals the OSD
// refuses above them (osd_bench_small_size_max_iops for blocks under 1 MiB,
// osd_bench_large_size_max_throughput above).
const (
	benchMaxBlockBytes     = 64 << 20
	benchDurationSec       = 30
	benchSmallMaxIOPS      = 100
	benchLargeMaxBytesPerS = 100 << 20
)

var errBenchGuard = errors.New("outside Ceph's osd bench limits")

// Check applies Ceph's limits before asking the OSD, so the refusal names
// the request's fields rather than returning the OSD's EINVAL.
func (r *BenchRequest) Check() error {
	if r.TotalBytes == 0 {
		r.TotalBytes = 100 << 20
	}
	if r.BlockBytes == 0 {
		r.BlockBytes = 4 << 20
	}
	switch {
	case r.BlockBytes < 4096 || r.BlockBytes > benchMaxBlockBytes:
		return fmt.Errorf("osd.%d bench: block %d bytes %w (4 KiB to 64 MiB)", r.OSD, r.BlockBytes, errBenchGuard)
	case r.TotalBytes < r.BlockBytes:
		return fmt.Errorf("osd.%d bench: total %d bytes under one block of %d", r.OSD, r.TotalBytes, r.BlockBytes)
	case r.BlockBytes < 1<<20 && r.TotalBytes > r.BlockBytes*benchSmallMaxIOPS*benchDurationSec:
		return fmt.Errorf("osd.%d bench: total %d bytes in %d-byte blocks %w (at most %d)", r.OSD, r.TotalBytes, r.BlockBytes, errBenchGuard, r.BlockBytes*benchSmallMaxIOPS*benchDurationSec)
	case r.BlockBytes >= 1<<20 && r.TotalBytes > benchLargeMaxBytesPerS*benchDurationSec:
		return fmt.Errorf("osd.%d bench: total %d bytes %w (at most %d)", r.OSD, r.TotalBytes, errBenchGuard, int64(benchLargeMaxBytesPerS*benchDurationSec))
	}
	return nil
}

// Bench runs `ceph tell osd.N bench TOTAL BLOCK`: the OSD writes through its
// own object store, no network and no replication in between.
func (c Client) Bench(ctx context.Context, r BenchRequest) (Bench, error) {
	if err := r.Check(); err != nil {
		return Bench{}, err
	}
	b, err := c.JSON(ctx, "tell", "osd."+strconv.Itoa(r.OSD), "bench", strconv.FormatInt(r.TotalBytes, 10), strconv.FormatInt(r.BlockBytes, 10))
	if err != nil {
		return Bench{}, err
	}
	return ParseBench(r.OSD, b)
}
