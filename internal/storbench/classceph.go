package storbench

import (
	"context"
	"fmt"
	"time"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/execx"
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
	// OSD is the OSD to hold down; -1 picks one acting for the pool.
	OSD int
	// Hold is how long it stays down; 0 is 15 s.
	Hold time.Duration
}

// cephWhere says where the ceph CLI runs, for the plan and the report.
func cephWhere(conf string) string {
	if conf != "" {
		return "on this host (--conf " + conf + ")"
	}
	return "on this host (CEPH_CONF, else /etc/ceph/ceph.conf)"
}

// CephFailure turns the request into the check's options, or nil when it
// is not asked for.
func CephFailure(req CephFailureRequest) *classcheck.CephFailure {
	if !req.Enabled {
		return nil
	}
	return &classcheck.CephFailure{Ceph: ceph.Client{Cmder: execx.Local{}, Conf: req.Conf}, Where: cephWhere(req.Conf), OSD: req.OSD, Hold: req.Hold}
}

// cleanupCephHolds lets back the OSDs killed runs recorded as held down in
// Ceph's config-key store (the ceph-osd-failure check), through the ceph
// CLI on this host; with DryRun it only names them.
func cleanupCephHolds(ctx context.Context, req KubeCleanupRequest, rep *result.KubeCleanup) {
	c := ceph.Client{Cmder: execx.Local{}, Conf: req.CephConf}
	held, err := c.FindHeldDown(ctx, req.RunID)
	if err != nil {
		rep.Notes = append(rep.Notes, fmt.Sprintf("could not look for OSDs storbench runs held down (ceph CLI %s): %v", cephWhere(req.CephConf), err))
		return
	}
	for _, h := range held {
		if youngerThanRun(h.RunID, req.OlderThan) {
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
