package classcheck

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/field"
	"github.com/storbench/storbench/internal/kubekit"
)

// CheckCephOSDFailure is the Ceph-specific failure check: one OSD held
// down under a writer, then let back.
const CheckCephOSDFailure = "ceph-osd-failure"

// CephFailure asks for the Ceph OSD failure check on a class backed by
// Ceph: opt-in, it holds one OSD down through Ceph's own API (`ceph osd
// add-noup`, `ceph osd down`) while a writer runs on a volume of the
// class, then lets it back (`ceph osd rm-noup`). No node is touched.
type CephFailure struct {
	// Ceph runs the ceph CLI (on this host with its configuration, or in
	// Rook's toolbox); Where says which, for the plan and the report.
	Ceph  ceph.Client
	Where string
	// Toolbox, when set, is the namespace of Rook's toolbox whose ceph
	// CLI the check uses in place of Ceph's (kubekit.RookToolbox): found
	// before the check, when the cluster is reached.
	Toolbox string
	// OSD is the OSD to hold down; -1 lets storbench pick one acting for
	// the class's pool (the highest-numbered).
	OSD int
	// Hold is how long the OSD stays down once Ceph marked it down; 0
	// means 15 s.
	Hold time.Duration
	// Recovery bounds the wait for every PG to be active+clean again
	// after the OSD is back; 0 means 3 minutes.
	Recovery time.Duration
	// Stop, when set, takes the OSD out the harsher way with the user's
	// command (StopCommand: kill or freeze its process, cut its node's
	// link), which Ceph must notice by itself (a killed process at once,
	// a frozen one after the heartbeat grace); Start (StartCommand), then
	// required, brings it back. Both nil: held down through Ceph's API.
	Stop, Start               func(ctx context.Context, osd int) error
	StopCommand, StartCommand string
}

// FieldCephFailureOSD is the option a refusal of the OSD names.
const (
	FieldCephFailureOSD     field.Name = "CephFailure.OSD"
	FieldCephFailureStart   field.Name = "CephFailure.StartCommand"
	FieldCephFailureConf    field.Name = "CephFailure.Conf"
	FieldCephFailureToolbox field.Name = "CephFailure.Toolbox"
)

func (cf *CephFailure) defaults() {
	if cf.Hold <= 0 {
		cf.Hold = 15 * time.Second
	}
	if cf.Recovery <= 0 {
		cf.Recovery = 3 * time.Minute
	}
}

// cephTarget is what the preflight found: the class's pool and the OSD
// the check holds down.
type cephTarget struct {
	pool ceph.Pool
	osd  int
}

// cephState is what the check reads of Ceph before acting.
type cephState struct {
	osds   ceph.OSDMap
	pgs    ceph.PGStat
	health ceph.Health
}

func readCephState(ctx context.Context, c ceph.Client) (cephState, error) {
	var s cephState
	var err error
	if s.osds, err = c.OSDMap(ctx); err != nil {
		return s, err
	}
	if s.pgs, err = c.PGStat(ctx); err != nil {
		return s, err
	}
	s.health, err = c.Health(ctx)
	return s, err
}

// cephRefusal says why holding osd down now would be unsafe, or nil:
// the pool must keep at least min_size copies with one OSD gone (or its
// PGs stop taking I/O), and Ceph must be whole before (every OSD up and
// in, no noup set, every PG active+clean, no OSD or PG health check).
func cephRefusal(pool ceph.Pool, acting []int, osd int, s cephState) error {
	switch {
	case pool.Size < 2:
		return fmt.Errorf("pool %s keeps %d copy: with an OSD down its data would be unavailable", pool.Name, pool.Size)
	case pool.Size-1 < pool.MinSize:
		return fmt.Errorf("pool %s keeps %d copies with min_size %d: with an OSD down its PGs would stop taking I/O", pool.Name, pool.Size, pool.MinSize)
	case !slices.Contains(acting, osd):
		return fmt.Errorf("%s osd.%d does not act for pool %s (its OSDs: %v)", FieldCephFailureOSD, osd, pool.Name, acting)
	}
	for _, flag := range []string{"noup", "nodown", "noout", "pauserd", "pausewr"} {
		if slices.Contains(strings.Split(s.osds.Flags, ","), flag) {
			return fmt.Errorf("Ceph has the cluster flag %s set: someone is working on it", flag)
		}
	}
	for _, o := range s.osds.OSDs {
		switch {
		case !o.Up || !o.In:
			return fmt.Errorf("osd.%d is already %s: Ceph is degraded before the check", o.ID, upIn(o))
		case o.NoUp():
			return fmt.Errorf("osd.%d already carries the noup flag: another run or an operator holds it (a killed run's: storbench cleanup --k8s --ceph)", o.ID)
		}
	}
	if !s.pgs.Clean() {
		return fmt.Errorf("not every PG is active+clean (%s): Ceph is not whole before the check", s.pgs)
	}
	if s.health.Status == "HEALTH_ERR" {
		return fmt.Errorf("Ceph reports HEALTH_ERR (%s)", strings.Join(s.health.Checks, "; "))
	}
	for _, c := range s.health.Checks {
		if strings.HasPrefix(c, "OSD_") || strings.HasPrefix(c, "PG_") {
			return fmt.Errorf("Ceph reports %s: it is not whole before the check", c)
		}
	}
	return nil
}

// withOSD is a user's command as it runs for osd ({osd} replaced).
func withOSD(command string, osd int) string {
	return strings.ReplaceAll(command, "{osd}", strconv.Itoa(osd))
}

func upIn(o ceph.OSDState) string {
	var s []string
	if !o.Up {
		s = append(s, "down")
	}
	if !o.In {
		s = append(s, "out")
	}
	return strings.Join(s, " and ")
}

// checkCephFailure is the preflight: the class must be backed by Ceph
// (ceph-csi's parameters or storbench's annotations), the OSD act for its
// pool, and holding it down be safe now (cephRefusal). It sets r.cephAt.
func (r *run) checkCephFailure(ctx context.Context) error {
	cf := r.o.CephFailure
	if cf == nil || !r.wants(CheckCephOSDFailure) {
		return nil
	}
	cf.defaults()
	if cf.Stop != nil && cf.Start == nil {
		return &RefusedError{field.Errorf("the %s check stops the OSD with your command, and needs one that starts it again: set %s", CheckCephOSDFailure, FieldCephFailureStart)}
	}
	if cf.Toolbox != "" {
		if cf.Ceph.Conf != "" {
			return &RefusedError{field.Errorf("the ceph CLI on this host (%s) or Rook's toolbox's (%s), not both", FieldCephFailureConf, FieldCephFailureToolbox)}
		}
		cmder, err := kubekit.RookToolbox(ctx, r.c, cf.Toolbox)
		if err != nil {
			return &RefusedError{fmt.Errorf("the %s check's ceph CLI: %w", CheckCephOSDFailure, err)}
		}
		cf.Ceph = ceph.Client{Cmder: cmder}
		cf.Where = "in Rook's toolbox pod " + cmder.Namespace + "/" + cmder.Pod
	}
	sc, err := r.c.Client.StorageV1().StorageClasses().Get(ctx, r.o.Class, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("reading StorageClass %s: %w", r.o.Class, err)
	}
	poolName, err := kubekit.CephClassPool(ctx, sc, cf.Ceph.FSDataPool)
	if err != nil {
		return &RefusedError{fmt.Errorf("the Ceph pool of class %s (ceph CLI %s): %w", r.o.Class, cf.Where, err)}
	}
	if poolName == "" {
		return &RefusedError{fmt.Errorf("class %s is not backed by Ceph as far as storbench can tell (no ceph-csi provisioner, no %s or %s annotation): the %s check needs one",
			r.o.Class, kubekit.AnnotationCephPool, kubekit.AnnotationCephFS, CheckCephOSDFailure)}
	}
	pl, err := cf.Ceph.PoolPlacement(ctx, poolName)
	if err != nil {
		return &RefusedError{fmt.Errorf("reading pool %s from Ceph (ceph CLI %s): %w", poolName, cf.Where, err)}
	}
	osd := cf.OSD
	if osd < 0 && len(pl.OSDs) > 0 {
		osd = pl.OSDs[len(pl.OSDs)-1]
	}
	s, err := readCephState(ctx, cf.Ceph)
	if err != nil {
		return &RefusedError{fmt.Errorf("reading Ceph's state (ceph CLI %s): %w", cf.Where, err)}
	}
	if err := cephRefusal(pl.Pool, pl.OSDs, osd, s); err != nil {
		return &RefusedError{fmt.Errorf("the %s check is refused: %w", CheckCephOSDFailure, err)}
	}
	r.cephAt = &cephTarget{pool: pl.Pool, osd: osd}
	return nil
}

// cephPlan is the plan's sentence for the check.
func (r *run) cephPlan() string {
	cf, t := r.o.CephFailure, r.cephAt
	if cf == nil || t == nil || !r.wants(CheckCephOSDFailure) {
		return ""
	}
	key := ceph.HeldDown{OSD: t.osd, RunID: r.runID}.Key()
	if cf.Stop != nil {
		return fmt.Sprintf("; the %s check STOPS osd.%d for %s (of pool %s, size %d, min_size %d) while a writer runs on a volume of the class: "+
			"%q, then %q, on this host; Ceph read through the ceph CLI %s; recorded first in Ceph's config-key %s "+
			"(if storbench is killed, start the OSD with your command: storbench cleanup --k8s --ceph names it)",
			CheckCephOSDFailure, t.osd, cf.Hold, t.pool.Name, t.pool.Size, t.pool.MinSize, withOSD(cf.StopCommand, t.osd), withOSD(cf.StartCommand, t.osd), cf.Where, key)
	}
	return fmt.Sprintf("; the %s check HOLDS osd.%d DOWN for %s (of pool %s, size %d, min_size %d) while a writer runs on a volume of the class: "+
		"ceph osd add-noup osd.%d; ceph osd down osd.%d, then ceph osd rm-noup osd.%d, through the ceph CLI %s; recorded first in Ceph's config-key %s "+
		"(storbench cleanup --k8s --ceph lets it back if storbench is killed)",
		CheckCephOSDFailure, t.osd, cf.Hold, t.pool.Name, t.pool.Size, t.pool.MinSize, t.osd, t.osd, t.osd, cf.Where, key)
}

// releaseHeld lets back every OSD this run holds down; what fails is
// returned, with the command that finishes it.
func (r *run) releaseHeld(ctx context.Context) []string {
	var errs []string
	cf := r.o.CephFailure
	for _, h := range slices.Clone(r.cephHeld) {
		if h.StoppedWith != "" {
			if err := cf.Start(ctx, h.OSD); err != nil {
				errs = append(errs, fmt.Sprintf("starting osd.%d with %q: %v (start it yourself, then: ceph config-key rm %s)", h.OSD, cf.StartCommand, err, h.Key()))
				continue
			}
		}
		if err := cf.Ceph.Release(ctx, h); err != nil {
			errs = append(errs, fmt.Sprintf("%v (ceph osd rm-noup osd.%d; ceph config-key rm %s)", err, h.OSD, h.Key()))
			continue
		}
		r.cephHeld = slices.DeleteFunc(r.cephHeld, func(x ceph.HeldDown) bool { return x == h })
	}
	return errs
}

// cephLeftovers names the OSDs earlier runs recorded as held down.
func (r *run) cephLeftovers(ctx context.Context) []string {
	cf := r.o.CephFailure
	if cf == nil {
		return nil
	}
	held, err := cf.Ceph.FindHeldDown(ctx, "")
	if err != nil {
		return []string{"could not look for OSDs earlier runs held down: " + err.Error()}
	}
	var out []string
	for _, h := range held {
		if h.RunID != r.runID {
			out = append(out, fmt.Sprintf("found %s: left by a run killed outright, or one still in progress (storbench cleanup --k8s --ceph --run %s lets it back)", h, h.RunID))
		}
	}
	return out
}

// WaitCephWhole waits until every OSD is up and every PG active+clean (an
// OSD let back by a cleanup boots, then recovers) and returns when.
func WaitCephWhole(ctx context.Context, c ceph.Client, timeout time.Duration) (time.Time, error) {
	deadline := time.Now().Add(timeout)
	for {
		m, err := c.OSDMap(ctx)
		if err != nil {
			return time.Time{}, err
		}
		down := slices.IndexFunc(m.OSDs, func(o ceph.OSDState) bool { return !o.Up })
		if down < 0 {
			return waitClean(ctx, c, time.Until(deadline))
		}
		if time.Now().After(deadline) {
			return time.Time{}, fmt.Errorf("osd.%d not up within %s", m.OSDs[down].ID, timeout)
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
