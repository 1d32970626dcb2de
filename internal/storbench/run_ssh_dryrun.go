package storbench

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/runner"
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

func judgeSSHTarget(ctx context.Context, req *RunRequest, plan *engine.Plan, h sshHost, c *ssh.Client) (_ *JudgedTarget, err error) {
	var id [4]byte
	rand.Read(id[:])
	size, writers, direct := engine.RawNeeds(plan.RawJob.File)
	need := runner.Need{RunID: "dry-run-" + hex.EncodeToString(id[:]), FileSize: size, Writers: writers, Direct: direct}
	t := ssh.NewTarget(h.name, c, h.path, ssh.TargetOptions{Destructive: req.Destructive})
	if err := t.Check(ctx, need); err != nil {
		return nil, judgeErr(err)
	}
	p, err := t.Prepare(ctx, need)
	if err != nil {
		return nil, judgeErr(err)
	}
	defer func() { err = errors.Join(err, p.Cleanup(context.WithoutCancel(ctx))) }()
	work := p.Dir
	if work == "" {
		// A device: fio's job file goes in a directory of its own on the
		// host, as the engine makes one.
		out, err := execx.Output(c.Command(ctx, "mktemp", "-d"))
		if err != nil {
			return nil, fmt.Errorf("target %s: a directory for the job file: %w", h.name, err)
		}
		work = strings.TrimSpace(string(out))
		defer func() {
			if rerr := c.Command(context.WithoutCancel(ctx), "rm", "-rf", "--", work).Run(); rerr != nil {
				err = errors.Join(err, fmt.Errorf("removing %s on %s: %w", work, c.Name(), rerr))
			}
		}()
	}
	o := engine.TargetJudgeOptions(plan.Policy, p)
	j, err := engine.Judge(ctx, fio.Runner{Cmder: c}, plan.RawJob.File, work, o)
	if err != nil {
		return nil, judgeErr(fmt.Errorf("target %s: %w", h.name, err))
	}
	jt := &JudgedTarget{Path: h.name, Device: p.Kind == "device", Judged: j}
	jt.TimeBased, jt.UntilDone = rawJobTime(j.Reading)
	return jt, nil
}
