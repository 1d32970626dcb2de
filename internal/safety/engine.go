package safety

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/storbench/storbench/internal/fio"
)

// Engine targets are data fio reaches through an I/O engine of its own
// rather than a file or device where it runs: a Ceph RBD image
// (ioengine=rbd) or files in a GlusterFS volume (ioengine=gfapi,
// gfapi_async). They are judged as block devices are: a job may write one
// only when this run created it (JobCheck.Owned) or the user named it
// exactly (Policy.Destructive), and never while its kind reports it in use
// (JobCheck.Engines). Their names, in results, Owned and --destructive:
//
//	rbd:POOL/IMAGE      an RBD image
//	gluster:VOLUME      a whole GlusterFS volume
//	gluster:VOLUME/DIR  a directory in it, everything below included
//
// The cluster is the one the target's configuration reaches (CEPH_CONF,
// the volume's brick): names do not tell clusters apart.
const (
	EngineRBD     = "rbd"
	EngineGluster = "gluster"
)

// engineSchemes maps the remote engines storbench judges to the scheme of
// their targets' names.
var engineSchemes = map[string]string{"rbd": EngineRBD, "gfapi": EngineGluster, "gfapi_async": EngineGluster}

// IsEngineTarget reports whether name is an engine target's name
// (rbd:..., gluster:...) rather than a path.
func IsEngineTarget(name string) bool {
	scheme, rest, ok := strings.Cut(name, ":")
	return ok && rest != "" && (scheme == EngineRBD || scheme == EngineGluster)
}

// EngineFacts reads whether an engine target is in use, as Facts reads a
// block device: an RBD image with watchers (mapped or open elsewhere).
type EngineFacts interface {
	// InUse returns what shows the target at name (rbd:POOL/IMAGE,
	// gluster:VOLUME) holds or serves data for someone else; none when
	// nothing does. An error means it could not be read, and callers must
	// refuse to write.
	InUse(ctx context.Context, name string) ([]string, error)
}

// EngineTouch is the target an engine job reaches: Target is what
// --destructive names (rbd:POOL/IMAGE, gluster:VOLUME), Path the exact
// image or file (gluster:VOLUME/DIR/FILE).
type EngineTouch struct {
	Target string
	Path   string
}

// engineTouches lists the images or volume files a remote engine's job
// reaches, or refuses a job that does not name them plainly.
func engineTouches(j FioJob, scheme string) ([]EngineTouch, error) {
	o := j.Options
	refuse := func(opt, msg string) error {
		return &JobRefusal{Job: j.Name, Option: opt, Value: o[opt], Msg: msg}
	}
	if _, ok := o["opendir"]; ok {
		return nil, refuse("opendir", "adds every file under a directory; storbench judges engine targets by name")
	}
	if scheme == EngineRBD {
		pool, image := strings.TrimSpace(o["pool"]), strings.TrimSpace(o["rbdname"])
		switch {
		case pool == "":
			return nil, refuse("pool", "the rbd engine's job names no pool: storbench judges only an image named by pool and rbdname")
		case image == "":
			return nil, refuse("rbdname", "the rbd engine's job names no image: storbench judges only an image named by pool and rbdname")
		case strings.ContainsAny(pool+image, "/@:"):
			return nil, refuse("rbdname", "pool and image names hold no '/', '@' or ':'")
		}
		name := EngineRBD + ":" + pool + "/" + image
		return []EngineTouch{{Target: name, Path: name}}, nil
	}
	volume := strings.TrimSpace(o["volume"])
	if volume == "" || strings.ContainsAny(volume, "/:") {
		return nil, refuse("volume", "the gfapi engine's job names no volume storbench can judge")
	}
	dirs := []string{""}
	if d, ok := o["directory"]; ok && d != "" {
		dirs = fio.SplitList(d)
	}
	var names []string
	if v, ok := o["filename"]; ok && v != "" {
		names = fio.SplitList(v)
	} else {
		format, ok := o["filename_format"]
		if !ok || format == "" {
			format = "$jobname.$jobnum.$filenum"
		}
		names = []string{strings.NewReplacer("$jobname", jobName(j), "$jobnum", "0", "$filenum", "0", "$clientuid", "0").Replace(format)}
	}
	target := EngineGluster + ":" + volume
	var out []EngineTouch
	for _, d := range dirs {
		for _, n := range names {
			// Inside the volume, as gfapi resolves it from the volume's
			// root: ".." stops there.
			p := path.Clean("/" + d + "/" + n)
			if p == "/" {
				return nil, refuse("filename", "names the volume's root, not a file")
			}
			out = append(out, EngineTouch{Target: target, Path: target + p})
		}
	}
	return out, nil
}

// ownsEngine reports whether owned (a name in JobCheck.Owned or
// Policy.Destructive) covers the engine path p: the same name, or a
// volume or directory above it.
func ownsEngine(owned, p string) bool {
	return owned == p || strings.HasPrefix(p, strings.TrimRight(owned, "/")+"/")
}

// judgeEngineWrites refuses what the jobs would do to engine targets
// storbench did not create: writes (and, for Gluster, reads, since fio
// lays out the files it reads) need --destructive naming the image, the
// volume or a directory above every file, and are refused even then while
// the kind reports the target in use.
func (c JobCheck) judgeEngineWrites(ctx context.Context, reach engineReach) error {
	for _, t := range reach.targets {
		ws := reach.writers[t]
		what := fmt.Sprintf("workloads %s write to %s", strings.Join(ws, ", "), t)
		if !reach.writes[t] {
			what = fmt.Sprintf("workloads %s read %s, where fio lays out the files it reads,", strings.Join(ws, ", "), t)
		}
		if c.Engines != nil {
			reasons, err := c.Engines.InUse(ctx, t)
			if err != nil {
				return &Refusal{Device: t, Writers: ws, Rule: RuleUnknown, Msg: what + ", which storbench cannot read: " + err.Error()}
			}
			if len(reasons) > 0 {
				return &Refusal{Device: t, Writers: ws, Rule: RuleInUse, Reasons: reasons, Msg: what + ", which storbench refuses even with --destructive"}
			}
		}
		for _, p := range reach.paths[t] {
			if !c.Policy.namesEngine(p) {
				return &Refusal{Device: t, Writers: ws, Rule: RuleNotNamed, Msg: what + " and would destroy its contents: pass --destructive " + t + " to allow it, or choose a read-only suite"}
			}
		}
	}
	return nil
}

// engineReach collects, per engine target storbench did not create, the
// jobs that would change it and the exact paths they reach.
type engineReach struct {
	targets []string
	writers map[string][]string
	paths   map[string][]string
	writes  map[string]bool
}

func (r *engineReach) add(t Touch, scheme string) {
	if !t.Writes && scheme != EngineGluster {
		return // reading an image changes nothing
	}
	if r.writers == nil {
		r.writers, r.paths, r.writes = map[string][]string{}, map[string][]string{}, map[string]bool{}
	}
	if _, seen := r.writers[t.Engine]; !seen {
		r.targets = append(r.targets, t.Engine)
	}
	r.writers[t.Engine] = appendOnce(r.writers[t.Engine], t.Job)
	r.paths[t.Engine] = appendOnce(r.paths[t.Engine], t.Path)
	r.writes[t.Engine] = r.writes[t.Engine] || t.Writes
}

// namesEngine reports whether --destructive names the engine path p: an
// image exactly (a pool is not a name for all its images), a volume or a
// directory above the file.
func (p Policy) namesEngine(path string) bool {
	for _, d := range p.Destructive {
		switch {
		case d == path:
			return true
		case strings.HasPrefix(d, EngineGluster+":") && ownsEngine(d, path):
			return true
		}
	}
	return false
}
