package classcheck

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/storbench/storbench/internal/kubekit"
)

// persistence writes, deletes the pod, starts another on the claim and
// reads the data back.
func (r *run) persistence(ctx context.Context) Check {
	start := time.Now()
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	defer func() { r.release(ctx, []*volume{v}) }()
	if err != nil {
		return failed(start, err)
	}
	t0 := time.Now()
	if _, err := r.deletePod(ctx, v.pod); err != nil {
		return failed(start, err)
	}
	v.pod = r.name("pod")
	if _, err := r.createPod(ctx, podSpec{name: v.pod, claim: v.claim}); err != nil {
		return failed(start, err)
	}
	if _, err := r.podRunning(ctx, v.pod, v.claim); err != nil {
		return failed(start, r.explain(err, v.pod))
	}
	if err := r.verify(ctx, v.pod, "first", v.data); err != nil {
		return failed(start, err)
	}
	return Check{Outcome: Works, Took: time.Since(t0), Reason: "pod deleted and started again; data read back by sha256"}
}

// snapshot takes a snapshot, writes after it, restores it to a larger
// claim and checks the restore holds the data before the snapshot and
// not the data after it.
func (r *run) snapshot(ctx context.Context) Check {
	start := time.Now()
	switch {
	case !r.decl.SnapshotAPI:
		return Check{Outcome: NotSupportedDeclared, Reason: "the snapshot API (snapshot.storage.k8s.io/v1) is not installed"}
	case len(r.decl.SnapshotClasses) == 0 && r.o.SnapshotClass == "":
		return Check{Outcome: NotSupportedDeclared, Reason: "no VolumeSnapshotClass for " + r.decl.Provisioner}
	}
	classes, err := kubekit.SnapshotClasses(ctx, r.c.Client)
	if err != nil {
		return failed(start, err)
	}
	class, classWhy, err := kubekit.ChooseSnapshotClass(classes, r.decl.Provisioner, r.o.SnapshotClass)
	if err != nil {
		return Check{Outcome: Skipped, Reason: err.Error(), Took: time.Since(start)}
	}
	r.progress("%s: snapshot: with %s", r.o.Class, classWhy)
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	vols := []*volume{v}
	defer func() { r.release(ctx, vols) }()
	if err != nil {
		return failed(start, err)
	}
	snap := r.name("snap")
	t0 := time.Now()
	if err := r.createSnapshot(ctx, snap, class, v.claim); err != nil {
		return failed(start, err)
	}
	ready, err := r.snapshotReady(ctx, snap)
	if err != nil {
		return failed(start, err)
	}
	after, err := newPayload(64 << 10)
	if err == nil {
		err = r.writeFile(ctx, v.pod, "after-snapshot", after)
	}
	if err != nil {
		return failed(start, err)
	}
	srcCap := r.capacity(ctx, v.claim)
	srcFS, err := r.filesystemBytes(ctx, v.pod)
	if err != nil {
		return failed(start, err)
	}
	larger := 2 * srcCap
	api := "snapshot.storage.k8s.io"
	rv, err := r.startVolumeNoWrite(ctx, claimSpec{size: larger, source: &corev1.TypedLocalObjectReference{APIGroup: &api, Kind: "VolumeSnapshot", Name: snap}})
	vols = append(vols, rv)
	if err != nil {
		return failed(start, err)
	}
	if err := r.verify(ctx, rv.pod, "first", v.data); err != nil {
		return failed(start, fmt.Errorf("restore: %w", err))
	}
	if sum, err := r.fileSum(ctx, rv.pod, "after-snapshot"); err != nil || sum != "" {
		return failed(start, errors.Join(err, errors.New("restore holds data written after the snapshot was taken: not a point in time")))
	}
	fs, err := r.filesystemBytes(ctx, rv.pod)
	if err == nil {
		err = grownEnough(srcCap, srcFS, larger, fs)
	}
	if err != nil {
		return failed(start, fmt.Errorf("restore to a larger size: %w", err))
	}
	return Check{Outcome: Works, Took: time.Since(t0), Stages: []Stage{
		{Name: "snapshot-ready", Samples: []time.Duration{ready.Sub(t0)}},
		{Name: "restore-running", Samples: []time.Duration{rv.running.Sub(rv.created)}},
	}, Reason: "point in time; restored to a larger size; " + classWhy}
}

// capacity is a bound claim's capacity (drivers round requests up: the
// test driver's xfs volumes are at least 300 MiB), at least the request.
func (r *run) capacity(ctx context.Context, claim string) int64 {
	pvc, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.ns).Get(ctx, claim, metav1.GetOptions{})
	if err != nil {
		return r.o.Size
	}
	q, ok := pvc.Status.Capacity[corev1.ResourceStorage]
	if !ok || q.Value() < r.o.Size {
		return r.o.Size
	}
	return q.Value()
}

// startVolumeNoWrite is startVolume for a claim that must come with data
// (a clone, a restore): nothing is written.
func (r *run) startVolumeNoWrite(ctx context.Context, c claimSpec) (*volume, error) {
	if c.name == "" {
		c.name = r.name("pvc")
	}
	if c.size == 0 {
		c.size = r.o.Size
	}
	v := &volume{claim: c.name, pod: r.name("pod")}
	var err error
	if v.created, err = r.createClaim(ctx, claimSpec{name: c.name, size: c.size, mode: c.mode, source: c.source}); err != nil {
		return nil, err
	}
	if _, err = r.createPod(ctx, podSpec{name: v.pod, claim: v.claim}); err != nil {
		return v, err
	}
	if v.running, err = r.podRunning(ctx, v.pod, v.claim); err != nil {
		return v, r.explain(err, v.claim, v.pod)
	}
	return v, nil
}

// clone creates a claim from another and checks it holds the source's
// data and is independent of it.
func (r *run) clone(ctx context.Context) Check {
	start := time.Now()
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	vols := []*volume{v}
	defer func() { r.release(ctx, vols) }()
	if err != nil {
		return failed(start, err)
	}
	t0 := time.Now()
	cv, err := r.startVolumeNoWrite(ctx, claimSpec{source: &corev1.TypedLocalObjectReference{Kind: "PersistentVolumeClaim", Name: v.claim}})
	vols = append(vols, cv)
	if err != nil {
		// Kubernetes declares no clone capability: a refusal is measured.
		return unsupportedOrFailed(start, err, false)
	}
	took := time.Since(t0)
	sum, err := r.fileSum(ctx, cv.pod, "first")
	switch {
	case err != nil:
		return failed(start, err)
	case sum == "":
		return Check{Outcome: NotSupportedMeasured, Reason: "the clone came up empty: the provisioner ignored its data source", Took: took}
	case sum != v.data.sum:
		return failed(start, errors.New("the clone's data differs from its source's"))
	}
	p, err := newPayload(64 << 10)
	if err == nil {
		err = r.writeFile(ctx, cv.pod, "clone-only", p)
	}
	if err != nil {
		return failed(start, err)
	}
	if s, err := r.fileSum(ctx, v.pod, "clone-only"); err != nil || s != "" {
		return failed(start, errors.Join(err, errors.New("a write to the clone appeared in its source: not independent")))
	}
	return Check{Outcome: Works, Took: took, Reason: "data equal by sha256; a write to the clone is absent from the source"}
}

// expansion grows a claim, with its pod running (online) or stopped
// (offline), and times the controller's resize (the PV's capacity) apart
// from the node's (the claim's status capacity), then checks df sees the
// new size and the data survived.
func (r *run) expansion(ctx context.Context, online bool) Check {
	start := time.Now()
	if !r.decl.Expansion {
		return Check{Outcome: NotSupportedDeclared, Reason: "the class does not set allowVolumeExpansion"}
	}
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{})
	defer func() { r.release(ctx, []*volume{v}) }()
	if err != nil {
		return failed(start, err)
	}
	before := r.capacity(ctx, v.claim)
	beforeFS, err := r.filesystemBytes(ctx, v.pod)
	if err != nil {
		return failed(start, err)
	}
	if !online {
		if _, err := r.deletePod(ctx, v.pod); err != nil {
			return failed(start, err)
		}
	}
	larger := 2 * before
	patch := fmt.Sprintf(`{"spec":{"resources":{"requests":{"storage":%q}}}}`, resource.NewQuantity(larger, resource.BinarySI).String())
	t0 := time.Now()
	if _, err := r.c.Client.CoreV1().PersistentVolumeClaims(r.ns).Patch(ctx, v.claim, types.MergePatchType, []byte(patch), metav1.PatchOptions{}); err != nil {
		return failed(start, fmt.Errorf("resizing claim %s: %w", v.claim, err))
	}
	pv := r.tl.volumeOf(v.claim)
	capacity := fmt.Sprintf("capacity:%d", larger)
	giveUp := func() error {
		if e := refused(r.tl.eventsOf(v.claim)); e != "" {
			return &refusal{what: "claim " + v.claim, reason: e}
		}
		return nil
	}
	ctrl, err := r.tl.wait(ctx, waitSpec{key: key("pv", pv), milestone: capacity, timeout: r.o.Timeout, giveUp: giveUp})
	if err != nil {
		return failed(start, r.explain(fmt.Errorf("controller resize: %w", err), v.claim))
	}
	if !online {
		v.pod = r.name("pod")
		if _, err := r.createPod(ctx, podSpec{name: v.pod, claim: v.claim}); err != nil {
			return failed(start, err)
		}
		if _, err := r.podRunning(ctx, v.pod, v.claim); err != nil {
			return failed(start, r.explain(err, v.pod, v.claim))
		}
	}
	node, err := r.tl.wait(ctx, waitSpec{key: key("pvc", v.claim), milestone: capacity, timeout: r.o.Timeout, giveUp: giveUp})
	if err != nil {
		return failed(start, r.explain(fmt.Errorf("node resize: %w", err), v.claim, v.pod))
	}
	fs, err := r.filesystemBytes(ctx, v.pod)
	if err != nil {
		return failed(start, err)
	}
	if err := grownEnough(before, beforeFS, larger, fs); err != nil {
		return failed(start, err)
	}
	if err := r.verify(ctx, v.pod, "first", v.data); err != nil {
		return failed(start, err)
	}
	return Check{Outcome: Works, Took: node.Sub(t0), Stages: []Stage{
		{Name: "controller-resize", Samples: []time.Duration{ctrl.Sub(t0)}},
		{Name: "node-resize", Samples: []time.Duration{node.Sub(t0)}},
	}, Reason: fmt.Sprintf("df sees %d MiB", fs>>20)}
}

// block writes and reads back a raw block volume.
func (r *run) block(ctx context.Context) Check {
	start := time.Now()
	v, err := r.startVolume(ctx, claimSpec{block: true}, podSpec{})
	defer func() { r.release(ctx, []*volume{v}) }()
	if err != nil {
		return unsupportedOrFailed(start, err, false)
	}
	p, err := newPayload(1 << 20)
	if err != nil {
		return failed(start, err)
	}
	dev := kubekit.BlockDevicePath
	if err := r.writeTo(ctx, v.pod, dev, p); err != nil {
		return failed(start, err)
	}
	out, err := r.exec(ctx, v.pod, nil, "sh", "-c", "dd if="+dev+" bs=65536 count=16 2>/dev/null | sha256sum")
	if err != nil {
		return failed(start, err)
	}
	if f := strings.Fields(out); len(f) == 0 || f[0] != p.sum {
		return failed(start, errors.New("the block device read back differs from what was written"))
	}
	return Check{Outcome: Works, Took: v.running.Sub(v.created), Reason: "1 MiB written to the device and read back by sha256"}
}

// nonRoot writes as uid 1000 with fsGroup 1000.
func (r *run) nonRoot(ctx context.Context) Check {
	start := time.Now()
	d := r.decl.CSIDriver
	if d != nil && d.FSGroupPolicy == "None" {
		return Check{Outcome: NotSupportedDeclared, Reason: "the CSIDriver's fsGroupPolicy is None: volumes keep their owner"}
	}
	declared := d != nil
	v, err := r.startVolume(ctx, claimSpec{}, podSpec{nonRoot: true})
	defer func() { r.release(ctx, []*volume{v}) }()
	if err != nil {
		if v != nil && !v.running.IsZero() && strings.Contains(err.Error(), "ermission denied") {
			err = fmt.Errorf("uid 1000 with fsGroup 1000 cannot write: %w", err)
			if !declared {
				return Check{Outcome: NotSupportedMeasured, Reason: err.Error(), Took: time.Since(start)}
			}
		}
		return failed(start, err)
	}
	return Check{Outcome: Works, Took: v.written.Sub(v.created), Reason: "uid 1000, fsGroup 1000"}
}

// everyNode mounts and writes a volume on each schedulable node, up to
// everyNodeAtOnce nodes at a time: the check takes about as long as one
// node's volume, not the sum of them.
func (r *run) everyNode(ctx context.Context) Check {
	start := time.Now()
	if len(r.nodes) == 0 {
		return Check{Outcome: Skipped, Reason: "no schedulable node"}
	}
	errs := make([]error, len(r.nodes))
	took := make([]time.Duration, len(r.nodes))
	slots := make(chan struct{}, everyNodeAtOnce)
	var wg sync.WaitGroup
	for i, n := range r.nodes {
		c, p := claimSpec{name: r.name("pvc")}, podSpec{name: r.name("pod"), node: n}
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			v, err := r.startVolume(ctx, c, p)
			if err == nil {
				err = r.verify(ctx, v.pod, "first", v.data)
			}
			r.release(ctx, []*volume{v})
			if errs[i] = err; err == nil {
				took[i] = v.written.Sub(v.created)
			}
		}()
	}
	wg.Wait()
	var bad []string
	var times []time.Duration
	for i, n := range r.nodes {
		if errs[i] != nil {
			bad = append(bad, n+": "+errs[i].Error())
			continue
		}
		times = append(times, took[i])
	}
	if len(bad) > 0 {
		return failed(start, fmt.Errorf("%d of %d nodes cannot mount and write: %s", len(bad), len(r.nodes), strings.Join(bad, "; ")))
	}
	return Check{Outcome: Works, Took: time.Since(start), Stages: []Stage{{Name: "first-write", Samples: times}},
		Reason: fmt.Sprintf("%d nodes: %s", len(r.nodes), strings.Join(r.nodes, ", "))}
}

// everyNodeAtOnce bounds the volumes the every-node check has at a time.
const everyNodeAtOnce = 8

// readWriteMany writes on one node and times until another node reads it.
func (r *run) readWriteMany(ctx context.Context) Check {
	start := time.Now()
	if len(r.nodes) < 2 {
		return Check{Outcome: Skipped, Reason: "needs two schedulable nodes"}
	}
	a, err := r.startVolume(ctx, claimSpec{mode: corev1.ReadWriteMany}, podSpec{node: r.nodes[0]})
	vols := []*volume{a}
	defer func() { r.release(ctx, vols) }()
	if err != nil {
		return unsupportedOrFailed(start, err, false)
	}
	b := &volume{claim: a.claim, pod: r.name("pod")}
	vols = append(vols, b)
	if _, err := r.createPod(ctx, podSpec{name: b.pod, claim: a.claim, node: r.nodes[1]}); err != nil {
		return failed(start, err)
	}
	if _, err := r.podRunning(ctx, b.pod, ""); err != nil {
		return failed(start, r.explain(err, b.pod))
	}
	p, err := newPayload(64 << 10)
	if err == nil {
		err = r.writeFile(ctx, a.pod, "shared", p)
	}
	if err != nil {
		return failed(start, err)
	}
	t0 := time.Now()
	for {
		if sum, err := r.fileSum(ctx, b.pod, "shared"); err == nil && sum == p.sum {
			return Check{Outcome: Works, Took: time.Since(t0), Reason: "written on " + r.nodes[0] + ", read on " + r.nodes[1]}
		}
		if time.Since(t0) > r.o.Timeout || ctx.Err() != nil {
			return failed(start, fmt.Errorf("a write on %s was not visible on %s within %s", r.nodes[0], r.nodes[1], r.o.Timeout))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// MinFilesystemGrowth is the share of a volume's growth its filesystem
// must show in df for the growth to count. df never shows a whole volume:
// xfs leaves out its internal log (64 MiB from 300 MiB on, which does not
// grow), ext4 its inode tables and bitmaps (about 1.6% of what it adds).
// So the rule compares growth with growth: with the volume at before bytes
// showing beforeFS in df, and then at after bytes, df must show at least
// beforeFS + 90% of (after - before). A filesystem that was not grown shows
// about beforeFS and fails.
const MinFilesystemGrowth = 0.9

// grownEnough applies MinFilesystemGrowth.
func grownEnough(before, beforeFS, after, afterFS int64) error {
	want := beforeFS + int64(MinFilesystemGrowth*float64(after-before))
	if afterFS >= want {
		return nil
	}
	return fmt.Errorf("the volume grew from %d to %d MiB but df went from %d to %d MiB (at least %d MiB expected: %.0f%% of the growth)",
		before>>20, after>>20, beforeFS>>20, afterFS>>20, want>>20, 100*MinFilesystemGrowth)
}
