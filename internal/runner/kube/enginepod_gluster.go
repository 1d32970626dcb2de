package kube

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/gluster"
)

// glusterEngine is a GlusterFS volume through fio's gfapi engine: the
// run's directory sb-RUNID is made and removed through a FUSE mount where
// storbench runs (gluster.Spec.MakeRunDir: fio's engine makes no
// directories); each node's fio writes its own file NODE.dat in it, so
// parallel rounds share no file.
type glusterEngine struct {
	spec gluster.Spec
}

func (g glusterEngine) String() string { return g.spec.String() }

func (g glusterEngine) Describe() string {
	return fmt.Sprintf("GlusterFS volume %s by way of %s: fio's %s engine writes %sRUNID/NODE.dat, in a directory of the run's own at the volume's root made through a FUSE mount here",
		g.spec.Volume, g.spec.Server, gluster.IOEngine, gluster.DirPrefix)
}

func (g glusterEngine) setUp(ctx context.Context, runID string) (map[string]string, []string, error) {
	_, labels, notices, err := g.spec.MakeRunDir(ctx, runID)
	return labels, notices, err
}

func (g glusterEngine) tearDown(ctx context.Context, runID string) error {
	return g.spec.RemoveRunDir(ctx, runID)
}

func (g glusterEngine) file(runID, node string, size int64) fio.File {
	return g.spec.Engine(path.Join(gluster.DirPrefix+runID, node+".dat"), size)
}

func (g glusterEngine) owned(runID string) []string { return []string{g.spec.SafetyName(runID)} }

// doctor is the gluster kind's checks but fio's own: fio runs in the
// pods, with the image's libgfapi.
func (g glusterEngine) doctor(ctx context.Context, o runner.Options) []result.Check {
	var out []result.Check
	for _, c := range (gluster.Kind{}).Doctor(ctx, []runner.Spec{g.spec}, o) {
		if !strings.HasPrefix(c.Name, "fio ") {
			out = append(out, c)
		}
	}
	return out
}
