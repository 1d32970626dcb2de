package ssh

import (
	"context"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Clean removes, in each target directory on each host of specs, the work
// directories that runs whose storbench process is gone left there
// (FindLeftovers judges: only directories storbench marked as a run's
// own, holding only storbench's files, with nothing working in them);
// runID, when set, limits it to that run (an ID or its prefix), and
// dryRun removes nothing. Hosts are cleaned at once, one connection per
// host. A host that cannot be reached or listed is named in the report
// and the others are cleaned all the same; failed counts what could not
// be cleaned. Removing finishes even when ctx is cancelled.
func (k Kind) Clean(ctx context.Context, specs []runner.Spec, runID string, dryRun bool) (rep *result.SSHCleanup, failed int, err error) {
	hosts, err := hostSpecs(specs)
	if err != nil {
		return nil, 0, err
	}
	ctx = context.WithoutCancel(ctx)
	clients, errs, closeAll := k.dial(ctx, hosts)
	defer closeAll()
	rep = &result.SSHCleanup{DryRun: dryRun, Targets: make([]result.SSHCleanupTarget, len(hosts))}
	fails := make([]int, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { rep.Targets[i], fails[i] = cleanHost(ctx, h, clients[i], errs[i], runID, dryRun) })
	}
	wg.Wait()
	for _, n := range fails {
		failed += n
	}
	return rep, failed, nil
}

// cleanHost cleans one target directory on one host, and counts what
// failed.
func cleanHost(ctx context.Context, h HostSpec, c *Client, dialErr error, runID string, dryRun bool) (result.SSHCleanupTarget, int) {
	t := result.SSHCleanupTarget{Target: h.Name, Dirs: []result.LeftoverDir{}}
	if dialErr != nil {
		t.Error = HostError(h.Name, dialErr).Error()
		return t, 1
	}
	failed := 0
	found, err := FindLeftovers(ctx, c, h.Path)
	if err != nil {
		t.Error = err.Error()
		failed++
	}
	for _, l := range found {
		if runID != "" && !strings.HasPrefix(l.RunID, runID) {
			continue
		}
		if l.Kept == "" && !dryRun {
			if err := RemoveLeftover(ctx, c, &l); err != nil {
				l.Kept = err.Error()
				failed++
			}
		}
		t.Dirs = append(t.Dirs, l)
	}
	return t, failed
}
