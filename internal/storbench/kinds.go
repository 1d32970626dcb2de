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
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/gluster"
	"github.com/storbench/storbench/internal/runner/kube"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/runner/rbd"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// Kinds are the target kinds the library knows, in the order they
// recognise target strings. A new kind is one package implementing runner.Kind and one line here,
// above local.Kind, which takes any path and so goes last. A caller adds
// a kind of its own with RunRequest.Kinds (Kinds().With(k)). Grouped
// kinds (runner.KindGroup) are opened in this order too.
func Kinds() *runner.Registry {
	return runner.NewRegistry(
		kube.Kind{},
		ssh.Kind{},
		rbd.Kind{},
		gluster.Kind{},
		local.Kind{},
	)
}

// kinds is the request's registry (Kinds unless the caller gave one),
// its kinds holding the request's settings.
func (r *RunRequest) kinds() *runner.Registry {
	reg := r.Kinds
	if reg == nil {
		reg = Kinds()
	}
	return reg.Replace(r.sshKind())
}

// kindOptions are the request's settings as every kind reads them.
func (r *RunRequest) kindOptions() runner.Options {
	return runner.Options{Destructive: r.Destructive, Getenv: r.Getenv}
}

// kindTarget makes the target of a string a registered kind recognises;
// ok is false when none does.
func kindTarget(req *RunRequest, target string) (t runner.Target, k runner.Kind, err error) {
	k, spec, _, err := req.kinds().Parse(target)
	if err != nil {
		return nil, k, refuse(err)
	}
	if spec == nil {
		return nil, nil, refusef("%s: %s: no kind of target recognises it", FieldTargets, target)
	}
	t, err = spec.Target(req.kindOptions())
	if err != nil {
		return nil, k, refuse(err)
	}
	return t, k, nil
}

// isLocalPath says a target string is this host's directory or device:
// the kind whose raw jobs are judged before anything is prepared
// (judgeLocalTargets).
func isLocalPath(req *RunRequest, target string) bool {
	k, _, _, _ := req.kinds().Parse(target)
	_, ok := k.(local.Kind)
	return ok
}

// judgeKindTargets judges the plan's raw job, as a run would, on every
// target of a registered kind but this host's paths (judgeLocalTargets):
// each is checked, prepared, judged there and cleaned up. fio writes
// nothing.
func judgeKindTargets(ctx context.Context, req *RunRequest, plan *engine.Plan) ([]JudgedTarget, error) {
	var out []JudgedTarget
	for _, name := range req.Targets {
		if isLocalPath(req, name) {
			continue
		}
		if k, _, _, err := req.kinds().Parse(name); err == nil {
			if _, grouped := k.(runner.KindGroup); grouped {
				continue // judgeGroupTargets
			}
		}
		t, _, err := kindTarget(req, name)
		if err != nil {
			return out, err
		}
		j, err := judgePrepared(ctx, plan, t)
		if err != nil {
			return out, err
		}
		out = append(out, *j)
	}
	return out, nil
}

// judgePrepared judges the plan's raw job on t as the engine does once t
// is prepared: Check, Prepare, the job judged by fio where it runs, and
// the target cleaned up again.
func judgePrepared(ctx context.Context, plan *engine.Plan, t runner.Target) (_ *JudgedTarget, err error) {
	var id [4]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, err
	}
	size, writers, direct := engine.RawNeeds(plan.RawJob.File)
	need := runner.Need{RunID: "dry-run-" + hex.EncodeToString(id[:]), FileSize: size, Writers: writers, Direct: direct}
	if c, ok := t.(runner.Checker); ok {
		if err := c.Check(ctx, need); err != nil {
			return nil, judgeErr(err)
		}
	}
	p, err := t.Prepare(ctx, need)
	if err != nil {
		return nil, judgeErr(err)
	}
	defer func() { err = errors.Join(err, p.Cleanup(context.WithoutCancel(ctx))) }()
	work := p.Dir
	if work == "" {
		// fio's job file goes in a directory of its own where fio runs,
		// as the engine makes one.
		out, err := execx.Output(p.Cmder.Command(ctx, "mktemp", "-d"))
		if err != nil {
			return nil, fmt.Errorf("target %s: a directory for the job file: %w", t.Name(), err)
		}
		work = strings.TrimSpace(string(out))
		defer func() {
			if rerr := p.Cmder.Command(context.WithoutCancel(ctx), "rm", "-rf", "--", work).Run(); rerr != nil {
				err = errors.Join(err, fmt.Errorf("removing %s on target %s: %w", work, t.Name(), rerr))
			}
		}()
	}
	o := engine.TargetJudgeOptions(plan.Policy, p)
	j, err := engine.Judge(ctx, p.FioRunner(), plan.RawJob.File, work, o)
	if err != nil {
		return nil, judgeErr(fmt.Errorf("target %s: %w", t.Name(), err))
	}
	jt := &JudgedTarget{Path: t.Name(), Device: p.Device, Judged: j}
	jt.TimeBased, jt.UntilDone = rawJobTime(j.Reading)
	return jt, nil
}

// kindDoctorChecks checks targets, and the hosts of the request's
// inventory, by their kinds (runner.KindDoctor): each kind's at once, in
// the registry's order (SSH hosts first, this host's paths last). A
// target no kind recognises, or that its kind refuses, is a failed check.
func kindDoctorChecks(ctx context.Context, req DoctorRequest, targets []string) []result.Check {
	run := &RunRequest{Kinds: req.Kinds, SSH: req.SSH}
	reg := run.kinds()
	specs := map[string][]runner.Spec{}
	var out []result.Check
	for _, t := range targets {
		k, spec, ok, err := reg.Parse(t)
		switch {
		case !ok:
			out = append(out, result.Check{Area: "targets", Name: t, Status: result.CheckFail, Detail: "no kind of target recognises it",
				Fix: "name a directory, a block device, ssh://host/path, or another kind's target"})
			continue
		case err != nil:
			out = append(out, result.Check{Area: k.Name(), Name: t, Status: result.CheckFail, Detail: err.Error(), Fix: "correct the target"})
			continue
		}
		specs[k.Name()] = append(specs[k.Name()], spec)
	}
	ssh := run.sshKind()
	if req.SSH.Inventory != "" || len(specs[ssh.Name()]) > 0 {
		// Local inventory hosts are this one: the local checks cover them.
		hosts, _, err := inventoryHosts(run, map[string]bool{})
		if err != nil {
			out = append(out, result.Check{Area: "ssh", Name: "targets", Status: result.CheckFail, Detail: err.Error(),
				Fix: "name targets as ssh://[user@]host[:port]/path, or give --inventory FILE with --hosts and --path"})
		}
		specs[ssh.Name()] = append(specs[ssh.Name()], hosts...)
	}
	o := runner.Options{Getenv: req.Getenv}
	for _, k := range reg.Kinds() {
		if d, ok := k.(runner.KindDoctor); ok && len(specs[k.Name()]) > 0 {
			out = append(out, d.Doctor(ctx, specs[k.Name()], o)...)
		}
	}
	return out
}
