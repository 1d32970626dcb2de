package storbench

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/ssh"
)

// kindGroup is the request's specs of one grouped kind (runner.KindGroup:
// SSH hosts), opened together.
type kindGroup struct {
	kind  runner.KindGroup
	specs []runner.Spec
	// named counts the specs named in Targets (the rest came from
	// elsewhere: an inventory).
	named int
}

// groupedSpec is one spec of a grouped kind: the contention round's noise
// target, opened with its kind's group.
type groupedSpec struct {
	kind runner.KindGroup
	spec runner.Spec
}

// openKinds is the request's registry with every kind's settings, checked
// (the Kubernetes ones: KubeRequest.kind), to open groups with.
func (r *RunRequest) openKinds() (*runner.Registry, error) {
	k, err := r.kube().kind()
	if err != nil {
		return nil, err
	}
	return r.kinds().Replace(k), nil
}

// sshKind is the ssh kind with the request's SSH settings.
func (r *RunRequest) sshKind() ssh.Kind {
	return ssh.Kind{AcceptNew: r.SSH.AcceptNewHostKeys, Become: r.SSH.Become}
}

// addToGroup adds spec to its kind's group.
func (p *runPlan) addToGroup(k runner.KindGroup, spec runner.Spec, named bool) {
	i := slices.IndexFunc(p.groups, func(g *kindGroup) bool { return g.kind.Name() == k.Name() })
	if i < 0 {
		p.groups = append(p.groups, &kindGroup{kind: k})
		i = len(p.groups) - 1
	}
	p.groups[i].specs = append(p.groups[i].specs, spec)
	if named {
		p.groups[i].named++
	}
}

// hasKind says the request has targets of kind k.
func (p *runPlan) hasKind(k runner.Kind) bool { return p.group(k.Name()) != nil }

// group is the group of the kind named, nil when the request has none.
func (p *runPlan) group(name string) *kindGroup {
	for _, g := range p.groups {
		if g.kind.Name() == name {
			return g
		}
	}
	return nil
}

// openedGroups are the request's groups, open: their targets, in the
// order of the kinds in the registry, the noise target apart, the memory
// that can cache them, and a close that ends every session.
type openedGroups struct {
	targets []runner.Target
	noise   runner.Target
	memory  []runner.Memory
	closers []func() error
	names   []string
}

// close ends every session opened, naming the kind whose close failed.
func (o *openedGroups) close() error {
	var errs []error
	for i, c := range o.closers {
		if c == nil {
			continue
		}
		if err := c(); err != nil {
			errs = append(errs, fmt.Errorf("closing the %s targets' connections: %w", o.names[i], err))
		}
	}
	return errors.Join(errs...)
}

// openGroups opens every group of the plan (with the noise target in its
// kind's group, sharing its session), in the registry's order. A group
// that cannot be opened closes those already open; an error that is the
// request's fault is a *RequestError.
func openGroups(ctx context.Context, req *RunRequest, p *runPlan, o runner.GroupOptions) (*openedGroups, error) {
	groups := slices.Clone(p.groups)
	if p.noise != nil && p.group(p.noise.kind.Name()) == nil {
		groups = append(groups, &kindGroup{kind: p.noise.kind})
	}
	reg, err := req.openKinds()
	if err != nil {
		return nil, err
	}
	out := &openedGroups{}
	for _, k := range reg.Kinds() {
		i := slices.IndexFunc(groups, func(g *kindGroup) bool { return g.kind.Name() == k.Name() })
		if i < 0 {
			continue
		}
		// The registry's kind holds the request's settings.
		kind, _ := k.(runner.KindGroup)
		specs := groups[i].specs
		withNoise := p.noise != nil && p.noise.kind.Name() == k.Name()
		if withNoise {
			specs = append(slices.Clip(specs), p.noise.spec)
		}
		opened, err := kind.Open(ctx, specs, o)
		if err != nil {
			return nil, errors.Join(groupErr(err), out.close())
		}
		out.closers, out.names = append(out.closers, opened.Close), append(out.names, k.Name())
		targets := opened.Targets
		if withNoise && len(targets) != len(specs) {
			// A class makes a target per node: the bulk writer needs one.
			return nil, errors.Join(refusef("%s %s makes several targets: name one target", FieldNoiseTarget, p.noise.spec), out.close())
		}
		if withNoise {
			out.noise, targets = wrap(req, targets[len(targets)-1]), targets[:len(targets)-1]
		}
		for _, t := range targets {
			out.targets = append(out.targets, wrap(req, t))
		}
		out.memory = append(out.memory, opened.Memory...)
	}
	return out, nil
}

// groupErr is an error of opening a group: the request's fault
// (*runner.RefusedError) is a *RequestError.
func groupErr(err error) error {
	var refused *runner.RefusedError
	if errors.As(err, &refused) {
		return refuse(refused.Err)
	}
	return err
}

// judgeGroupTargets judges the plan's raw job on every target of a
// grouped kind as a run would, and removes again what that took: each
// group is opened (its hosts connected), each target prepared, the job
// judged there exactly as the engine judges it on a prepared target
// (judgePrepared), and the target cleaned up. fio writes nothing.
func judgeGroupTargets(ctx context.Context, req *RunRequest, p *runPlan) (out []JudgedTarget, err error) {
	for _, k := range req.kinds().Kinds() {
		g := p.group(k.Name())
		if _, runOnly := k.(runner.KindRunOnly); g == nil || runOnly {
			continue
		}
		opened, err := g.kind.Open(ctx, g.specs, runner.GroupOptions{Options: req.kindOptions()})
		if err != nil {
			return out, groupErr(err)
		}
		judged, err := judgeEach(ctx, p, opened.Targets)
		out = append(out, judged...)
		if opened.Close != nil {
			err = errors.Join(err, opened.Close())
		}
		if err != nil {
			return out, err
		}
	}
	return out, nil
}

// judgeEach judges the plan's raw job on each target, in order, returning
// those judged before an error too.
func judgeEach(ctx context.Context, p *runPlan, targets []runner.Target) ([]JudgedTarget, error) {
	var out []JudgedTarget
	for _, t := range targets {
		j, err := judgePrepared(ctx, p.plan, t)
		if err != nil {
			return out, err
		}
		out = append(out, *j)
	}
	return out, nil
}
