package gluster

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
)

// Doctor implements runner.KindDoctor: the FUSE client (for the run's
// directory), fio's gfapi_async engine, and each volume's server at
// glusterd's port.
func (Kind) Doctor(ctx context.Context, specs []runner.Spec, _ runner.Options) []result.Check {
	var out []result.Check
	tool := func(name, fix string) {
		c := result.Check{Area: "gluster", Name: name, Status: result.CheckOK}
		if p, err := exec.LookPath(name); err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, "not installed", fix
		} else {
			c.Detail = p
		}
		out = append(out, c)
	}
	tool("glusterfs", "apt-get install glusterfs-client (the run's directory is made through a FUSE mount)")
	c := result.Check{Area: "gluster", Name: "fio " + IOEngine, Status: result.CheckOK, Detail: "fio has the engine"}
	if b, err := exec.CommandContext(ctx, "fio", "--enghelp="+IOEngine).CombinedOutput(); err != nil {
		c.Status, c.Detail, c.Fix = result.CheckFail, fmt.Sprintf("fio lacks it: %v: %s", err, strings.TrimSpace(string(b))), "install a fio built with libgfapi (Debian's fio has it)"
	}
	out = append(out, c)
	for _, sp := range specs {
		s := sp.(Spec)
		c := result.Check{Area: "gluster", Name: s.String(), Status: result.CheckOK}
		rtt, err := netfs.Probe(ctx, netfs.Server{Host: s.Server, Port: netfs.PortGlusterd}, 3, 2*time.Second)
		if err != nil {
			c.Status, c.Detail, c.Fix = result.CheckFail, err.Error(), "start glusterd on "+s.Server+", or name another server of the volume"
		} else {
			c.Detail = fmt.Sprintf("glusterd answers at %s:%d, round trip %.2f ms", s.Server, netfs.PortGlusterd, float64(rtt)/1e6)
		}
		out = append(out, c)
	}
	return out
}

// FindLeftovers implements runner.KindLeftovers: sb-RUNID directories at
// the volume's root.
func (Kind) FindLeftovers(ctx context.Context, sp runner.Spec, runID string) ([]runner.Leftover, error) {
	s, ok := sp.(Spec)
	if !ok {
		return nil, fmt.Errorf("gluster: not a gluster target: %s", sp)
	}
	t := &Target{spec: s}
	var out []runner.Leftover
	err := t.withMount(ctx, func(mnt string) error {
		entries, err := os.ReadDir(mnt)
		if err != nil {
			return err
		}
		for _, e := range entries {
			id, ok := strings.CutPrefix(e.Name(), DirPrefix)
			if !ok || !e.IsDir() || !volumeName.MatchString(id) || (runID != "" && id != runID) {
				continue
			}
			l := runner.Leftover{Kind: "gluster", Where: s.String(), Name: t.safetyName(id), RunID: id, Detail: "run directory " + e.Name()}
			if fi, err := os.Stat(filepath.Join(mnt, e.Name())); err == nil {
				l.Created = fi.ModTime()
			}
			out = append(out, l)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("target %s: finding leftovers: %w", s, err)
	}
	return out, nil
}

// RemoveLeftover implements runner.KindLeftovers.
func (Kind) RemoveLeftover(ctx context.Context, l runner.Leftover) error {
	sp, ok, err := Kind{}.Parse(l.Where)
	if !ok || err != nil {
		return fmt.Errorf("gluster: leftover %s: where %q is not a gluster target (%v)", l.Name, l.Where, err)
	}
	t := &Target{spec: sp.(Spec)}
	dir := DirPrefix + l.RunID
	if !volumeName.MatchString(l.RunID) || l.Name != t.safetyName(l.RunID) {
		return fmt.Errorf("gluster: leftover %s is not a run directory of %s", l.Name, l.Where)
	}
	return t.withMount(ctx, func(mnt string) error { return os.RemoveAll(filepath.Join(mnt, dir)) })
}
