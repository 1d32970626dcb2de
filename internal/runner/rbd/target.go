package rbd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Target is an RBD image reached from this host.
type Target struct {
	spec  Spec
	conf  string
	cmder execx.Cmder
}

var (
	_ runner.Target  = (*Target)(nil)
	_ runner.Checker = (*Target)(nil)
)

// Name implements runner.Target.
func (t *Target) Name() string { return t.spec.raw }

func (t *Target) tools() tools { return tools{cmder: t.cmder, conf: t.conf, id: t.spec.ID} }

// Check implements runner.Checker: the configuration is readable, the
// pool exists, an image named exists and holds the run's span.
func (t *Target) Check(ctx context.Context, need runner.Need) error {
	if _, err := os.Stat(t.conf); err != nil {
		return fmt.Errorf("target %s: the Ceph configuration: %w (give rbd:POOL?conf=PATH or CEPH_CONF)", t.Name(), err)
	}
	if _, err := t.tools().images(ctx, t.spec.Pool); err != nil {
		return fmt.Errorf("target %s: pool %s: %w", t.Name(), t.spec.Pool, err)
	}
	if t.spec.Image == "" {
		return nil
	}
	size, err := t.tools().imageBytes(ctx, t.spec.Pool, t.spec.Image)
	if err != nil {
		return fmt.Errorf("target %s: image %s/%s: %w", t.Name(), t.spec.Pool, t.spec.Image, err)
	}
	if size < need.FileSize {
		return fmt.Errorf("target %s: image %s/%s holds %d bytes, the suite spans %d", t.Name(), t.spec.Pool, t.spec.Image, size, need.FileSize)
	}
	return nil
}

// Prepare implements runner.Target: the image (made for the run, or the
// one named), fio's rbd engine on it, and the pool's facts as labels.
func (t *Target) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	tl := t.tools()
	labels, err := tl.poolFacts(ctx, t.spec.Pool)
	if err != nil {
		return nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	p := &runner.Prepared{Name: t.Name(), Kind: "rbd", Local: true, Cmder: t.cmder, Labels: labels,
		MemoryOf: "this host (fio's rbd client)", EngineFacts: inUse{tl}}
	p.Telemetry = tl.osdTelemetry(ctx, t.spec.Pool, labels) // osds.go
	image := t.spec.Image
	cleanup := func(context.Context) error { return nil }
	if image == "" {
		image = Prefix + need.RunID
		notice, err := tl.makeImage(ctx, t.spec.Pool, image, need.FileSize)
		if err != nil {
			return nil, fmt.Errorf("target %s: %w", t.Name(), err)
		}
		p.Owned = []string{"rbd:" + t.spec.Pool + "/" + image}
		cleanup = func(ctx context.Context) error {
			if _, err := tl.rbd(ctx, "rm", "--no-progress", t.spec.Pool+"/"+image); err != nil {
				return fmt.Errorf("target %s: removing image %s: %w", t.Name(), image, err)
			}
			return nil
		}
		p.Notices = append(p.Notices, notice)
	}
	p.Cleanup = cleanup
	result.LabelCephImage.Set(p.Labels, image)
	p.File = fio.File{Size: need.FileSize, Engine: tl.engineTarget(t.spec.Pool, image)}
	return p, nil
}

// inUse reads whether an image is open elsewhere before a job writes it.
type inUse struct{ t tools }

// InUse implements safety.EngineFacts for rbd:POOL/IMAGE names.
func (u inUse) InUse(ctx context.Context, name string) ([]string, error) {
	pi, ok := strings.CutPrefix(name, "rbd:")
	pool, image, ok2 := strings.Cut(pi, "/")
	if !ok || !ok2 {
		return nil, errors.New("not an RBD image name: " + name)
	}
	return u.t.watchers(ctx, pool, image)
}

// fill writes the whole image once with fio's rbd engine (incompressible,
// 4 MiB sequential writes).
func (t tools) fill(ctx context.Context, pool, image string, sizeBytes int64) error {
	err := t.cmder.Command(ctx, "fio", "--name=storbench-fill", "--ioengine=rbd", "--clientname="+t.id, "--pool="+pool, "--rbdname="+image,
		"--rw=write", "--bs=4M", "--iodepth=8", "--direct=1", "--size="+strconv.FormatInt(sizeBytes, 10), "--refill_buffers", "--randrepeat=0",
		"--output-format=terse").SetEnv("CEPH_CONF=" + t.conf).SetStdout(io.Discard).Run()
	if err != nil {
		return fmt.Errorf("filling image %s/%s: %w", pool, image, err)
	}
	return nil
}
