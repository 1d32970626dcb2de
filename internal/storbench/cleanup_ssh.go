package storbench

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// SSHCleanupRequest says which hosts and directories to clean: ssh://
// targets and the hosts of an inventory, as for a run.
type SSHCleanupRequest struct {
	Targets []string
	SSH     SSHRequest
	// RunID cleans up only what this run left (an ID or its prefix).
	RunID string
	// DryRun finds what would be removed and removes nothing.
	DryRun bool
}

// CleanupSSH removes, in each target directory on each host, the work
// directories that runs whose storbench process is gone left there
// (ssh.FindLeftovers judges: only directories storbench marked as a run's
// own, holding only storbench's files, with nothing working in them). A
// host that cannot be reached or listed is named in the report and the
// others are cleaned all the same; the error then says how many failed.
// Removing finishes even when ctx is cancelled.
func CleanupSSH(ctx context.Context, req SSHCleanupRequest) (*result.SSHCleanup, error) {
	for _, t := range req.Targets {
		if !isSSHTarget(t) {
			return nil, refusef("%s: %s is not an ssh:// target", FieldTargets, t)
		}
	}
	hosts, err := sshHosts(&RunRequest{Targets: req.Targets, SSH: req.SSH}, map[string]bool{})
	if err != nil {
		return nil, err
	}
	// Local inventory hosts are this one: storbench cleanup cleans them.
	hosts = remoteHosts(hosts)
	if len(hosts) == 0 {
		return nil, refusef("name the hosts: %s ssh://host/path or %s", FieldTargets, FieldSSHInventory)
	}
	ctx = context.WithoutCancel(ctx)
	clients, errs, closeAll := dialHosts(ctx, req.SSH.AcceptNewHostKeys, hosts)
	defer closeAll()
	rep := &result.SSHCleanup{DryRun: req.DryRun, Targets: make([]result.SSHCleanupTarget, len(hosts))}
	fails := make([]int, len(hosts))
	var wg sync.WaitGroup
	for i, h := range hosts {
		wg.Go(func() { rep.Targets[i], fails[i] = cleanHost(ctx, req, h, clients[i], errs[i]) })
	}
	wg.Wait()
	failed := 0
	for _, n := range fails {
		failed += n
	}
	if failed > 0 {
		return rep, fmt.Errorf("cleanup: %d host(s) or directories could not be cleaned", failed)
	}
	return rep, nil
}

// cleanHost cleans one target directory on one host, and counts what
// failed.
func cleanHost(ctx context.Context, req SSHCleanupRequest, h sshHost, c *ssh.Client, dialErr error) (result.SSHCleanupTarget, int) {
	t := result.SSHCleanupTarget{Target: h.name, Dirs: []result.LeftoverDir{}}
	if dialErr != nil {
		t.Error = hostError(h, dialErr).Error()
		return t, 1
	}
	failed := 0
	found, err := ssh.FindLeftovers(ctx, c, h.path)
	if err != nil {
		t.Error = err.Error()
		failed++
	}
	for _, l := range found {
		if req.RunID != "" && !strings.HasPrefix(l.RunID, req.RunID) {
			continue
		}
		if l.Kept == "" && !req.DryRun {
			if err := ssh.RemoveLeftover(ctx, c, &l); err != nil {
				l.Kept = err.Error()
				failed++
			}
		}
		t.Dirs = append(t.Dirs, l)
	}
	return t, failed
}
