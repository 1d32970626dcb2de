package storbench

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/execx"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// CephFailureRequest asks classes --measure for the Ceph OSD failure check
// on a class backed by Ceph: one OSD held down through Ceph's own API
// while a writer runs, then let back. The ceph CLI runs on this host with
// its configuration (Conf, else CEPH_CONF, else /etc/ceph/ceph.conf).
type CephFailureRequest struct {
	// Enabled opts in.
	Enabled bool
	// Conf is the ceph.conf path; "" is the CLI's default.
	Conf string
	// Toolbox, when set, is the namespace of Rook's toolbox whose ceph
	// CLI is used instead of this host's (kubekit.RookToolbox).
	Toolbox string
	// OSD is the OSD to hold down; -1 picks one acting for the pool.
	OSD int
	// Hold is how long it stays down; 0 is 15 s.
	Hold time.Duration
	// StopCommand, when set, takes the OSD out the harsher way: run with
	// sh -c on this host ({osd} is its number), it kills or freezes the
	// OSD or cuts its link, and StartCommand (required with it) brings
	// it back.
	StopCommand, StartCommand string
}

// cephWhere says where the ceph CLI runs, for the plan and the report.
func cephWhere(conf string) string {
	if conf != "" {
		return "on this host (--conf " + conf + ")"
	}
	return "on this host (CEPH_CONF, else /etc/ceph/ceph.conf)"
}

// Validate refuses, before any cluster is reached, what the check could
// not do as asked: a ceph CLI named two ways, a stop command with no start
// command, or the check's options without the check.
func (req CephFailureRequest) Validate() error {
	if !req.Enabled {
		for _, o := range []struct {
			f   Field
			set bool
		}{{FieldCephFailureConf, req.Conf != ""}, {FieldCephFailureToolbox, req.Toolbox != ""},
			{FieldCephFailureStop, req.StopCommand != ""}, {FieldCephFailureStart, req.StartCommand != ""}} {
			if o.set {
				return badRequest("%s applies to the Ceph OSD failure check: set %s too, or leave it out", o.f, FieldCephFailureEnabled)
			}
		}
		return nil
	}
	if req.Conf != "" && req.Toolbox != "" {
		return badRequest("the ceph CLI on this host (%s) or Rook's toolbox's (%s), not both", FieldCephFailureConf, FieldCephFailureToolbox)
	}
	if req.StopCommand != "" && req.StartCommand == "" {
		return badRequest("%s takes the OSD out with your command, and needs one that starts it again: set %s", FieldCephFailureStop, FieldCephFailureStart)
	}
	return nil
}

// CephFailure turns the request into the check's options, or nil when it
// is not asked for.
func CephFailure(req CephFailureRequest) *classcheck.CephFailure {
	if !req.Enabled {
		return nil
	}
	cf := &classcheck.CephFailure{Ceph: ceph.Client{Cmder: execx.Local{}, Conf: req.Conf}, Where: cephWhere(req.Conf), Toolbox: req.Toolbox,
		OSD: req.OSD, Hold: req.Hold, StopCommand: req.StopCommand, StartCommand: req.StartCommand}
	if req.StopCommand != "" {
		cf.Stop = osdCommand(req.StopCommand)
	}
	if req.StartCommand != "" {
		cf.Start = osdCommand(req.StartCommand)
	}
	return cf
}

// osdCommand runs the user's command on this host with {osd} replaced by
// the OSD's number; its output is in the error when it fails.
func osdCommand(command string) func(ctx context.Context, osd int) error {
	return func(ctx context.Context, osd int) error {
		var out bytes.Buffer
		cmd := strings.ReplaceAll(command, "{osd}", strconv.Itoa(osd))
		if err := (execx.Local{}).Command(ctx, "sh", "-c", cmd).SetStdout(&out).SetStderr(&out).Run(); err != nil {
			return fmt.Errorf("%s: %w: %s", cmd, err, strings.TrimSpace(out.String()))
		}
		return nil
	}
}

// cleanupCephHolds lets back the OSDs killed runs recorded as held down in
// Ceph's config-key store (the ceph-osd-failure check), through the ceph
// CLI on this host; with DryRun it only names them.
func cleanupCephHolds(ctx context.Context, req KubeCleanupRequest, rep *result.KubeCleanup) {
	c, where := ceph.Client{Cmder: execx.Local{}, Conf: req.CephConf}, cephWhere(req.CephConf)
	if req.CephToolbox != "" {
		cmder, err := rookToolbox(ctx, req.Cluster, req.CephToolbox)
		if err != nil {
			rep.Notes = append(rep.Notes, fmt.Sprintf("could not look for OSDs storbench runs held down: %v", err))
			return
		}
		c, where = ceph.Client{Cmder: cmder}, "in Rook's toolbox pod "+cmder.Namespace+"/"+cmder.Pod
	}
	held, err := c.FindHeldDown(ctx, req.RunID)
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("could not look for OSDs storbench runs held down (ceph CLI %s): %v", where, err))
		return
	}
	for _, h := range held {
		if youngerThanRun(h.RunID, req.OlderThan) {
			continue
		}
		if h.StoppedWith != "" { // never a command read from Ceph
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s: start it with your start command, then: ceph config-key rm %s", h, h.Key()))
			continue
		}
		if req.DryRun {
			rep.Notes = append(rep.Notes, "would let back "+h.String())
			continue
		}
		if err := c.Release(ctx, h); err != nil {
			rep.Failed = append(rep.Failed, result.KubeFailure{KubeObject: result.KubeObject{Kind: "ceph-osd", Name: fmt.Sprintf("osd.%d", h.OSD), RunID: h.RunID}, Error: err.Error()})
			continue
		}
		rep.Notes = append(rep.Notes, "let back "+h.String()+" (ceph osd rm-noup)")
	}
}

// youngerThanRun reports whether run started less than d ago (its ID
// begins with its start time): a live run's hold, left alone.
func youngerThanRun(runID string, d time.Duration) bool {
	if d <= 0 || len(runID) < 15 {
		return false
	}
	t, err := time.Parse("20060102-150405", runID[:15])
	return err == nil && time.Since(t) < d
}

// rookToolbox is the ceph CLI in Rook's toolbox in namespace ns of the
// cluster opts reaches.
func rookToolbox(ctx context.Context, opts kubekit.ConnectOptions, ns string) (*kubekit.PodCmder, error) {
	c, err := kubekit.Connect(opts)
	if err != nil {
		return nil, err
	}
	return kubekit.RookToolbox(ctx, c, ns)
}
