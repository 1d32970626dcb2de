package storbench

import (
	"context"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// judgeSSHTargets judges the plan's raw job for every SSH host as a run
// would, and removes again what that took: the host is connected, the
// target prepared (its facts read and judged by the safety owner, a
// directory's work directory made, a device held exclusively), the job
// judged there by the host's fio exactly as the engine judges it on a
// prepared target, and the target cleaned up. fio writes nothing.
func judgeSSHTargets(ctx context.Context, req *RunRequest, plan *engine.Plan, hosts []sshHost) ([]JudgedTarget, error) {
	clients, errs, closeAll := dialHosts(ctx, req.SSH.AcceptNewHostKeys, hosts)
	defer closeAll()
	var out []JudgedTarget
	for i, h := range hosts {
		if errs[i] != nil {
			return out, hostError(h, errs[i])
		}
		j, err := judgeSSHTarget(ctx, req, plan, h, clients[i])
		if err != nil {
			return out, err
		}
		out = append(out, *j)
	}
	return out, nil
}

func judgeSSHTarget(ctx context.Context, req *RunRequest, plan *engine.Plan, h sshHost, c *ssh.Client) (*JudgedTarget, error) {
	return judgePrepared(ctx, plan, ssh.NewTarget(h.name, c, h.path, ssh.TargetOptions{Destructive: req.Destructive}))
}
