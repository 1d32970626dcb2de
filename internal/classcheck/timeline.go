package classcheck

import (
	"context"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/storbench/storbench/internal/kubekit"
)

// Milestones the timeline records, the first time each is seen.
const (
	msBound    = "bound"    // a PVC's phase Bound
	msAttached = "attached" // a PV's VolumeAttachment reports attached (also "attached:NODE")
	msMounted  = "mounted"  // a pod's PodReadyToStartContainers condition (volumes mounted, sandbox up)
	msRunning  = "running"  // a pod's phase Running
	msGone     = "gone"     // the object was deleted
	msFailed   = "failed"   // a pod's phase Failed or Succeeded
)

// timeline watches the run's pods, claims and events in its namespace,
// and every PV and VolumeAttachment, with informers (one list, then a
// watch), and stamps the moment each milestone is first delivered. Stage
// times come from these stamps, never from polling.
type timeline struct {
	mu     sync.Mutex
	seen   map[string]time.Time // "kind/name|milestone"
	pvOf   map[string]string    // claim -> PV
	events map[string][]string  // involved object name -> "Reason: message"
	pods   map[string]*corev1.Pod
	// attachments are the VolumeAttachments that name each PV now, by
	// their name, and detachedAt when the last of them went.
	attachments map[string]map[string]bool
	detachedAt  map[string]time.Time
	changed     chan struct{}
	cancel      context.CancelFunc
	done        sync.WaitGroup
}

func key(kind, name string) string { return kind + "/" + name }

// startTimeline starts the informers and returns once their caches synced.
func startTimeline(ctx context.Context, client kubernetes.Interface, ns, runID string) (*timeline, error) {
	ictx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	t := &timeline{seen: map[string]time.Time{}, pvOf: map[string]string{}, events: map[string][]string{},
		pods: map[string]*corev1.Pod{}, attachments: map[string]map[string]bool{}, detachedAt: map[string]time.Time{},
		changed: make(chan struct{}), cancel: cancel}
	sel := informers.WithTweakListOptions(func(o *metav1.ListOptions) { o.LabelSelector = kubekit.Selector(runID) })
	nsf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns), sel)
	evf := informers.NewSharedInformerFactoryWithOptions(client, 0, informers.WithNamespace(ns))
	all := informers.NewSharedInformerFactoryWithOptions(client, 0)
	handlers := []struct {
		inf cache.SharedIndexInformer
		fn  func(obj any, deleted bool)
	}{
		{nsf.Core().V1().Pods().Informer(), t.pod},
		{nsf.Core().V1().PersistentVolumeClaims().Informer(), t.claim},
		{evf.Core().V1().Events().Informer(), t.event},
		{all.Core().V1().PersistentVolumes().Informer(), t.volume},
		{all.Storage().V1().VolumeAttachments().Informer(), t.attachment},
	}
	var synced []cache.InformerSynced
	for _, h := range handlers {
		fn := h.fn
		_, err := h.inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    func(o any) { fn(o, false) },
			UpdateFunc: func(_, o any) { fn(o, false) },
			DeleteFunc: func(o any) {
				if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
					o = d.Obj
				}
				fn(o, true)
			},
		})
		if err != nil {
			cancel()
			return nil, err
		}
		synced = append(synced, h.inf.HasSynced)
	}
	for _, f := range []informers.SharedInformerFactory{nsf, evf, all} {
		f.Start(ictx.Done())
	}
	if !cache.WaitForCacheSync(ctx.Done(), synced...) {
		t.stop()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("watching pods, claims, volumes and attachments: caches did not sync")
	}
	return t, nil
}

func (t *timeline) stop() { t.cancel() }

// mark stamps a milestone the first time it is seen; later deliveries
// keep the first stamp.
func (t *timeline) markLocked(k, ms string, now time.Time) {
	id := k + "|" + ms
	if _, ok := t.seen[id]; ok {
		return
	}
	t.seen[id] = now
	t.signalLocked()
}

// signalLocked wakes every wait.
func (t *timeline) signalLocked() {
	close(t.changed)
	t.changed = make(chan struct{})
}

func (t *timeline) pod(o any, deleted bool) {
	now := time.Now()
	p, ok := o.(*corev1.Pod)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key("pod", p.Name)
	if deleted {
		delete(t.pods, p.Name)
		t.markLocked(k, msGone, now)
		return
	}
	t.pods[p.Name] = p
	for _, c := range p.Status.Conditions {
		if c.Type == corev1.PodReadyToStartContainers && c.Status == corev1.ConditionTrue {
			t.markLocked(k, msMounted, now)
		}
	}
	switch p.Status.Phase {
	case corev1.PodRunning:
		t.markLocked(k, msRunning, now)
	case corev1.PodFailed, corev1.PodSucceeded:
		t.markLocked(k, msFailed, now)
	}
	if p.Spec.NodeName != "" {
		t.markLocked(k, "node:"+p.Spec.NodeName, now)
	}
}

func (t *timeline) claim(o any, deleted bool) {
	now := time.Now()
	c, ok := o.(*corev1.PersistentVolumeClaim)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key("pvc", c.Name)
	if deleted {
		t.markLocked(k, msGone, now)
		return
	}
	if c.Status.Phase == corev1.ClaimBound {
		t.pvOf[c.Name] = c.Spec.VolumeName
		t.markLocked(k, msBound, now)
	}
	if q, ok := c.Status.Capacity[corev1.ResourceStorage]; ok {
		t.markLocked(k, fmt.Sprintf("capacity:%d", q.Value()), now)
	}
}

func (t *timeline) volume(o any, deleted bool) {
	now := time.Now()
	v, ok := o.(*corev1.PersistentVolume)
	if !ok {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := key("pv", v.Name)
	if deleted {
		t.markLocked(k, msGone, now)
		return
	}
	if q, ok := v.Spec.Capacity[corev1.ResourceStorage]; ok {
		t.markLocked(k, fmt.Sprintf("capacity:%d", q.Value()), now)
	}
}

func (t *timeline) attachment(o any, deleted bool) {
	now := time.Now()
	a, ok := o.(*storagev1.VolumeAttachment)
	if !ok || a.Spec.Source.PersistentVolumeName == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	pv := *a.Spec.Source.PersistentVolumeName
	k := key("pv", pv)
	if deleted {
		if t.attachments[pv][a.Name] {
			delete(t.attachments[pv], a.Name)
			if len(t.attachments[pv]) == 0 {
				t.detachedAt[pv] = now
			}
			t.signalLocked()
		}
		t.markLocked(k, "detached:"+a.Spec.NodeName, now)
		return
	}
	if t.attachments[pv] == nil {
		t.attachments[pv] = map[string]bool{}
	}
	t.attachments[pv][a.Name] = true
	if a.Status.Attached {
		t.markLocked(k, msAttached, now)
		t.markLocked(k, "attached:"+a.Spec.NodeName, now)
	}
}

func (t *timeline) event(o any, deleted bool) {
	e, ok := o.(*corev1.Event)
	if !ok || deleted {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := e.InvolvedObject.Name
	line := e.Reason + ": " + e.Message
	for _, l := range t.events[n] {
		if l == line {
			return
		}
	}
	t.events[n] = append(t.events[n], line)
	t.markLocked(key("event", n), e.Reason, time.Now())
}

// waitDetached waits (at most timeout) until no VolumeAttachment names
// pv, and returns when the last one went; false when pv stayed attached,
// or was never seen attached (nothing to wait for, nothing to time).
func (t *timeline) waitDetached(ctx context.Context, pv string, timeout time.Duration) (time.Time, bool) {
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	for {
		t.mu.Lock()
		n, at, seen := len(t.attachments[pv]), t.detachedAt[pv], t.attachments[pv] != nil
		ch := t.changed
		t.mu.Unlock()
		if !seen {
			return time.Time{}, false
		}
		if n == 0 {
			return at, true
		}
		select {
		case <-ctx.Done():
			return time.Time{}, false
		case <-timer.C:
			return time.Time{}, false
		case <-ch:
		}
	}
}

// at returns when a milestone was first seen.
func (t *timeline) at(k, ms string) (time.Time, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	ts, ok := t.seen[k+"|"+ms]
	return ts, ok
}

// volumeOf returns the PV a claim was bound to.
func (t *timeline) volumeOf(claim string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pvOf[claim]
}

// eventsOf returns the events seen for an object, oldest first.
func (t *timeline) eventsOf(name string) []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]string(nil), t.events[name]...)
}

// latestPod returns the pod as last delivered, or nil.
func (t *timeline) latestPod(name string) *corev1.Pod {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.pods[name]
}

// errGiveUp is returned by a wait's give-up test to end the wait early.
type waitSpec struct {
	key, milestone string
	timeout        time.Duration
	// giveUp, when it returns an error, ends the wait with it (a pod that
	// failed, an event that says the operation is refused). It runs on
	// every milestone seen and, with recheck, that often besides.
	giveUp  func() error
	recheck time.Duration
}

// wait blocks until the milestone is seen and returns its stamp.
func (t *timeline) wait(ctx context.Context, w waitSpec) (time.Time, error) {
	timer := time.NewTimer(w.timeout)
	defer timer.Stop()
	var recheck <-chan time.Time
	if w.recheck > 0 {
		tick := time.NewTicker(w.recheck)
		defer tick.Stop()
		recheck = tick.C
	}
	for {
		t.mu.Lock()
		ts, ok := t.seen[w.key+"|"+w.milestone]
		ch := t.changed
		t.mu.Unlock()
		if ok {
			return ts, nil
		}
		if w.giveUp != nil {
			if err := w.giveUp(); err != nil {
				return time.Time{}, err
			}
		}
		select {
		case <-ctx.Done():
			return time.Time{}, ctx.Err()
		case <-timer.C:
			return time.Time{}, fmt.Errorf("%s not %s within %s", w.key, w.milestone, w.timeout)
		case <-ch:
		case <-recheck:
		}
	}
}
