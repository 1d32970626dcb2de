package classcheck

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/storbench/storbench/internal/kubekit"
)

// Provisioning stage names: each is the time from the claim's creation
// (sent to the API server) until the milestone was first seen; detached is
// from the pod's deletion until the volume's VolumeAttachment on its node
// was gone (drivers that attach), pv-gone from the claim's deletion, once
// detached, until its PV was.
const (
	StageBound    = "bound"
	StageAttached = "attached"
	StageMounted  = "mounted"
	StageRunning  = "running"
	StageWritten  = "first-write"
	StageDetached = "detached"
	StagePVGone   = "pv-gone"
)

// volume is a claim with a pod using it.
type volume struct {
	claim, pod string
	created    time.Time // the claim's creation was sent
	running    time.Time
	written    time.Time
	data       payload
}

// startVolume creates a claim and a pod on it, waits for the pod to run and
// writes a file of known checksum, fsynced.
func (r *run) startVolume(ctx context.Context, c claimSpec, p podSpec) (*volume, error) {
	if c.name == "" {
		c.name = r.name("pvc")
	}
	if c.size == 0 {
		c.size = r.o.Size
	}
	p.claim, p.block = c.name, c.block
	if p.name == "" {
		p.name = r.name("pod")
	}
	v := &volume{claim: c.name, pod: p.name}
	var err error
	if v.created, err = r.createClaim(ctx, c); err != nil {
		return nil, err
	}
	if _, err = r.createPod(ctx, p); err != nil {
		return v, err
	}
	if v.running, err = r.podRunning(ctx, v.pod, v.claim); err != nil {
		return v, r.explain(err, v.claim, v.pod)
	}
	if c.block {
		return v, nil
	}
	if v.data, err = newPayload(1 << 20); err != nil {
		return v, err
	}
	if err = r.writeFile(ctx, v.pod, "first", v.data); err != nil {
		return v, err
	}
	v.written = time.Now()
	return v, nil
}

// provisioning creates the profile's claims at once, each with a pod, and
// times every stage from storbench's own watches; then deletes them and
// times until their PVs are gone.
func (r *run) provisioning(ctx context.Context) Check {
	start := time.Now()
	n := r.o.Claims
	vols := make([]*volume, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		c, p := claimSpec{name: r.name("prov")}, podSpec{name: r.name("prov")}
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			vols[i], errs[i] = r.startVolume(ctx, c, p)
		}(i)
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		r.deleteVolumes(ctx, vols)
		return failed(start, err)
	}
	ch := Check{Outcome: Works}
	stages := map[string][]time.Duration{}
	for _, v := range vols {
		if err := r.verify(ctx, v.pod, "first", v.data); err != nil {
			r.deleteVolumes(ctx, vols)
			return failed(start, err)
		}
		pv := r.tl.volumeOf(v.claim)
		add := func(stage, k, ms string) {
			if ts, ok := r.tl.at(k, ms); ok {
				stages[stage] = append(stages[stage], ts.Sub(v.created))
			}
		}
		add(StageBound, key("pvc", v.claim), msBound)
		if r.decl.CSIDriver != nil && r.decl.CSIDriver.AttachRequired {
			add(StageAttached, key("pv", pv), msAttached)
		}
		add(StageMounted, key("pod", v.pod), msMounted)
		stages[StageRunning] = append(stages[StageRunning], v.running.Sub(v.created))
		stages[StageWritten] = append(stages[StageWritten], v.written.Sub(v.created))
	}
	gone, err := r.deleteVolumes(ctx, vols)
	if err != nil {
		return failed(start, err)
	}
	stages[StageDetached], stages[StagePVGone] = gone.detached, gone.pvGone
	for _, s := range []string{StageBound, StageAttached, StageMounted, StageRunning, StageWritten, StageDetached, StagePVGone} {
		if len(stages[s]) > 0 {
			ch.Stages = append(ch.Stages, Stage{Name: s, Samples: stages[s]})
		}
	}
	if r.decl.CSIDriver != nil && r.decl.CSIDriver.AttachRequired && len(stages[StageAttached]) < n {
		ch.Reason = fmt.Sprintf("the driver requires attachment but %d of %d VolumeAttachments were seen attached", len(stages[StageAttached]), n)
	}
	ch.Took = percentile(stages[StageWritten], 0.5)
	return ch
}

// release deletes a check's volumes (deleteVolumes) in the background,
// so that the next check starts while they go: their pods' deletion,
// the detach and the PV's deletion took 7-15 s a check, a third of a
// full profile's wall time. What it cannot delete, the run's cleanup
// finds and reports. settle waits for every release under way: the
// checks that time a failure or measure (settles in Qualify's table)
// and the cleanup run with nothing of an earlier check still going.
func (r *run) release(ctx context.Context, vols []*volume) {
	r.releasing.Add(1)
	go func() {
		defer r.releasing.Done()
		r.deleteVolumes(ctx, vols)
	}()
}

// settle waits until every release under way is done.
func (r *run) settle() { r.releasing.Wait() }

// deleted is what deleteVolumes timed: each attached volume's time from
// its pods' deletion until it was detached, and each claim's from its
// deletion until its PV was gone (Delete reclaim policy only).
type deleted struct{ detached, pvGone []time.Duration }

// deleteVolumes deletes the pods, all at once, and waits until they are
// gone; then each claim once its pods are gone and its volume is detached
// from every node (at most kubekit.DetachWait, as cleanup --k8s waits: a
// driver refuses to delete a volume still attached, as the test CSI driver
// and Ceph's do, and the provisioner's retries back off to tens of
// seconds), and waits until its
// PV is gone; the claims all at once. A claim whose pod could not be
// deleted is kept.
func (r *run) deleteVolumes(ctx context.Context, vols []*volume) (deleted, error) {
	var mu sync.Mutex
	var d deleted
	var errs []error
	fail := func(err error) {
		mu.Lock()
		errs = append(errs, err)
		mu.Unlock()
	}
	// a claim's pods: when the last one's deletion began, and whether
	// every one is gone
	type claimPods struct {
		deleted time.Time
		gone    bool
	}
	claims := map[string]*claimPods{}
	var order []string
	for _, v := range vols {
		if v != nil && v.claim != "" && claims[v.claim] == nil { // a prober pod has no claim
			claims[v.claim] = &claimPods{gone: true}
			order = append(order, v.claim)
		}
	}
	var wg sync.WaitGroup
	for _, v := range vols {
		if v == nil {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			at, err := r.deletePod(ctx, v.pod)
			if err != nil {
				fail(err)
			}
			mu.Lock()
			defer mu.Unlock()
			if c := claims[v.claim]; c != nil {
				c.gone = c.gone && err == nil
				if at.After(c.deleted) {
					c.deleted = at
				}
			}
		}()
	}
	wg.Wait()
	for _, name := range order {
		if c := claims[name]; c.gone {
			wg.Add(1)
			go func() {
				defer wg.Done()
				if at, ok := r.tl.waitDetached(ctx, r.tl.volumeOf(name), kubekit.DetachWait); ok && at.After(c.deleted) {
					mu.Lock()
					d.detached = append(d.detached, at.Sub(c.deleted))
					mu.Unlock()
				}
				s, g, err := r.deleteClaim(ctx, name)
				if err != nil {
					fail(err)
					return
				}
				if !g.IsZero() {
					mu.Lock()
					d.pvGone = append(d.pvGone, g.Sub(s))
					mu.Unlock()
				}
			}()
		}
	}
	wg.Wait()
	return d, errors.Join(errs...)
}
