package storbench

import (
	"context"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/render"
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
func CleanupSSH(ctx context.Context, req SSHCleanupRequest) (*render.SSHCleanup, error) {
	for _, t := range req.Targets {
		if !isSSHTarget(t) {
			return nil, refusef("cleanup --ssh: %s is not an ssh:// target", t)
		}
	}
	hosts, err := sshHosts(&RunRequest{Targets: req.Targets, SSH: req.SSH}, map[string]bool{})
	if err != nil {
		return nil, err
	}
	// Local inventory hosts are this one: storbench cleanup cleans them.
	hosts = remoteHosts(hosts)
	if len(hosts) == 0 {
		return nil, refusef("cleanup --ssh: name the hosts with --target ssh://host/path or --inventory FILE")
	}
	ctx = context.WithoutCancel(ctx)
	clients, errs, closeAll := dialHosts(ctx, req.SSH.AcceptNewHostKeys, hosts)
	defer closeAll()
	rep := &render.SSHCleanup{DryRun: req.DryRun, Targets: []render.SSHCleanupDirs{}}
	failed := 0
	for i, h := range hosts {
		t := render.SSHCleanupDirs{Target: h.name, Dirs: []ssh.Leftover{}}
		if errs[i] != nil {
			t.Error = hostError(h, errs[i]).Error()
			failed++
			rep.Targets = append(rep.Targets, t)
			continue
		}
		found, err := ssh.FindLeftovers(ctx, clients[i], h.path)
		if err != nil {
			t.Error = err.Error()
			failed++
		}
		for _, l := range found {
			if req.RunID != "" && !strings.HasPrefix(l.RunID, req.RunID) {
				continue
			}
			if l.Kept == "" && !req.DryRun {
				if err := ssh.RemoveLeftover(ctx, clients[i], &l); err != nil {
					l.Kept = err.Error()
					failed++
				}
			}
			t.Dirs = append(t.Dirs, l)
		}
		rep.Targets = append(rep.Targets, t)
	}
	if failed > 0 {
		return rep, fmt.Errorf("cleanup --ssh: %d host(s) or directories could not be cleaned", failed)
	}
	return rep, nil
}
