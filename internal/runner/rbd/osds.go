package rbd

import (
	"context"

	"github.com/storbench/storbench/internal/ceph/osdtelemetry"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/telemetry"
)

// osdTelemetry makes the target's sampler: this host's own telemetry
// (fio's rbd client runs here) plus the pool's OSDs (osdtelemetry): each
// one's bench, taken now, and its figures during every workload.
func (t tools) osdTelemetry(ctx context.Context, pool string, labels map[string]string) func() (runner.Sampler, error) {
	return func() (runner.Sampler, error) {
		cfg := telemetry.ConfigFor(labels, "")
		cfg.NoDevice = "an RBD image: its data is on the OSDs' disks (see the OSDs' figures)"
		return osdtelemetry.New(ctx, osdtelemetry.Options{Ceph: t.ceph(), Pool: pool, Host: hostSampler{telemetry.New(cfg)}})
	}
}

// hostSampler offers this host's telemetry.Sampler as a runner.Sampler.
type hostSampler struct{ s *telemetry.Sampler }

func (h hostSampler) Start() runner.Recording { return h.s.Start() }
