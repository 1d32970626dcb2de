package storbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/classcheck"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/proc"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/version"
)

// MeasureClassRequest asks for a StorageClass's qualification: provisioning,
// failover and the other checks, measured on the cluster.
type MeasureClassRequest struct {
	Cluster kubekit.ConnectOptions
	Class   string
	// Profile is "quick" (default) or "full".
	Profile string
	// Claims is how many claims provisioning creates; 0 is the profile's.
	Claims     int
	Image      string
	PullPolicy string
	// PodOverrides is a YAML/JSON strategic-merge patch file applied to
	// every check pod, as run's --pod-overrides.
	PodOverrides string
	// SnapshotClass is the VolumeSnapshotClass for the snapshot check; ""
	// is the driver's default (never a backup class).
	SnapshotClass string
	// NoCordon skips the graceful failover check, which cordons a node.
	NoCordon bool
	// WaitTimeout bounds each wait; 0 is two minutes.
	WaitTimeout time.Duration
	Labels      map[string]string
	// NodeFailure, when its StopCommand is set, adds the failover after
	// a node failure (opt-in: it stops a node with the user's command).
	NodeFailure NodeFailureRequest
	// CephFailure, when Enabled, adds the Ceph OSD failure check.
	CephFailure CephFailureRequest
	// Progress hears each check as it starts and ends; may be nil.
	Progress func(message string)
}

// ClassMeasurement is a stored qualification: the report as measured and
// the view of it as stored.
type ClassMeasurement struct {
	Report *classcheck.Report
	View   *analysis.ClassQualification
}

// MeasureClass qualifies a class and stores it as a run of round
// result.RoundClass. The run is stored even when checks fail; it is
// "failed" when one did, "interrupted" when ctx was cancelled. Whatever
// was created on the cluster is removed before it returns (leaks are in
// the report and in the cleanup check).
func MeasureClass(ctx context.Context, st store.Recorder, req MeasureClassRequest) (*ClassMeasurement, error) {
	if req.Class == "" {
		return nil, badRequest("%s needs a StorageClass name", FieldClass)
	}
	prof := classcheck.Profile(req.Profile)
	if prof == "" {
		prof = classcheck.Quick
	}
	if prof != classcheck.Quick && prof != classcheck.Full {
		return nil, badRequest("%s %q: want quick or full", FieldProfile, req.Profile)
	}
	var nf *classcheck.NodeFailure
	if req.NodeFailure.StopCommand != "" {
		var err error
		if nf, err = NodeFailure(req.NodeFailure); err != nil {
			return nil, err
		}
	}
	var overrides []byte
	if req.PodOverrides != "" {
		var err error
		if overrides, err = kubekit.LoadPodOverrides(req.PodOverrides); err != nil {
			return nil, refuse(err)
		}
	}
	switch corev1.PullPolicy(req.PullPolicy) {
	case "", corev1.PullAlways, corev1.PullIfNotPresent, corev1.PullNever:
	default:
		return nil, refusef("%s %q: choose Always, IfNotPresent or Never", FieldPullPolicy, req.PullPolicy)
	}
	if err := req.CephFailure.Validate(); err != nil {
		return nil, err
	}
	c, err := kubekit.Connect(req.Cluster)
	if err != nil {
		return nil, &RequestError{err}
	}
	now := time.Now()
	run := &result.Run{ID: result.NewRunID(now, uint16(rand.UintN(1<<16))), Suite: "class-" + string(prof),
		Targets: []string{classcheck.TargetName(req.Class)}, Status: result.StatusRunning, Started: now, Source: "storbench",
		Labels: map[string]string{string(result.LabelStorbenchVersion): version.Version}}
	for k, v := range req.Labels {
		run.Labels[k] = v
	}
	if p, err := (proc.Reader{}).Self(); err == nil {
		run.Process = &p
	}
	rep, err := classcheck.Qualify(ctx, c, classcheck.Options{Class: req.Class, Profile: prof, Claims: req.Claims,
		Image: kubekit.ImageAlias(req.Image), PullPolicy: corev1.PullPolicy(req.PullPolicy), Timeout: req.WaitTimeout, RunID: run.ID, NodeFailure: nf, CephFailure: CephFailure(req.CephFailure),
		NoCordon: req.NoCordon, SnapshotClass: req.SnapshotClass, PodOverrides: overrides, Progress: req.Progress})
	if err != nil {
		var refused *classcheck.RefusedError
		if strings.Contains(err.Error(), "not found") || errors.As(err, &refused) {
			return nil, &RequestError{err}
		}
		return nil, fmt.Errorf("qualifying %s on %s: %w", req.Class, c.Host, err)
	}
	sctx := context.WithoutCancel(ctx)
	if err := st.CreateRun(sctx, run); err != nil {
		return nil, err
	}
	results := rep.Results()
	run.Status = result.StatusComplete
	for i := range results {
		run.Workloads = append(run.Workloads, results[i].Workload)
		if results[i].Status == result.StatusFailed {
			run.Status = result.StatusFailed
		}
		if err := st.AddResult(sctx, &results[i]); err != nil {
			return nil, err
		}
	}
	if ctx.Err() != nil {
		run.Status, run.Note = result.StatusInterrupted, "interrupted: checks not run are skipped; cleanup ran"
	}
	run.Finished = time.Now()
	if err := st.UpdateRun(sctx, run); err != nil {
		return nil, err
	}
	view := analysis.ClassQualifications(results)[req.Class]
	return &ClassMeasurement{Report: rep, View: view}, nil
}

// ClassMeasurementDocument is the measurement as render formats it.
func ClassMeasurementDocument(m *ClassMeasurement) analysis.ClassQualificationDocument {
	leaks := m.Report.Leaks
	if leaks == nil {
		leaks = []string{}
	}
	return analysis.ClassQualificationDocument{Qualification: m.View, PickTwo: analysis.PickTwo(m.View, nil),
		Leaks: leaks, Notes: m.Report.Notes}
}
