package rbd

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/safety"
)

// Remote is the kind's image work done through another Cmder (a pod's
// exec, where the cluster's configuration is): the rbd CLI and fio there,
// with the configuration at Conf there and the cephx client ID.
type Remote struct {
	t tools
}

// NewRemote runs rbd and fio through cmder with conf (a path where cmder
// runs) as client.id; the rbd CLI takes its own defaults for an empty
// conf or id (CEPH_CONF or /etc/ceph/ceph.conf; admin).
func NewRemote(cmder execx.Cmder, conf, id string) Remote {
	return Remote{t: tools{cmder: cmder, conf: conf, id: id}}
}

// ImageBytes is the size of pool/image.
func (r Remote) ImageBytes(ctx context.Context, pool, image string) (int64, error) {
	return r.t.imageBytes(ctx, pool, image)
}

// Images lists the pool's images.
func (r Remote) Images(ctx context.Context, pool string) ([]string, error) {
	return r.t.images(ctx, pool)
}

// MakeImage creates pool/image of sizeBytes (whole MiB, at least one) and
// fills it once with incompressible data, so reads reach the OSDs; an
// image that cannot be filled is removed again. It returns the notice a
// run carries.
func (r Remote) MakeImage(ctx context.Context, pool, image string, sizeBytes int64) (string, error) {
	return r.t.makeImage(ctx, pool, image, sizeBytes)
}

// RemoveImage removes pool/image.
func (r Remote) RemoveImage(ctx context.Context, pool, image string) error {
	if _, err := r.t.rbd(ctx, "rm", "--no-progress", pool+"/"+image); err != nil {
		return fmt.Errorf("removing image %s/%s: %w", pool, image, err)
	}
	return nil
}

// EngineTarget is fio's rbd engine on pool/image.
func (r Remote) EngineTarget(pool, image string) *fio.EngineTarget {
	return r.t.engineTarget(pool, image)
}

// InUse reads whether an image is open elsewhere (rbd status) before a
// job writes it.
func (r Remote) InUse() safety.EngineFacts { return inUse{r.t} }

// makeImage is MakeImage.
func (t tools) makeImage(ctx context.Context, pool, image string, sizeBytes int64) (string, error) {
	mib := max((sizeBytes+(1<<20)-1)>>20, 1)
	if _, err := t.rbd(ctx, "create", pool+"/"+image, "--size", strconv.FormatInt(mib, 10)+"M"); err != nil {
		return "", fmt.Errorf("making image %s/%s: %w", pool, image, err)
	}
	// A new image is thin: reads of what was never written are answered
	// without touching a disk (13 GB/s measured here). Fill it first.
	if err := t.fill(ctx, pool, image, mib<<20); err != nil {
		_, rerr := t.rbd(context.WithoutCancel(ctx), "rm", "--no-progress", pool+"/"+image)
		return "", errors.Join(err, rerr)
	}
	return fmt.Sprintf("image %s/%s made for the run and filled with %d MiB of incompressible data, so reads reach the OSDs", pool, image, mib), nil
}
