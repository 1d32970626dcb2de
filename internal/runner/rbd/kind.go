package rbd

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Doctor implements runner.KindDoctor: the tools, fio's rbd engine, the
// configuration, and each target's pool (and image) in a reachable cluster.
func (Kind) Doctor(ctx context.Context, specs []runner.Spec, o runner.Options) []result.Check {
	var checks []result.Check
	for _, tool := range []string{"ceph", "rbd"} {
		c := result.Check{Area: "rbd", Name: tool + " command", Status: result.CheckOK}
		if p, err := exec.LookPath(tool); err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "install ceph-common (apt-get install ceph-common)"
		} else {
			c.Detail = p
		}
		checks = append(checks, c)
	}
	eng := result.Check{Area: "rbd", Name: "fio's rbd engine", Status: result.CheckOK, Detail: "fio --enghelp=rbd"}
	if out, err := exec.CommandContext(ctx, "fio", "--enghelp=rbd").CombinedOutput(); err != nil {
		eng.Status, eng.Detail, eng.Fix = result.CheckFail, strings.TrimSpace(string(out)), "a fio built with librbd (Debian's fio has it)"
	}
	checks = append(checks, eng)
	for _, sp := range specs {
		s, ok := sp.(*Spec)
		if !ok {
			continue
		}
		t, err := s.Target(o)
		if err != nil {
			checks = append(checks, result.Check{Area: "rbd", Name: s.raw, Status: result.CheckFail, Detail: err.Error(), Fix: "see docs/ceph.md"})
			continue
		}
		tg := t.(*Target)
		c := result.Check{Area: "rbd", Name: s.raw, Status: result.CheckOK}
		if _, err := os.Stat(tg.conf); err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "copy the cluster's ceph.conf here, or name it: rbd:POOL?conf=PATH or CEPH_CONF"
		} else if err := tg.Check(ctx, runner.Need{}); err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "check the pool (ceph osd pool ls) and the client's key in /etc/ceph"
		} else {
			c.Detail = "pool " + s.Pool + " reachable with " + tg.conf
		}
		checks = append(checks, c)
	}
	return checks
}

// FindLeftovers implements runner.KindLeftovers: the pool's images named
// storbench-RUNID (of runID when given).
func (Kind) FindLeftovers(ctx context.Context, sp runner.Spec, runID string) ([]runner.Leftover, error) {
	s, t, err := specTarget(sp)
	if err != nil {
		return nil, err
	}
	names, err := t.tools().images(ctx, s.Pool)
	if err != nil {
		return nil, fmt.Errorf("leftovers in %s: %w", s.raw, err)
	}
	var out []runner.Leftover
	for _, n := range names {
		id, ok := strings.CutPrefix(n, Prefix)
		if !ok || (runID != "" && id != runID) {
			continue
		}
		out = append(out, runner.Leftover{Kind: "rbd", Where: s.raw, Name: "rbd:" + s.Pool + "/" + n, RunID: id, Detail: "RBD image"})
	}
	return out, nil
}

// RemoveLeftover implements runner.KindLeftovers.
func (Kind) RemoveLeftover(ctx context.Context, l runner.Leftover) error {
	k := Kind{}
	sp, ok, err := k.Parse(l.Where)
	if !ok || err != nil {
		return fmt.Errorf("leftover %s: where %q: %w", l.Name, l.Where, err)
	}
	_, t, err := specTarget(sp)
	if err != nil {
		return err
	}
	image := strings.TrimPrefix(l.Name, "rbd:")
	if _, name, _ := strings.Cut(image, "/"); !strings.HasPrefix(name, Prefix) {
		return fmt.Errorf("leftover %s: not an image storbench made", l.Name)
	}
	if _, err := t.tools().rbd(ctx, "rm", "--no-progress", image); err != nil {
		return fmt.Errorf("leftover %s: %w", l.Name, err)
	}
	return nil
}

// specTarget is a spec's target as a leftover search sees it: the
// configuration from CEPH_CONF of this process.
func specTarget(sp runner.Spec) (*Spec, *Target, error) {
	s, ok := sp.(*Spec)
	if !ok {
		return nil, nil, fmt.Errorf("%s is not an rbd target", sp)
	}
	t, err := s.Target(runner.Options{Getenv: os.Getenv})
	if err != nil {
		return nil, nil, err
	}
	tg := t.(*Target)
	tg.cmder = execx.Local{}
	return s, tg, nil
}
