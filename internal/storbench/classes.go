package storbench

import (
	"context"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/render"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/store"
)

// ClassesRequest names the cluster whose StorageClasses to list.
type ClassesRequest struct {
	Cluster kube.ConnectOptions
	// Timeout bounds talking to the cluster and reading the store; 0 is
	// no bound.
	Timeout time.Duration
}

// Classes lists the cluster's StorageClasses with what each gives
// (dynamic provisioning, failover, access modes, expansion, snapshots) and
// the median figures of the results stored for it; never nil. A cluster
// that cannot be reached with the configuration named is an *RequestError.
func Classes(ctx context.Context, st store.Reader, req ClassesRequest) ([]render.Class, error) {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	c, err := kube.Connect(req.Cluster)
	if err != nil {
		return nil, &RequestError{err}
	}
	snaps, err := kube.SnapshotDrivers(ctx, c.Client)
	if err != nil {
		snaps = nil // unknown; shown as such
	}
	infos, err := kube.Classes(ctx, c.Client, snaps)
	if err != nil {
		return nil, fmt.Errorf("classes on %s: %w", c.Host, err)
	}
	return MeasuredClasses(ctx, st, infos)
}

// MeasuredClasses attaches to each class the medians of the complete,
// isolated-round results stored with its storage_class label, or the
// command that measures it when there are none.
func MeasuredClasses(ctx context.Context, st store.Reader, infos []kube.ClassInfo) ([]render.Class, error) {
	figs, err := st.Figures(ctx, store.ResultFilter{Status: result.StatusComplete})
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	measured := analysis.ClassFigures(figs)
	classRes, err := st.Results(ctx, store.ResultFilter{Round: result.RoundClass})
	if err != nil {
		return nil, fmt.Errorf("reading class qualifications: %w", err)
	}
	quals := analysis.ClassQualifications(classRes)
	out := []render.Class{}
	for _, ci := range infos {
		c := render.Class{ClassInfo: ci, Measured: measured[ci.Name], Qualification: quals[ci.Name]}
		c.PickTwo = analysis.PickTwo(c.Qualification, c.Measured)
		if len(c.Measured) == 0 {
			c.Measured = []analysis.ClassFigure{}
			c.Measure = "storbench run --suite quick --target k8s:" + ci.Name
		}
		out = append(out, c)
	}
	return out, nil
}
