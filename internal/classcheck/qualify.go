package classcheck

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/storbench/storbench/internal/ceph"
	"github.com/storbench/storbench/internal/kubekit"
	"github.com/storbench/storbench/internal/result"
)

// Options say what to qualify and how much.
type Options struct {
	Class   string
	Profile Profile
	// Claims is how many claims provisioning creates at once; 0 means 3
	// for the quick profile and 20 for the full one.
	Claims int
	// Size is each claim's size in bytes; 0 means 64 MiB.
	Size       int64
	Image      string
	PullPolicy corev1.PullPolicy
	// Timeout bounds each wait (a claim binding, a pod running, a snapshot
	// becoming ready); 0 means 2 minutes.
	Timeout time.Duration
	// RunID labels every object; required.
	RunID string
	// Only, when set, runs just these checks (and cleanup); the others are
	// skipped.
	Only []string
	// NodeFailure, when set, runs the failover after a node failure
	// (opt-in: it stops a node).
	NodeFailure *NodeFailure
	// CephFailure, when set, runs the Ceph OSD failure check (opt-in: it
	// holds an OSD of the class's pool down).
	CephFailure *CephFailure
	// NoCordon skips the graceful failover check, the one check of the
	// default profile that changes a node (it cordons one).
	NoCordon bool
	// SnapshotClass is the VolumeSnapshotClass to use; "" is the driver's
	// default (never a class whose parameters make backups).
	SnapshotClass string
	// PodOverrides is the user's strategic-merge patch (JSON) for every
	// pod a check makes, as for runs' pods.
	PodOverrides []byte
	// Progress hears each check as it starts and ends. May be nil.
	Progress func(message string)
	// AppBinary is the storbench binary copied into the app-fit check's
	// pods (linux/amd64 like them); empty: this process's executable.
	AppBinary string
}

// MinClaimsForP95 is the fewest samples a p95 is given for.
const MinClaimsForP95 = 20

func (o *Options) defaults() {
	if o.Profile == "" {
		o.Profile = Quick
	}
	if o.Claims <= 0 {
		o.Claims = 3
		if o.Profile == Full {
			o.Claims = MinClaimsForP95
		}
	}
	if o.Size <= 0 {
		o.Size = 64 << 20
	}
	if o.Image == "" {
		o.Image = kubekit.DefaultImage
	}
	if o.PullPolicy == "" {
		o.PullPolicy = corev1.PullIfNotPresent
	}
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Minute
	}
}

// run is one qualification in progress.
type run struct {
	c         *kubekit.Cluster
	ns        string
	runID     string
	o         Options
	decl      Declared
	tl        *timeline
	hostnames map[string]string
	// nodes are the schedulable, Ready nodes, sorted.
	nodes []string
	// controlPlane are the usable nodes labelled control-plane: the
	// node-failure check stops one only when the user names it.
	controlPlane []string
	// claims and snapshots are the names this run created: what it
	// finds of a PV or VolumeSnapshotContent is matched by them, never by
	// a name prefix another run could share.
	claims, snapshots map[string]bool
	// cordoned are nodes this run cordoned; cleanup uncordons them.
	cordoned []string
	// stopped are nodes the node-failure check stopped and has not
	// brought back; tainted carry its out-of-service taint. Cleanup
	// restores both.
	stopped, tainted []string
	// cephAt is the Ceph OSD failure check's pool and OSD (preflight);
	// cephHeld the OSDs it holds down now. Cleanup lets them back.
	cephAt   *cephTarget
	cephHeld []ceph.HeldDown
	// notes are for the user (a node left for them to start).
	notes []string
	// apps are the app-fit check's results (round result.RoundApp).
	apps []result.Result
	// releasing counts the checks' volume deletions under way (release).
	releasing sync.WaitGroup
	mu        sync.Mutex
	seq       int
}

// prefix starts the name of every object this run creates: the whole run
// ID, so that two runs (the same day, the same class) never share a name.
func (r *run) prefix() string {
	return "sbq-" + strings.ToLower(r.runID) + "-"
}

// name returns a fresh object name for this run; safe for concurrent use.
func (r *run) name(what string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	return fmt.Sprintf("%s%s-%d", r.prefix(), what, r.seq)
}

func (r *run) progress(format string, a ...any) {
	if r.o.Progress != nil {
		r.o.Progress(fmt.Sprintf(format, a...))
	}
}

// Qualify measures the class. It always cleans up, with a context of its
// own when ctx was cancelled, and reports what it could not remove in
// Report.Leaks. The error is for a qualification that could not start (no
// such class, no namespace); checks that fail are in the report.
func Qualify(ctx context.Context, c *kubekit.Cluster, o Options) (*Report, error) {
	o.defaults()
	if o.RunID == "" {
		return nil, errors.New("classcheck: a run ID is required")
	}
	rep := &Report{RunID: o.RunID, Class: o.Class, Profile: o.Profile, Started: time.Now()}
	decl, err := ReadDeclared(ctx, c.Client, o.Class)
	if err != nil {
		return nil, err
	}
	rep.Declared = decl
	ns, err := c.EnsureNamespace(ctx)
	if err != nil {
		return nil, err
	}
	r := &run{c: c, ns: ns, runID: o.RunID, o: o, decl: decl, claims: map[string]bool{}, snapshots: map[string]bool{}}
	if err := r.readNodes(ctx); err != nil {
		return nil, err
	}
	if err := r.checkNodeFailure(ctx); err != nil {
		return nil, err
	}
	if err := r.checkCephFailure(ctx); err != nil {
		return nil, err
	}
	rep.Notes = append(rep.Notes, r.earlierLeftovers(ctx)...)
	r.progress("%s", r.plan())
	tl, err := startTimeline(ctx, c.Client, ns, o.RunID)
	if err != nil {
		return nil, err
	}
	r.tl = tl
	defer tl.stop()
	defer func() {
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 3*time.Minute)
		defer cancel()
		start := time.Now()
		r.settle()
		leaks, notes := r.cleanup(cctx)
		rep.Leaks, rep.Notes = leaks, append(append(rep.Notes, r.notes...), notes...)
		ch := Check{Name: CheckCleanup, Outcome: Works, Took: time.Since(start)}
		if len(leaks) > 0 {
			ch.Outcome, ch.Reason = Failed, fmt.Sprintf("%d objects left behind", len(leaks))
		}
		rep.Checks = append(rep.Checks, ch)
		rep.Finished = time.Now()
	}()

	// settles: the check starts once every earlier check's volumes are
	// gone (release): it times a failure or measures, and a deletion
	// under way would share the node, the attacher or the disk with it.
	checks := []struct {
		name          string
		full, settles bool
		fn            func(context.Context) Check
	}{
		{CheckProvisioning, false, false, r.provisioning},
		{CheckPersistence, false, false, r.persistence},
		{CheckSnapshot, false, false, r.snapshot},
		{CheckClone, false, false, r.clone},
		{CheckExpansionOnline, false, false, func(ctx context.Context) Check { return r.expansion(ctx, true) }},
		{CheckExpansionOffline, true, false, func(ctx context.Context) Check { return r.expansion(ctx, false) }},
		{CheckBlock, true, false, r.block},
		{CheckNonRoot, true, false, r.nonRoot},
		{CheckEveryNode, true, false, r.everyNode},
		{CheckFailover, false, true, r.failover},
		{CheckNodeFailure, false, true, r.nodeFailure},
		{CheckCephOSDFailure, false, true, r.cephFailure},
		{CheckReadWriteMany, true, false, r.readWriteMany},
		{CheckAppFit, true, true, r.appFit},
	}
	for _, ch := range checks {
		if ctx.Err() != nil {
			rep.Checks = append(rep.Checks, Check{Name: ch.name, Outcome: Skipped, Reason: "interrupted"})
			continue
		}
		if len(o.Only) > 0 && !slices.Contains(o.Only, ch.name) {
			rep.Checks = append(rep.Checks, Check{Name: ch.name, Outcome: Skipped, Reason: "not asked for"})
			continue
		}
		if ch.full && o.Profile != Full && len(o.Only) == 0 {
			rep.Checks = append(rep.Checks, Check{Name: ch.name, Outcome: Skipped, Reason: "full profile only"})
			continue
		}
		if ch.settles {
			r.settle()
		}
		r.progress("%s: %s ...", o.Class, ch.name)
		res := ch.fn(ctx)
		res.Name = ch.name
		if ctx.Err() != nil && res.Outcome != Works {
			res.Outcome, res.Reason = Skipped, "interrupted"
		}
		r.progress("%s: %s: %s after %s %s", o.Class, ch.name, res.Outcome, res.Took.Round(time.Millisecond), res.Reason)
		rep.Checks = append(rep.Checks, res)
	}
	rep.Apps = r.apps
	return rep, nil
}

// readNodes lists the nodes a check may use: Ready, schedulable, without
// NoSchedule or NoExecute taints, and not kwok's fake nodes.
func (r *run) readNodes(ctx context.Context) error {
	list, err := r.c.Client.CoreV1().Nodes().List(ctx, metav1.ListOptions{})
	if err != nil {
		return fmt.Errorf("listing nodes: %w", err)
	}
	r.hostnames = map[string]string{}
	for _, n := range list.Items {
		if h := n.Labels[corev1.LabelHostname]; h != "" {
			r.hostnames[n.Name] = h
		}
		if n.Spec.Unschedulable || !kubekit.NodeReady(n) || kubekit.FakeNode(n) {
			continue
		}
		if kubekit.ControlPlane(n) {
			r.controlPlane = append(r.controlPlane, n.Name)
		}
		tainted := false
		for _, t := range n.Spec.Taints {
			if t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute {
				tainted = true
			}
		}
		if !tainted {
			r.nodes = append(r.nodes, n.Name)
		}
	}
	return nil
}

// since returns each stamp's distance from start, in order.
func since(start time.Time, stamps ...time.Time) []time.Duration {
	out := make([]time.Duration, len(stamps))
	for i, s := range stamps {
		out[i] = s.Sub(start)
	}
	return out
}

// failed is a Failed check that took from start until now.
func failed(start time.Time, err error) Check {
	return Check{Outcome: Failed, Reason: err.Error(), Took: time.Since(start)}
}

// unsupportedOrFailed is the answer for an error of a capability: a
// refusal of one the class does not declare is "not supported (measured)";
// everything else fails.
func unsupportedOrFailed(start time.Time, err error, declared bool) Check {
	var ref *refusal
	if !declared && errors.As(err, &ref) {
		return Check{Outcome: NotSupportedMeasured, Reason: ref.reason, Took: time.Since(start)}
	}
	return failed(start, err)
}
