// Package gluster is the target kind of a GlusterFS volume reached with no
// mount: fio's gfapi_async engine (libgfapi) talks to the volume's bricks
// itself, from this host. A target "gluster://SERVER/VOLUME" gets a
// directory of the run's own at the volume's root (sb-RUNID, made and
// removed through a short-lived FUSE mount: libgfapi's fio engine makes
// no directories), and its results carry what the volume's client graph
// says: every brick's server, replica count, client-side replication.
package gluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"time"

	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/fio"
	"github.com/storbench/storbench/internal/netfs"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/safety"
)

// Scheme starts a Gluster target string.
const Scheme = "gluster://"

// IOEngine is fio's engine for the volume: asynchronous, so workloads'
// queue depths hold (gfapi is synchronous, one I/O at a time).
const IOEngine = "gfapi_async"

// DirPrefix names the run's directory at the volume's root: sb-RUNID.
const DirPrefix = "sb-"

// TestFile is fio's file in the run's directory.
const TestFile = "storbench.dat"

// gfapiLog is where fio's gfapi engine always writes libgfapi's log.
const gfapiLog = "/tmp/fio_gfapi.log"

// Kind is the GlusterFS volume kind.
type Kind struct{}

var (
	_ runner.Kind          = Kind{}
	_ runner.KindDoctor    = Kind{}
	_ runner.KindLeftovers = Kind{}
)

// Name implements runner.Kind.
func (Kind) Name() string { return "gluster" }

var volumeName = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)

// Parse implements runner.Kind: gluster://SERVER/VOLUME.
func (Kind) Parse(target string) (runner.Spec, bool, error) {
	rest, ok := strings.CutPrefix(target, Scheme)
	if !ok {
		return nil, false, nil
	}
	server, volume, _ := strings.Cut(rest, "/")
	switch {
	case server == "":
		return nil, true, fmt.Errorf("targets: %s: no server: write gluster://SERVER/VOLUME", target)
	case !volumeName.MatchString(volume):
		return nil, true, fmt.Errorf("targets: %s: no plain volume name: write gluster://SERVER/VOLUME", target)
	}
	return Spec{Server: server, Volume: volume}, true, nil
}

// Spec is one volume, by a server that serves its volfile (any brick's
// glusterd).
type Spec struct {
	Server, Volume string
}

func (s Spec) String() string { return Scheme + s.Server + "/" + s.Volume }

// Describe implements runner.Spec.
func (s Spec) Describe() string {
	return fmt.Sprintf("GlusterFS volume %s by way of %s: fio's %s engine from this host writes %s/%s in a directory %sRUNID of the run's own at the volume's root, removed after the run",
		s.Volume, s.Server, IOEngine, DirPrefix+"RUNID", TestFile, DirPrefix)
}

// Target implements runner.Spec.
func (s Spec) Target(runner.Options) (runner.Target, error) { return &Target{spec: s}, nil }

// Target prepares a run's directory on the volume.
type Target struct {
	spec Spec
}

// Name implements runner.Target.
func (t *Target) Name() string { return t.spec.String() }

// safetyName is the run directory as safety names it (gluster:VOLUME/DIR).
func (t *Target) safetyName(runID string) string { return t.spec.SafetyName(runID) }

// SafetyName is the run's directory as safety names it
// (gluster:VOLUME/sb-RUNID): what a run's jobs own on the volume.
func (s Spec) SafetyName(runID string) string {
	return safety.EngineGluster + ":" + s.Volume + "/" + DirPrefix + runID
}

// Engine is fio's engine target for the volume, with name the file's
// path inside it (a file in the run's directory).
func (s Spec) Engine(name string, size int64) fio.File {
	return fio.File{Name: name, Size: size, Engine: &fio.EngineTarget{IOEngine: IOEngine,
		Options: []fio.Option{{Key: "volume", Value: s.Volume}, {Key: "brick", Value: s.Server}}}}
}

// MakeRunDir makes the run's directory sb-RUNID at the volume's root
// through a FUSE mount where storbench runs (the glusterfs client), for
// fio elsewhere (a pod's gfapi engine) to write in, and returns what the
// volume's client graph says (filesystem, servers, replicas, client-side
// replication: no host, no round trips from here) and what it could not
// say. It returns the directory's name.
func (s Spec) MakeRunDir(ctx context.Context, runID string) (string, map[string]string, []string, error) {
	return (&Target{spec: s}).makeRunDir(ctx, runID, false)
}

// makeRunDir makes the run's directory and reads the volume's labels,
// with round trips from here when probe.
func (t *Target) makeRunDir(ctx context.Context, runID string, probe bool) (string, map[string]string, []string, error) {
	if !volumeName.MatchString(runID) {
		return "", nil, nil, fmt.Errorf("target %s: run ID %q cannot name a directory", t.Name(), runID)
	}
	dir := DirPrefix + runID
	var labels map[string]string
	var notices []string
	err := t.withMount(ctx, func(mnt string) error {
		if err := os.Mkdir(filepath.Join(mnt, dir), 0o755); err != nil {
			return fmt.Errorf("creating the run's directory: %w", err)
		}
		labels, notices = t.volumeLabels(ctx, mnt, probe)
		return nil
	})
	if err != nil {
		return "", nil, nil, fmt.Errorf("target %s: %w", t.Name(), err)
	}
	return dir, labels, notices, nil
}

// RemoveRunDir removes the run's directory MakeRunDir made, with what
// is in it.
func (s Spec) RemoveRunDir(ctx context.Context, runID string) error {
	dir := DirPrefix + runID
	if !volumeName.MatchString(runID) {
		return fmt.Errorf("target %s: run ID %q cannot name a directory", s, runID)
	}
	t := &Target{spec: s}
	if err := t.withMount(ctx, func(mnt string) error { return os.RemoveAll(filepath.Join(mnt, dir)) }); err != nil {
		return fmt.Errorf("target %s: removing %s: %w", s, dir, err)
	}
	return nil
}

// Prepare implements runner.Target: the run's directory made through a
// FUSE mount, which also gives the volume's client graph for its labels.
func (t *Target) Prepare(ctx context.Context, need runner.Need) (*runner.Prepared, error) {
	_, logErr := os.Stat(gfapiLog)
	logExisted := logErr == nil
	dir, vl, notices, err := t.makeRunDir(ctx, need.RunID, true)
	if err != nil {
		return nil, err
	}
	labels := local.HostLabels()
	maps.Copy(labels, vl)
	p := &runner.Prepared{Name: t.Name(), Kind: "gluster", Cmder: execx.Local{}, Local: true,
		File:  t.spec.Engine(path.Join(dir, TestFile), need.FileSize),
		Owned: []string{t.safetyName(need.RunID)}, Labels: labels, Notices: notices}
	p.Cleanup = func(ctx context.Context) error {
		err := t.withMount(ctx, func(mnt string) error { return os.RemoveAll(filepath.Join(mnt, dir)) })
		if !logExisted {
			if rerr := os.Remove(gfapiLog); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
				err = errors.Join(err, fmt.Errorf("removing fio's gfapi log: %w", rerr))
			}
		}
		if err != nil {
			return fmt.Errorf("target %s: removing %s: %w", t.Name(), dir, err)
		}
		return nil
	}
	return p, nil
}

// volumeLabels label the results: the volume's servers and replication
// from its client graph, with probe round trips from here to each
// brick's server.
func (t *Target) volumeLabels(ctx context.Context, mnt string, probe bool) (map[string]string, []string) {
	l := map[string]string{}
	result.LabelFSType.Set(l, "glusterfs (gfapi)")
	result.LabelMountSource.Set(l, t.spec.Server+":"+t.spec.Volume)
	m, _ := netfs.Describe("fuse.glusterfs", t.spec.Server+":"+t.spec.Volume, mnt, os.ReadFile)
	var rtts []netfs.RoundTrip
	if probe {
		rtts = netfs.ProbeAll(ctx, m, 5, time.Second)
	}
	maps.Copy(l, m.Labels(rtts))
	var notices []string
	for _, miss := range m.Missing {
		notices = append(notices, "volume "+t.spec.Volume+": "+miss)
	}
	return l, notices
}

// withMount mounts the volume with the GlusterFS FUSE client on a new
// private directory, runs f on it, and unmounts it again.
func (t *Target) withMount(ctx context.Context, f func(mnt string) error) (err error) {
	tmp, err := os.MkdirTemp("", "storbench-gluster-")
	if err != nil {
		return err
	}
	mnt := filepath.Join(tmp, "mnt")
	defer func() { err = errors.Join(err, removeMountDir(tmp, mnt, 10*time.Second)) }()
	if err := os.Mkdir(mnt, 0o700); err != nil {
		return err
	}
	cmd := exec.CommandContext(ctx, "glusterfs", "--volfile-server="+t.spec.Server, "--volfile-id="+t.spec.Volume,
		"--log-file="+filepath.Join(tmp, "client.log"), mnt)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("mounting volume %s from %s: %w: %s%s", t.spec.Volume, t.spec.Server, err, out, logTail(tmp))
	}
	defer func() {
		if out, uerr := exec.Command("umount", mnt).CombinedOutput(); uerr != nil {
			err = errors.Join(err, fmt.Errorf("unmounting %s: %w: %s", mnt, uerr, out))
		}
	}()
	// The client answers before the volume's graph is up: the root's
	// attributes come from the bricks.
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, serr := os.Stat(filepath.Join(mnt, netfs.GraphFile))
		if _, rerr := os.ReadDir(mnt); rerr == nil && serr == nil {
			break
		} else if time.Now().After(deadline) {
			return fmt.Errorf("volume %s from %s: the mount did not come up: %w%s", t.spec.Volume, t.spec.Server, errors.Join(rerr, serr), logTail(tmp))
		}
		time.Sleep(100 * time.Millisecond)
	}
	return f(mnt)
}

// removeMountDir removes withMount's directory without ever reaching into
// the volume: it removes the client's log, and the mount point only with
// rmdir, which fails while anything is mounted on it (a recursive removal
// would delete the volume's files through a mount still up). A mount that
// failed can leave the client's FUSE mount up for a moment: the client
// mounts before it has the volume's graph, and its auto-unmount helper
// takes the mount down only after the client has exited. So while the
// mount point is busy it is unmounted (it is ours) and rmdir tried again,
// for at most wait; a mount still up then stays, named in the error.
func removeMountDir(tmp, mnt string, wait time.Duration) error {
	if err := os.Remove(filepath.Join(tmp, "client.log")); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	deadline := time.Now().Add(wait)
	for {
		err := os.Remove(mnt)
		if err == nil || errors.Is(err, fs.ErrNotExist) {
			break
		}
		if !errors.Is(err, syscall.EBUSY) || time.Now().After(deadline) {
			return fmt.Errorf("removing the mount point %s: %w", mnt, err)
		}
		_ = exec.Command("umount", mnt).Run() // "not mounted" once the helper has been
		time.Sleep(100 * time.Millisecond)
	}
	return os.Remove(tmp)
}

func logTail(dir string) string {
	b, err := os.ReadFile(filepath.Join(dir, "client.log"))
	if err != nil || len(b) == 0 {
		return ""
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return "; client log: " + strings.Join(lines[max(0, len(lines)-3):], " | ")
}
