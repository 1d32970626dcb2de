package storbench

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/storbench/storbench/internal/analysis"
	"github.com/storbench/storbench/internal/engine"
	"github.com/storbench/storbench/internal/result"
	"github.com/storbench/storbench/internal/runner"
	"github.com/storbench/storbench/internal/runner/local"
	"github.com/storbench/storbench/internal/spec"
	"github.com/storbench/storbench/internal/store"
	"github.com/storbench/storbench/internal/units"
)

// QualifyRequest asks for one verdict (analysis.Kinds), on stored runs or
// on targets measured first with the suite the verdict needs.
type QualifyRequest struct {
	For    string
	RunIDs []string
	// Targets are directories or devices on this host to measure first
	// (instead of RunIDs); Suite replaces the verdict's own suite, Labels,
	// Repeat (at least 1) and Destructive shape that run.
	Targets     []string
	Suite       string
	Labels      map[string]string
	Repeat      int
	Destructive []string
	// Observer hears the measuring run's progress; nil hears nothing.
	Observer engine.Observer
	// GroupBy and Baseline shape the comparison judged (general).
	GroupBy  string
	Baseline string
	// Binary is storbench's own binary, whose hidden appfit-probe command
	// runs the clients of --for sqlite; empty: this process's executable.
	Binary string
	// AppDuration is each SQLite mode's commit time per client (sqlite);
	// 0 means 3 s.
	AppDuration time.Duration
	// DeviceSize is the data device's size for ceph-osd block.db advice
	// (4TB, 960GiB); empty reads each target's disk from sysfs when its
	// results come from this host.
	DeviceSize string
}

// Qualification is a verdict and what it judged.
type Qualification struct {
	Verdict *analysis.Verdict
	// Runs are the runs judged.
	Runs []result.Run
	// Measured is the run stored by measuring Targets ("" for stored runs).
	Measured string
	// Failed is why a workload of the measuring run failed: the verdict
	// stands on what finished, but the run did not.
	Failed error
}

// validate checks a request before anything is read or run. Its messages
// name the options as the command line spells them, the words users see.
func (r QualifyRequest) validate() (deviceBytes int64, err error) {
	kinds := strings.Join(analysis.Kinds, ", ")
	switch {
	case r.For == "":
		return 0, badRequest("%s is required: choose one of %s", FieldFor, kinds)
	case !slices.Contains(analysis.Kinds, r.For):
		return 0, badRequest("%s %q: choose one of %s", FieldFor, r.For, kinds)
	case len(r.RunIDs) == 0 && len(r.Targets) == 0:
		return 0, badRequest("name stored runs (%s) or a target to measure (%s)", FieldRunIDs, FieldTargets)
	case len(r.RunIDs) > 0 && len(r.Targets) > 0:
		return 0, badRequest("give %s or %s, not both", FieldRunIDs, FieldTargets)
	case len(r.Targets) == 0 && (len(r.Labels) > 0 || len(r.Destructive) > 0 || r.Suite != "" || r.Repeat != 1):
		return 0, badRequest("%s, %s, %s and %s apply to %s runs only", FieldLabels, FieldRepeat, FieldDestructive, FieldSuite, FieldTargets)
	case r.Repeat < 1:
		return 0, badRequest("%s %d: must be at least 1", FieldRepeat, r.Repeat)
	case r.DeviceSize == "":
		return 0, nil
	}
	sz, err := units.ParseSize(r.DeviceSize)
	if err != nil && strings.Contains(err.Error(), "too large") {
		return 0, badRequest("%s: %w", FieldDeviceSize, err)
	}
	if err != nil || sz <= 0 {
		return 0, badRequest("%s %q: give a size such as 4TB or 960GiB", FieldDeviceSize, r.DeviceSize)
	}
	return int64(sz), nil
}

// Qualify judges the request's runs, or measures its targets, stores the
// run and judges it. Bad requests, unknown suites, targets refused for
// safety, and stored runs lacking the figures a verdict needs are
// RequestErrors. Once a run is stored the Qualification is returned even
// with an error (an interrupted run, a verdict that cannot be made), so
// Measured names it.
func Qualify(ctx context.Context, st store.Store, req QualifyRequest) (*Qualification, error) {
	deviceBytes, err := req.validate()
	if err != nil {
		return nil, err
	}
	if req.For == analysis.ForSQLite {
		return qualifySQLite(ctx, st, req)
	}
	q := &Qualification{}
	ids := req.RunIDs
	if len(req.Targets) > 0 {
		id, err := measure(ctx, st, req)
		if id == "" {
			return nil, err
		}
		q.Measured, q.Failed, ids = id, err, []string{id}
		if errors.Is(err, engine.ErrInterrupted) {
			return q, err
		}
	}
	cmp, err := Compare(ctx, st, CompareRequest{RunIDs: ids, GroupBy: req.GroupBy, Baseline: req.Baseline})
	if err != nil {
		return q, errors.Join(q.Failed, err)
	}
	q.Runs = cmp.Runs
	c := cmp.View.Comparison
	q.Verdict, err = analysis.VerdictFor(req.For, c, analysis.VerdictOptions{DeviceBytes: deviceSizes(c, deviceBytes)})
	var missing *analysis.MissingError
	switch {
	case errors.As(err, &missing) && q.Failed == nil:
		return q, &RequestError{err}
	case err != nil:
		return q, errors.Join(q.Failed, err)
	}
	return q, nil
}

// measure runs the verdict's suite on the targets and returns the stored
// run's ID ("" when nothing was stored).
func measure(ctx context.Context, st store.Store, req QualifyRequest) (string, error) {
	name := req.Suite
	if name == "" {
		name = analysis.Suite(req.For)
	}
	s, err := spec.Resolve(name)
	if err != nil {
		return "", &RequestError{err}
	}
	plan := engine.Plan{Suite: s, Repeat: req.Repeat, Labels: req.Labels, Round: result.RoundIsolated}
	seen := map[string]bool{}
	for _, t := range req.Targets {
		if seen[t] {
			return "", badRequest("%s: %s is given twice", FieldTargets, t)
		}
		seen[t] = true
		plan.Targets = append(plan.Targets, runner.Target(local.NewTarget(t, local.Options{Destructive: req.Destructive})))
	}
	obs := req.Observer
	if obs == nil {
		obs = Silent{}
	}
	eng := &engine.Engine{Store: st, Observer: obs}
	r, err := eng.Run(ctx, plan)
	var refused *engine.RefusedError
	switch {
	case errors.As(err, &refused):
		return "", &RequestError{err}
	case r == nil:
		return "", err
	}
	return r.ID, err
}

// Silent is an engine.Observer that hears nothing: a request's default,
// and what an observer interested in some events only embeds.
type Silent = engine.Silent

// deviceSizes finds each target's device size for block.db advice: the
// size given, or the disk named in the target's labels when the results
// come from this host.
func deviceSizes(c *analysis.Comparison, given int64) map[string]int64 {
	out := map[string]int64{}
	host, _ := os.Hostname()
	for _, e := range c.Environments {
		if given > 0 {
			out[e.Target] = given
			continue
		}
		disk := result.LabelDisk.Of(e.Labels)
		if disk == "" {
			disk = result.LabelDevice.Of(e.Labels)
		}
		if disk == "" || result.LabelHostname.Of(e.Labels) != host || strings.ContainsAny(disk, "/.") {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/sys/class/block", disk, "size"))
		if err != nil {
			continue
		}
		sectors, err := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
		if err == nil && sectors > 0 {
			out[e.Target] = sectors * 512 // sysfs counts 512-byte sectors whatever the device's own
		}
	}
	return out
}
