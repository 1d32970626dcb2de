package storbench

import (
	"context"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
)

// ClassesRequest names the cluster whose StorageClasses to list.
type ClassesRequest struct {
	Cluster kubekit.ConnectOptions
	// Timeout bounds talking to the cluster and reading the store; 0 is
	// no bound.
	Timeout time.Duration
}

// Classes lists the cluster's StorageClasses with what each gives
// (dynamic provisioning, failover, access modes, expansion, snapshots) and
// the median figures of the results stored for it; never nil. A cluster
// that cannot be reached with the configuration named is an *RequestError.
func Classes(ctx context.Context, st store.Reader, req ClassesRequest) ([]analysis.Class, error) {
	ctx, cancel := withTimeout(ctx, req.Timeout)
	defer cancel()
	c, err := kubekit.Connect(req.Cluster)
	if err != nil {
		return nil, &RequestError{err}
	}
	snaps, err := kubekit.SnapshotDrivers(ctx, c.Client)
	if err != nil {
		snaps = nil // unknown; shown as such
	}
	infos, err := kubekit.Classes(ctx, c.Client, snaps)
	if err != nil {
		return nil, fmt.Errorf("classes on %s: %w", c.Host, err)
	}
	return MeasuredClasses(ctx, st, infos)
}

// MeasuredClasses attaches to each class the medians of the complete,
// isolated-round results stored with its storage_class label, or the
// command that measures it when there are none (analysis.Classes).
func MeasuredClasses(ctx context.Context, st store.Reader, classes []result.StorageClass) ([]analysis.Class, error) {
	figs, err := st.Figures(ctx, store.ResultFilter{Status: result.StatusComplete})
	if err != nil {
		return nil, fmt.Errorf("reading results: %w", err)
	}
	classRes, err := st.Results(ctx, store.ResultFilter{Round: result.RoundClass})
	if err != nil {
		return nil, fmt.Errorf("reading class qualifications: %w", err)
	}
	return analysis.Classes(classes, figs, analysis.ClassQualifications(classRes)), nil
}
