package storbench

import (
	"context"
	"fmt"

	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
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
// (ssh.Kind.Clean: only directories storbench marked as a run's own,
// holding only storbench's files, with nothing working in them). A host
// that cannot be reached or listed is named in the report and the others
// are cleaned all the same; the error then says how many failed.
// Removing finishes even when ctx is cancelled.
func CleanupSSH(ctx context.Context, req SSHCleanupRequest) (*result.SSHCleanup, error) {
	run := &RunRequest{Targets: req.Targets, SSH: req.SSH}
	kind := run.sshKind()
	var specs []runner.Spec
	for _, t := range req.Targets {
		spec, ok, err := kind.Parse(t)
		switch {
		case !ok:
			return nil, refusef("%s: %s is not an ssh:// target", FieldTargets, t)
		case err != nil:
			return nil, refuse(err)
		}
		specs = append(specs, spec)
	}
	// Local inventory hosts are this one: storbench cleanup cleans them.
	hosts, _, err := inventoryHosts(run, map[string]bool{})
	if err != nil {
		return nil, err
	}
	specs = append(specs, hosts...)
	if len(specs) == 0 {
		return nil, refusef("name the hosts: %s ssh://host/path or %s", FieldTargets, FieldSSHInventory)
	}
	rep, failed, err := kind.Clean(ctx, specs, req.RunID, req.DryRun)
	if err != nil {
		return nil, err
	}
	if failed > 0 {
		return rep, fmt.Errorf("cleanup: %d host(s) or directories could not be cleaned", failed)
	}
	return rep, nil
}

// IsSSHTarget says the ssh kind recognises t (ssh://host/path): a target
// CleanupSSH cleans, where CleanupKinds cleans other kinds'.
func IsSSHTarget(t string) bool {
	_, ok, _ := ssh.Kind{}.Parse(t)
	return ok
}
